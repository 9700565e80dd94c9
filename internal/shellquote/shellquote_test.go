package shellquote_test

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/rigout/rigout/internal/shellquote"
)

func ExampleQuote() {
	fmt.Println(shellquote.Quote("/var/lib/rigout"))
	fmt.Println(shellquote.Quote("/home/me/my state"))
	fmt.Println(shellquote.Quote("it's"))
	fmt.Println(shellquote.Quote(""))
	// Output:
	// /var/lib/rigout
	// '/home/me/my state'
	// 'it'\''s'
	// ''
}

func ExampleJoin() {
	fmt.Println(shellquote.Join([]string{"rigout", "serve", "--config", "a b.json"}))
	// Output: rigout serve --config 'a b.json'
}

// TestQuoteRoundTrip: sh reads each quoted word back as the word itself.
func TestQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("SKIP: no sh on PATH; the round trip through a shell is unchecked")
	}
	words := []string{"", "plain", "a b", "it's", `"double"`, "$HOME", "`id`", "a\nb", "tab\there", "*", "~", "#x", "a;b", `back\slash`, "ünï", "!x", "'", "''"}
	for _, w := range words {
		out, err := exec.Command(sh, "-c", `printf '%s' `+shellquote.Quote(w)).Output()
		if err != nil {
			t.Errorf("Quote(%q) = %s: sh: %v", w, shellquote.Quote(w), err)
			continue
		}
		if string(out) != w {
			t.Errorf("Quote(%q) = %s: sh read it back as %q", w, shellquote.Quote(w), out)
		}
	}
}
