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
		base64.StdEncoding.EncodeToString([]byte("x" + v + "y"))[2:],
		base64.StdEncoding.EncodeToString([]byte("xx" + v + "y"))[3:],
		"rev s\xa1\xc3m & \"detouq\" kot",
		"x t-o-k- -\"-q-u-o-t-e-d-\"- -&- -m-\xc3-\xa1-s- y",
		"t,o,k, ,\",q,u,o,t,e,d,\", ,&, ,m,\xc3,\xa1,s",
		"t\x00o\x00k\x00 \x00\"\x00q\x00u\x00o\x00t\x00e\x00d\x00\"\x00 \x00&\x00 \x00m\x00\xc3\x00\xa1\x00s",
		"od 74 6f 6b 20 22 71 75 6f 74 65 64 22 20 26 20 6d c3 a1 73\n",
	} {
		if gwtest.Leaked(text, forms) == "" {
			t.Errorf("Leaked(%q) found nothing", text)
		}
	}
	if f := gwtest.Leaked("tok quoted mas, 746f6b", forms); f != "" {
		t.Errorf("Leaked found %q in a clean text", f)
	}
}
