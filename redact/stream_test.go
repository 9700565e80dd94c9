package redact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/rigout/rigout/redact"
)

// TestScrubberSplitAcrossChunk: a value, and each of its encodings, split
// at every offset across a 64 KiB write boundary never reaches the writer,
// and the text around it does, whole and in order.
func TestScrubberSplitAcrossChunk(t *testing.T) {
	const secret = `hunter2"very-secret/+value`
	set, err := redact.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(secret)
	forms := []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), url.QueryEscape(secret), string(j[1 : len(j)-1])}
	const chunk = 64 << 10
	for _, form := range forms {
		for cut := 1; cut < len(form); cut++ {
			pre := strings.Repeat("a", chunk-cut)
			stream := pre + form + "\ntail"
			var out bytes.Buffer
			sc := set.Scrubber(&out)
			for _, part := range []string{stream[:chunk], stream[chunk:]} {
				if n, err := sc.Write([]byte(part)); err != nil || n != len(part) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := sc.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := out.String(), pre+redact.Mask+"\ntail"; got != want {
				t.Fatalf("form %q cut %d: got ...%q, want ...%q", form, cut, tail(got), tail(want))
			}
		}
	}
}

func tail(s string) string { return s[max(0, len(s)-60):] }

// TestScrubberHoldsOnlyPrefixes: text that cannot start a value is written
// at once, so a prompt without a newline is not delayed.
func TestScrubberHoldsOnlyPrefixes(t *testing.T) {
	set, _ := redact.New("correct-horse-battery")
	var out bytes.Buffer
	sc := set.Scrubber(&out)
	sc.Write([]byte("Password: "))
	if out.String() != "Password: " {
		t.Fatalf("held back %q", "Password: "[out.Len():])
	}
	sc.Write([]byte("xx correct-ho"))
	if out.String() != "Password: xx " {
		t.Fatalf("got %q, want the prefix held", out.String())
	}
	sc.Write([]byte("rse-battery!"))
	sc.Close()
	if out.String() != "Password: xx ***!" {
		t.Fatalf("got %q", out.String())
	}
}

// TestScrubberByteAtATime: one byte per write still masks.
func TestScrubberByteAtATime(t *testing.T) {
	set, _ := redact.New("s3cr3t-value-1")
	var out bytes.Buffer
	sc := set.Scrubber(&out)
	for _, b := range []byte("x=s3cr3t-value-1;y=czNjcjN0LXZhbHVlLTE=") {
		sc.Write([]byte{b})
	}
	sc.Close()
	if got := out.String(); got != "x=***;y=***" {
		t.Fatalf("got %q", got)
	}
}

// TestScrubberEmptySet passes everything through.
func TestScrubberEmptySet(t *testing.T) {
	var out bytes.Buffer
	sc := new(redact.Set).Scrubber(&out)
	sc.Write([]byte("plain"))
	sc.Close()
	if out.String() != "plain" {
		t.Fatalf("got %q", out.String())
	}
}
