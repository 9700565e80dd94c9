package rigout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rigout/rigout/audit"
)

// DefaultRefusalRowsPerMinute is how many refusal rows one principal, or
// one client address refused before it authenticated, may add to the
// ledger in a minute, all of which may come at once.
const DefaultRefusalRowsPerMinute = 60

// maxRefusalKeys bounds the refusal table. Beyond it, refusals of new keys
// share one bucket, so a flood from many addresses is bounded as a whole.
const maxRefusalKeys = 4096

// refusalOverflowKey is the bucket shared by keys beyond maxRefusalKeys.
const refusalOverflowKey = "\x00overflow"

// refusals bounds the refusal rows (denied tool calls, unknown tools,
// refused credentials) each key can put in the ledger with a token bucket.
// A refusal over the limit is counted and not written; the next row
// written for that key says how many were left out ("refusals_not_recorded"
// in its detail), so the ledger states what it does not hold.
//
// It is safe for concurrent use.
type refusals struct {
	rate Rate
	now  func() time.Time

	// mu protects the following.
	mu      sync.Mutex
	buckets map[string]*refusalBucket
}

type refusalBucket struct {
	tokens  float64
	at      time.Time
	dropped int
}

func newRefusals(rate Rate, now func() time.Time) *refusals {
	return &refusals{rate: rate, now: now, buckets: make(map[string]*refusalBucket)}
}

// admit reports whether a refusal row for key may be written now, and how
// many of key's refusals were left out since its last written row.
func (r *refusals) admit(key string) (ok bool, leftOut int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	b := r.buckets[key]
	if b == nil {
		if len(r.buckets) >= maxRefusalKeys {
			r.sweep(now)
		}
		if len(r.buckets) >= maxRefusalKeys {
			key = refusalOverflowKey
			b = r.buckets[key]
		}
	}
	if b == nil {
		b = &refusalBucket{tokens: float64(r.rate.Calls), at: now}
		r.buckets[key] = b
	}
	b.refill(r.rate, now)
	if b.tokens < 1 {
		b.dropped++
		return false, 0
	}
	b.tokens--
	leftOut, b.dropped = b.dropped, 0
	return true, leftOut
}

func (b *refusalBucket) refill(rate Rate, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(rate.Calls), b.tokens+float64(rate.Calls)*d.Seconds()/rate.Per.Seconds())
		b.at = now
	}
}

// sweep drops the buckets that are full again and owe no count.
func (r *refusals) sweep(now time.Time) {
	for k, b := range r.buckets {
		b.refill(r.rate, now)
		if b.dropped == 0 && b.tokens >= float64(r.rate.Calls) {
			delete(r.buckets, k)
		}
	}
}

// admitRefusal decides whether refusal row e of key may be written; when
// earlier refusals of key were left out, it notes their number in e's
// detail. A refusal that is not written is logged at debug level only.
func (g *Gateway) admitRefusal(key string, e *audit.Event) bool {
	ok, leftOut := g.refused.admit(key)
	if !ok {
		return false
	}
	if leftOut > 0 {
		d := map[audit.DetailKey]string{}
		if e.Detail != "" {
			_ = json.Unmarshal([]byte(e.Detail), &d)
		}
		d[audit.DetailRefusalsLeft] = strconv.Itoa(leftOut)
		e.Detail = DetailJSON(d)
	}
	return true
}

// Bounds of a client-supplied name (an unknown tool's) in the ledger, in
// bytes: kept whole up to maxLedgerName, else cut to ledgerNamePrefix and
// a digest (26 bytes more).
const (
	maxLedgerName    = 64
	ledgerNamePrefix = 40
)

// ledgerName returns a client-supplied name as the ledger keeps it: as is
// when it is at most 64 bytes of printable UTF-8; otherwise its first 40
// bytes of printable runes (controls and invalid bytes as '?'), then
// "…sha256:" and the first 16 hex digits of the whole name's SHA-256, so
// that rows of one long name can still be matched. The result is at most
// 66 bytes.
func ledgerName(name string) string {
	clean := len(name) <= maxLedgerName && utf8.ValidString(name) &&
		strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
	if clean {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	tail := "…sha256:" + hex.EncodeToString(sum[:8])
	var b strings.Builder
	for _, r := range name {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			r = '?'
		}
		if b.Len()+utf8.RuneLen(r) > ledgerNamePrefix {
			break
		}
		b.WriteRune(r)
	}
	return b.String() + tail
}

// addrOf is the IP of a host:port remote address, which refusal rows of
// unauthenticated requests are counted against (the whole address when
// it has no port).
func addrOf(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}
