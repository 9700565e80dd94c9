package sessions_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/sessions"
)

// TestTerminalSecrets: locally and over sshd, the session's shell has
// each secret — a long one typed in several lines over SSH, one with
// quotes, backslashes, a newline and bytes outside ASCII — and its output
// never holds one; a short value and a NUL are refused before any shell
// starts.
func TestTerminalSecrets(t *testing.T) {
	long := strings.Repeat("L0ng-v4lue/", 300) // 3300 bytes: several typed lines
	odd := "it's a \"q\" \\ back\nline é\x01\x7f end"
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			m := newManager(t, sessions.Config{})
			o := b.opts(t, "alice")
			o.Secrets = map[string]string{"LONG_K": long, "ODD_K": odd}
			term, err := m.OpenTerminal(context.Background(), "alice", o)
			if err != nil {
				t.Fatal(err)
			}
			defer term.Close()
			r := run(t, term, `printf %s "$LONG_K" | sha256sum | cut -c1-64; printf %s "$ODD_K" | sha256sum | cut -c1-64; env | grep -c _K=`, 10*time.Second)
			if want := sum(long) + "\n" + sum(odd) + "\n2\n"; string(r.Output) != want {
				t.Fatalf("the shell's secrets: %q, want %q", r.Output, want)
			}
			r = run(t, term, `printenv LONG_K; printf '%s\n' "$ODD_K"; declare -p LONG_K`, 10*time.Second)
			if bytes.Contains(r.Output, []byte("L0ng-v4lue/L0ng")) || bytes.Contains(r.Output, []byte("back\nline")) || !bytes.Contains(r.Output, []byte("***")) {
				t.Fatalf("output shows a value: %.300q", r.Output)
			}
			if got := term.Secrets(); len(got) != 2 || got[0] != long || got[1] != odd {
				t.Fatal("Secrets does not return the values, sorted by name")
			}
		})
	}
	m := newManager(t, sessions.Config{})
	for _, bad := range []map[string]string{{"K": "x7q"}, {"K": "with a \x00 NUL byte"}} {
		if _, err := m.OpenTerminal(context.Background(), "alice", sessions.TerminalOptions{Secrets: bad}); err == nil {
			t.Errorf("%q: opened", bad["K"])
		} else if strings.Contains(err.Error(), bad["K"]) {
			t.Errorf("the error shows the value: %v", err)
		}
	}
	if n := len(m.Terminals("alice")); n != 0 {
		t.Fatalf("%d sessions after refusals", n)
	}
}
