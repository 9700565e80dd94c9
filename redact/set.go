package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
)

// MinSecretLen is the shortest value [Set.Add] accepts. Shorter values
// ("admin", "1234") occur in ordinary text too often to mask everywhere.
const MinSecretLen = 8

// ErrShortSecret is returned by [New] and [Set.Add] for a value shorter
// than [MinSecretLen] bytes. The error never holds the value.
var ErrShortSecret = errors.New("redact: secret shorter than 8 bytes")

// A Set masks the values a gateway knows to be secret, as well as
// everything [String] finds.
//
// A Set is safe for concurrent use: any number of goroutines may call
// [Set.Redact] while others call [Set.Add]. A Redact that runs at the same
// time as an Add uses the values from before or after it, never a mix. The
// zero Set is empty and ready to use, and a nil *Set redacts like [String].
// A Set must not be copied after first use.
//
// A Set keeps its own copy of each value (and of its encodings) for as long
// as it lives; values cannot be removed. It never prints them: its
// [Set.Format] and [Set.LogValue] show only how many it holds.
type Set struct {
	// mu serializes Add; Redact loads m without locking.
	mu sync.Mutex
	m  atomic.Pointer[matcher]
}

// New returns a Set holding secrets. It returns an error wrapping
// [ErrShortSecret] if any of them is shorter than [MinSecretLen].
func New(secrets ...string) (*Set, error) {
	for i, v := range secrets {
		if len(v) < MinSecretLen {
			return nil, fmt.Errorf("secret %d of %d: %w", i+1, len(secrets), ErrShortSecret)
		}
	}
	s := new(Set)
	if len(secrets) > 0 {
		s.m.Store(newMatcher(nil, secrets, encodings))
	}
	return s, nil
}

// Add adds secret to s. It returns [ErrShortSecret] if secret is shorter
// than [MinSecretLen], and does nothing if s holds secret already.
func (s *Set) Add(secret string) error {
	if len(secret) < MinSecretLen {
		return ErrShortSecret
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.m.Load()
	if old.has(secret) {
		return nil
	}
	s.m.Store(newMatcher(old, []string{secret}, encodings))
	return nil
}

// Len returns the number of secrets in s.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return s.m.Load().len()
}

// Redact returns text with every occurrence of every secret in s, and of
// each one's encodings, replaced by [Mask], then with what [String] finds
// masked too. The encodings are hex (lower and upper case), base64
// (standard and URL-safe, padded or not, and the stable inner part at each
// of the three byte alignments, so that a secret inside a longer base64
// stream is caught), percent-encoding, JSON string escaping, the value
// reversed, and the value and its hex interleaved with a separator (each
// byte followed by one of space, tab, newline, NUL, '-', ',', ':', '.',
// '_' or '|', as `sed 's/./&-/g'` or `od -tx1` print it). Base64 wrapped
// over several lines, and other transformations (compression, other
// encodings, other separators), are not recognised.
//
// When nothing is masked, Redact returns text itself.
func (s *Set) Redact(text string) string {
	var m *matcher
	if s != nil {
		m = s.m.Load()
	}
	text = m.mask(text)
	out := String(text)
	if m != nil && m.star && out != text {
		// The masks String inserts could complete a secret that holds '*'.
		out = m.mask(out)
	}
	return out
}

// Format prints how many secrets s holds, never the secrets, for every
// verb: fmt.Sprintf("%v", s) is "redact.Set(3 secrets)".
func (s *Set) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "redact.Set(%d secrets)", s.Len())
}

// LogValue implements [slog.LogValuer]: a group holding the number of
// secrets, never the secrets.
func (s *Set) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("secrets", s.Len()))
}

var _ slog.LogValuer = (*Set)(nil)
var _ fmt.Formatter = (*Set)(nil)

// matcher finds every needle (a secret or one of its encodings) in one pass
// over the text. It is immutable once built; Add builds a new one.
//
// Why not one regular expression, an alternation of the quoted needles?
// Go's regexp has no DFA: it runs every alternative in step at each byte,
// and 20 secrets make some 300 needles: BenchmarkRegexpAlternation, with
// only the 20 raw values, runs at 2 MB/s, where the matcher adds some
// 3 ms per MiB to String. Nor strings.Index per needle: that is 300 passes. All
// needles are at least 8 bytes long, so at each position the matcher loads
// the next 8 bytes as one word and tests a hash of it in a 64 Ki bit set
// (8 KiB, it stays in L1 cache), after a first test of the next two bytes
// in another; only the rare hits look up the needles that start with those
// 8 bytes. The cost per byte does not depend on the
// number of secrets.
type matcher struct {
	secrets []string
	star    bool                 // some needle holds '*', so a mask can complete one
	needles map[uint64][]string  // by their first 8 bytes
	pairs   [1 << 16 / 64]uint64 // first two bytes of the needles
	bits    [1 << 16 / 64]uint64 // hash of their first 8 bytes
}

