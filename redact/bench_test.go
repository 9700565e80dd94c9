package redact_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/rigout/rigout/redact"
)

const mib = 1 << 20

// benchText returns about 1 MiB of log lines. Every secretEvery-th line
// holds a secret (0: none); the others are ordinary, and every tenth of
// them has a trigger word with nothing to mask ("key", "token_count").
func benchText(secretEvery int, known []string) string {
	plain := []string{
		"2026-12-01 19:11:58.123 INFO worker[%d]: processed batch of items in 12ms, status ok\n",
		"  compiling src/module_%d/handler.go (cached: false, size: 12 KiB)\n",
		"GET /api/v1/items?page=%d&limit=50 200 1.2ms remote=10.0.0.7:51234\n",
		"drwxr-xr-x  2 root root 4096 Dec  1 19:11 dir%d\n",
	}
	trigger := []string{
		"monkey=banana keyboard=us token_count=%d\n",
		"fetching https://example.com/pkg/%d.tar.gz\n",
	}
	secret := []string{
		"export DB_PASSWORD=hunter%d2 PGPASSWORD=x\n",
		"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl%d\n",
		"AKIAABCDEFGHIJKLMN%02d wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
		"postgres://app:s3cret%d@db:5432/app\n",
	}
	var b strings.Builder
	for i := 0; b.Len() < mib; i++ {
		switch {
		case known != nil && i%97 == 0:
			fmt.Fprintf(&b, "value %s in line %d\n", known[i%len(known)], i)
		case secretEvery > 0 && i%secretEvery == 0:
			fmt.Fprintf(&b, secret[i/secretEvery%len(secret)], i%100)
		case i%10 == 5:
			fmt.Fprintf(&b, trigger[i%len(trigger)], i)
		default:
			fmt.Fprintf(&b, plain[i%len(plain)], i)
		}
	}
	return b.String()
}

// noTriggerText is 1 MiB of lines with no trigger at all.
func noTriggerText() string {
	var b strings.Builder
	for i := 0; b.Len() < mib; i++ {
		fmt.Fprintf(&b, "2026-12-01 19:11:58.123 INFO worker[%d]: processed batch of items in 12ms, status ok\n", i)
	}
	return b.String()
}

func knownSecrets(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fake(b64, 16+i, uint32(100+i)) // random, of 16 to 35 bytes
	}
	return out
}

func BenchmarkString(b *testing.B) {
	for _, bc := range []struct {
		name string
		text string
	}{
		{"no-trigger", noTriggerText()},
		{"plain", benchText(0, nil)},
		{"secret-every-100-lines", benchText(100, nil)},
		{"secret-every-10-lines", benchText(10, nil)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				redact.String(bc.text)
			}
		})
	}
}

func BenchmarkSet(b *testing.B) {
	known := knownSecrets(20)
	set, err := redact.New(known...)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		text string
	}{
		{"20-known/no-trigger", noTriggerText()},
		{"20-known/plain", benchText(0, nil)},
		{"20-known/secret-every-100-lines", benchText(100, nil)},
		{"20-known/known-every-97-lines", benchText(100, known)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				set.Redact(bc.text)
			}
		})
	}
}

// BenchmarkRegexpAlternation measures the design Set does not use: one
// regular expression, an alternation of the 20 raw values only (a Set
// also matches some 15 encodings of each).
func BenchmarkRegexpAlternation(b *testing.B) {
	known := knownSecrets(20)
	quoted := make([]string, len(known))
	for i, v := range known {
		quoted[i] = regexp.QuoteMeta(v)
	}
	re := regexp.MustCompile(strings.Join(quoted, "|"))
	text := benchText(0, nil)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		re.ReplaceAllString(text, redact.Mask)
	}
}

func BenchmarkNew20(b *testing.B) {
	known := knownSecrets(20)
	for b.Loop() {
		if _, err := redact.New(known...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScrubber compares the streaming Scrubber, fed 1 MiB of log
// lines with 5 known values in 32 KiB writes (the size exec copies
// through), with Set.Redact's known-value mask over the same text at once
// (Redact also runs String's rules, so it is an upper bound on the
// matcher's share).
func BenchmarkScrubber(b *testing.B) {
	known := []string{"sk-known-0123456789", "hunter2hunter2", "AAAAB3NzaC1yc2EAAAADAQ", "pa55-w0rd-abc", "tok_zzzzzzzzzzzz"}
	text := benchText(0, known)
	set, err := redact.New(known...)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scrubber-32KiB-writes", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		p := []byte(text)
		for b.Loop() {
			sc := set.Scrubber(discard{})
			for i := 0; i < len(p); i += 32 << 10 {
				sc.Write(p[i:min(len(p), i+32<<10)])
			}
			sc.Close()
		}
	})
	// The same stream through a Scrubber masking only the forms it masked
	// before reversal and interleaving were added: the ratio of the two
	// is what those forms cost.
	b.Run("scrubber-32KiB-writes-codings-only", func(b *testing.B) {
		old := redact.NewCodingsOnly(known...)
		b.SetBytes(int64(len(text)))
		p := []byte(text)
		for b.Loop() {
			sc := old.Scrubber(discard{})
			for i := 0; i < len(p); i += 32 << 10 {
				sc.Write(p[i:min(len(p), i+32<<10)])
			}
			sc.Close()
		}
	})
	b.Run("set-redact-whole", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			set.Redact(text)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
