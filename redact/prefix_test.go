package redact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/rigout/rigout/redact"
)

// TestScrubberPrefixValues: one value is a prefix of another, longer one.
// The stream holds the short value, then each form of the long one, then
// the short one again, and is cut into two writes at every offset and into
// three at every pair of offsets, with the set built in both orders: the
// long value's tail never escapes (the short value complete at the end of
// a write is not masked on its own while it may still be the start of the
// long one), and the output is the one of a single write.
func TestScrubberPrefixValues(t *testing.T) {
	const short = "key-prefix-0042"
	const long = short + `-tail/"9Q7+`
	j, _ := json.Marshal(long)
	b := []byte(long)
	forms := []string{long, hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
		base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b), url.QueryEscape(long),
		url.PathEscape(long), string(j[1 : len(j)-1])}
	for _, order := range [][]string{{short, long}, {long, short}} {
		set, err := redact.New(order...)
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range forms {
			stream := "x " + short + " " + form + " " + short + "y"
			const want = "x *** *** ***y"
			scrub := func(parts ...string) string {
				var out bytes.Buffer
				sc := set.Scrubber(&out)
				for _, p := range parts {
					if n, err := sc.Write([]byte(p)); err != nil || n != len(p) {
						t.Fatalf("Write = %d, %v", n, err)
					}
				}
				if err := sc.Close(); err != nil {
					t.Fatal(err)
				}
				return out.String()
			}
			if got := scrub(stream); got != want {
				t.Fatalf("order %q, form %q, one write: %q, want %q", order[0], form, got, want)
			}
			for i := 0; i <= len(stream); i++ {
				for k := i; k <= len(stream); k++ {
					if got := scrub(stream[:i], stream[i:k], stream[k:]); got != want {
						t.Fatalf("order %q, form %q, cut at %d and %d: %q, want %q", order[0], form, i, k, got, want)
					}
				}
			}
		}
	}
}