// newMatcher returns a matcher for old's secrets and add, and the forms
// that forms returns for each.
func newMatcher(old *matcher, add []string, forms func(string) []string) *matcher {
	m := &matcher{needles: make(map[uint64][]string)}
	if old != nil {
		m.secrets = append(m.secrets, old.secrets...)
	}
	for _, v := range add {
		if !m.has(v) {
			m.secrets = append(m.secrets, strings.Clone(v))
		}
	}
	seen := make(map[string]bool)
	for _, v := range m.secrets {
		for _, n := range forms(v) {
			if len(n) < 8 || seen[n] {
				continue
			}
			seen[n] = true
			m.star = m.star || strings.Contains(n, "*")
			w := word(n, 0)
			m.needles[w] = append(m.needles[w], n)
			h := hash(w)
			m.bits[h/64] |= 1 << (h % 64)
			k := uint16(n[0])<<8 | uint16(n[1])
			m.pairs[k/64] |= 1 << (k % 64)
		}
	}
	return m
}

func (m *matcher) has(v string) bool {
	if m == nil {
		return false
	}
	for _, s := range m.secrets {
		if s == v {
			return true
		}
	}
	return false
}

func (m *matcher) len() int {
	if m == nil {
		return 0
	}
	return len(m.secrets)
}

// mask replaces every needle in text by Mask; overlapping and adjacent
// matches become one. When a needle holds '*', a mask and the text next to
// it could form a new match: mask then repeats until no needle is left,
// which ends, since each pass that masks something makes the text at least
// 5 bytes shorter.
func (m *matcher) mask(text string) string {
	if m == nil {
		return text
	}
	if !m.star {
		return m.maskOnce(text)
	}
	for {
		out := m.maskOnce(text)
		if out == text {
			return out
		}
		text = out
	}
}

func (m *matcher) maskOnce(text string) string {
	var b strings.Builder
	done := 0        // text[:done] is in b
	lo, hi := -1, -1 // the current run of matches
	for i := 0; i+8 <= len(text); i++ {
		if k := uint16(text[i])<<8 | uint16(text[i+1]); m.pairs[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		w := word(text, i)
		h := hash(w)
		if m.bits[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, n := range m.needles[w] {
			if !strings.HasPrefix(text[i:], n) {
				continue
			}
			if i > hi {
				if hi < 0 {
					b.Grow(len(text))
				} else {
					b.WriteString(text[done:lo])
					b.WriteString(Mask)
					done = hi
				}
				lo, hi = i, i+len(n)
			} else {
				hi = max(hi, i+len(n))
			}
		}
	}
	if hi < 0 {
		return text
	}
	b.WriteString(text[done:lo])
	b.WriteString(Mask)
	b.WriteString(text[hi:])
	return b.String()
}

// word returns the 8 bytes of s at i as one little-endian integer.
func word(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hash maps a word to 16 bits (Fibonacci hashing).
func hash(w uint64) uint64 { return (w * 0x9E3779B97F4A7C15) >> 48 }

// separators are the bytes an interleaved form puts after each byte of a
// value (see [Set.Redact]).
const separators = " \t\n\x00-,:._|"

// encodings returns v and the forms in which it is likely to appear in
// output: [codings], then the value reversed and interleaved.
func encodings(v string) []string {
	out := codings(v)
	b := []byte(v)
	rev := make([]byte, len(b))
	for i, c := range b {
		rev[len(b)-1-i] = c
	}
	out = append(out, string(rev))
	if r := []rune(v); len(r) != len(b) {
		// Multibyte text: rev(1) reverses characters, not bytes.
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		out = append(out, string(r))
	}
	lo := hex.EncodeToString(b)
	for _, sep := range []byte(separators) {
		out = append(out, interleave(v, 1, sep))
	}
	for _, sep := range []byte(" :-") {
		out = append(out, interleave(lo, 2, sep), interleave(strings.ToUpper(lo), 2, sep))
	}
	return out
}

// interleave returns s with sep after each group of n bytes but the last.
func interleave(s string, n int, sep byte) string {
	b := make([]byte, 0, len(s)+len(s)/n)
	for i := 0; i < len(s); i += n {
		if i > 0 {
			b = append(b, sep)
		}
		b = append(b, s[i:min(len(s), i+n)]...)
	}
	return string(b)
}

// codings returns v and its encodings: hex, base64, percent-encoding and
// JSON escaping.
func codings(v string) []string {
	b := []byte(v)
	out := []string{v, hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b))}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString(b))
		raw := enc.WithPadding(base64.NoPadding)
		// Inside a longer stream, v starts at byte offset 0, 1 or 2 of a
		// 3-byte group. Encode it behind that many zero bytes and keep the
		// characters all of whose 6 bits come from v: those are the same
		// whatever bytes surround v.
		for k := 0; k < 3; k++ {
			e := raw.EncodeToString(append(make([]byte, k), b...))
			from, to := (8*k+5)/6, 8*(k+len(b))/6
			out = append(out, e[from:to])
		}
		out = append(out, raw.EncodeToString(b))
	}
	for _, esc := range []string{url.QueryEscape(v), url.PathEscape(v)} {
		out = append(out, esc, lowerPercent(esc))
	}
	if j, err := json.Marshal(v); err == nil {
		out = append(out, string(j[1:len(j)-1]))
	}
	var j strings.Builder
	e := json.NewEncoder(&j)
	e.SetEscapeHTML(false)
	if e.Encode(v) == nil {
		s := strings.TrimSuffix(j.String(), "\n")
		out = append(out, s[1:len(s)-1])
	}
	return out
}

// lowerPercent writes the hex digits of %XX escapes in lower case, as some
// encoders do.
func lowerPercent(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
		}
	}
	return string(b)
}
