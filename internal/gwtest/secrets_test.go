package gwtest_test

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/rigout/rigout/internal/gwtest"
)

func TestSecretForms(t *testing.T) {
	const v = `tok "quoted" & más`
	forms := gwtest.SecretForms(v, "extra-part")
	for _, text := range []string{
		"x " + v + " y",
		base64.StdEncoding.EncodeToString([]byte(v + " and more after it")),
		"hex " + hex.EncodeToString([]byte(v)),
		"HEX " + strings.ToUpper(hex.EncodeToString([]byte(v))),
		"url tok+%22quoted%22+%26+m%C3%A1s",
		`json "tok \"quoted\" \u0026 más"`,
		"has extra-part in it",
	} {
		if gwtest.Leaked(text, forms) == "" {
			t.Errorf("Leaked(%q) found nothing", text)
		}
	}
	if f := gwtest.Leaked("tok quoted mas, 746f6b", forms); f != "" {
		t.Errorf("Leaked found %q in a clean text", f)
	}
}
