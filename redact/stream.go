package redact

import (
	"io"
	"strings"
	"sync"
)

// A Scrubber masks a [Set]'s values, and their encodings, in a stream of
// bytes on its way to another writer: command output on its way to the
// model, the ledger or a spool file. It does what [Set.Redact] does to
// known values (not the context rules of [String], which work on whole
// lines and run later, on the text the gateway returns), and it catches a
// value split across writes: the end of each write that could be the start
// of a value — at most the longest form less one byte, and only when it
// really is such a start — is held back until the next write shows what
// follows, or [Scrubber.Close] flushes it.
//
// A Scrubber is safe for concurrent use. Writes after Close are masked
// whole, with nothing held back.
type Scrubber struct {
	m      *matcher
	w      io.Writer
	needle []string // every form of every value
	first  [256]bool
	maxLen int

	mu     sync.Mutex
	held   []byte
	closed bool
}

// Scrubber returns a Scrubber writing to w with the values s holds now.
// Values added to s later are not masked by it.
func (s *Set) Scrubber(w io.Writer) *Scrubber {
	sc := &Scrubber{w: w}
	if s == nil {
		return sc
	}
	sc.m = s.m.Load()
	if sc.m == nil {
		return sc
	}
	for _, ns := range sc.m.needles {
		for _, n := range ns {
			sc.needle = append(sc.needle, n)
			sc.first[n[0]] = true
			sc.maxLen = max(sc.maxLen, len(n))
		}
	}
	return sc
}

// Write masks p, with what was held back before it, and writes what
// cannot start a value to the underlying writer. It reports len(p) written
// unless the underlying writer fails.
func (sc *Scrubber) Write(p []byte) (int, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.m == nil {
		return sc.w.Write(p)
	}
	raw := string(sc.held) + string(p)
	sc.held = sc.held[:0]
	i := len(raw)
	if !sc.closed {
		i = sc.holdFrom(raw)
		sc.held = append(sc.held, raw[i:]...)
	}
	if i == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(sc.w, sc.m.mask(raw[:i])); err != nil {
		return 0, err
	}
	return len(p), nil
}

// holdFrom returns where the part of raw to hold back starts: the first
// index i such that raw[i:] is a proper prefix of some form of a value,
// moved back over any complete form that starts before i and ends after
// it, so that what is written before i is masked whole; len(raw) if there
// is none. A complete value at the end of raw that is also the start of a
// longer value is held too (it is a proper prefix of the longer one's
// form): masking it now would let the longer one's tail through in the
// next write (TestScrubberPrefixValues).
func (sc *Scrubber) holdFrom(raw string) int {
	i := len(raw)
	for k := max(0, len(raw)-sc.maxLen+1); k < len(raw); k++ {
		if sc.first[raw[k]] && sc.startsAt(raw, k, len(raw), true) {
			i = k
			break
		}
	}
	for moved := i < len(raw); moved; {
		moved = false
		for j := max(0, i-sc.maxLen+1); j < i; j++ {
			if sc.first[raw[j]] && sc.startsAt(raw, j, i, false) {
				i, moved = j, true
				break
			}
		}
	}
	return i
}

// startsAt reports whether a form starts at raw[k]: one that runs past
// the end of raw, when partial, else a complete one that ends after cut.
func (sc *Scrubber) startsAt(raw string, k, cut int, partial bool) bool {
	tail := raw[k:]
	for _, n := range sc.needle {
		if partial {
			if len(n) > len(tail) && strings.HasPrefix(n, tail) {
				return true
			}
		} else if k+len(n) > cut && strings.HasPrefix(tail, n) {
			return true
		}
	}
	return false
}

// Close writes what is held back. It does not close the underlying
// writer.
func (sc *Scrubber) Close() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.closed = true
	if len(sc.held) == 0 {
		return nil
	}
	out := sc.m.mask(string(sc.held))
	sc.held = sc.held[:0]
	_, err := io.WriteString(sc.w, out)
	return err
}

var _ io.WriteCloser = (*Scrubber)(nil)
