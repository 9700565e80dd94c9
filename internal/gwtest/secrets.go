// Package gwtest holds the test helpers of this module that are not for
// embedders: the forms a secret takes in output, and a credentials store
// of one secret. The gateway harness is the public package rigouttest.
package gwtest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/credentials"
)

// SecretForms returns the forms of value a test scans output for: the
// value, its base64 (whole, and its first 20 characters, which the
// encoding of any text that begins with the value holds, and at the two
// other byte alignments the characters that text holding the value
// anywhere holds), its hex in either case, its URL and JSON string
// encodings, the value reversed, the value interleaved with '-', space,
// ',' or NUL and its hex with spaces, and extra (a distinctive part of
// the value, an escape the test's path produces).
func SecretForms(value string, extra ...string) []string {
	b := []byte(value)
	j, _ := json.Marshal(value)
	b64 := base64.StdEncoding.EncodeToString(b)
	lo := hex.EncodeToString(b)
	forms := []string{value, b64, b64[:min(20, len(b64))], lo, strings.ToUpper(lo),
		url.QueryEscape(value), string(j[1 : len(j)-1])}
	for k := 1; k < 3; k++ {
		// Behind k bytes, the characters from the first whose bits all
		// come from value to the last such one.
		e := base64.RawStdEncoding.EncodeToString(append(make([]byte, k), b...))
		forms = append(forms, e[(8*k+5)/6:8*(k+len(b))/6])
	}
	rev := make([]byte, len(b))
	for i, c := range b {
		rev[len(b)-1-i] = c
	}
	forms = append(forms, string(rev))
	single, pairs := make([]string, len(b)), make([]string, len(b))
	for i, c := range b {
		single[i], pairs[i] = string([]byte{c}), hex.EncodeToString([]byte{c})
	}
	for _, sep := range []string{"-", " ", ",", "\x00"} {
		forms = append(forms, strings.Join(single, sep))
	}
	forms = append(forms, strings.Join(pairs, " "))
	return append(forms, extra...)
}

// Leaked returns the first of forms that text contains, or "".
func Leaked(text string, forms []string) string {
	for _, f := range forms {
		if strings.Contains(text, f) {
			return f
		}
	}
	return ""
}

// SecretStore writes value to an owner-only file in a temporary directory
// of t and returns a credentials store of the aliases that aliases(file)
// declares. It fails the test if the store cannot be made.
func SecretStore(t testing.TB, value string, aliases func(file string) map[string]credentials.Spec) *credentials.Store {
	t.Helper()
	f := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(f, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := credentials.New(credentials.Config{Aliases: aliases(f)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
