package rigout

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Defaults for the concurrency caps.
const (
	DefaultMaxConcurrent             = 128
	DefaultMaxConcurrentPerPrincipal = 64
)

// limiter caps the tool calls in flight, in all and per principal, so that
// one client cannot exhaust the machine's processes or starve the others.
// A call over a cap is refused at once with a busy error; nothing queues.
type limiter struct {
	max, perPrincipal int

	// mu protects the following.
	mu    sync.Mutex
	total int
	by    map[string]int
}

func newLimiter(max, perPrincipal int) *limiter {
	return &limiter{max: max, perPrincipal: perPrincipal, by: make(map[string]int)}
}

// BusyError refuses a call because too many are already in flight.
type BusyError struct {
	// Principal is set when the principal's own cap is full; empty when
	// the gateway's is.
	Principal string
	// Limit is the cap that is full.
	Limit int
}

func (e *BusyError) Error() string {
	if e.Principal == "" {
		return fmt.Sprintf("busy: this gateway is already running %d calls; retry when some have finished", e.Limit)
	}
	return fmt.Sprintf("busy: %s already has %d calls running; retry when some have finished", e.Principal, e.Limit)
}

// acquire takes a slot for principal, or reports which cap is full.
func (l *limiter) acquire(principal string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total >= l.max:
		return nil, &BusyError{Limit: l.max}
	case l.by[principal] >= l.perPrincipal:
		return nil, &BusyError{Principal: principal, Limit: l.perPrincipal}
	}
	l.total++
	l.by[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if l.by[principal]--; l.by[principal] <= 0 {
				delete(l.by, principal)
			}
		})
	}, nil
}

// Rate is a token bucket: Calls calls per Per, all of which may come at
// once. The zero value sets no limit.
type Rate struct {
	// Calls is how many calls may start in each Per.
	Calls int
	// Per is the period. If zero with Calls set, a minute.
	Per time.Duration
}

func (r Rate) String() string {
	per := r.Per
	switch per {
	case time.Second:
		return fmt.Sprintf("%d a second", r.Calls)
	case time.Minute:
		return fmt.Sprintf("%d a minute", r.Calls)
	case time.Hour:
		return fmt.Sprintf("%d an hour", r.Calls)
	}
	return fmt.Sprintf("%d per %s", r.Calls, per)
}

// RateLimits are the gateway's limits on how often calls that run something
// (risk Exec and above) may start. Rigout keeps 60 commands a minute per
// endpoint; here each principal and each host has a bucket of its own.
type RateLimits struct {
	// PerPrincipal limits each token (or the stdio client).
	PerPrincipal Rate
	// PerHost limits the calls that reach each host, whoever makes them.
	PerHost Rate
}

func (r *RateLimits) validate() error {
	for _, x := range []*Rate{&r.PerPrincipal, &r.PerHost} {
		if x.Calls < 0 || x.Per < 0 {
			return fmt.Errorf("rigout: rate limit %d per %s: want positive numbers", x.Calls, x.Per)
		}
		if x.Calls > 0 && x.Per == 0 {
			x.Per = time.Minute
		}
	}
	return nil
}

// RateLimitError refuses a call over a rate limit.
type RateLimitError struct {
	// Limit names the bucket: "principal alice" or "host web1".
	Limit string
	// Rate is the limit that was reached.
	Rate Rate
	// RetryAfter is when one more call will be allowed.
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited: %s may start %s calls that run something; retry in %s",
		e.Limit, e.Rate, e.RetryAfter.Round(100*time.Millisecond).String())
}

// rateLimiter holds one token bucket per principal and per host. Buckets
// that have refilled completely are dropped, so memory is bounded by the
// keys active within one period.
type rateLimiter struct {
	cfg RateLimits
	now func() time.Time

	// mu protects the following.
	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimiter(cfg RateLimits, now func() time.Time) *rateLimiter {
	if cfg.PerPrincipal.Calls == 0 && cfg.PerHost.Calls == 0 {
		return nil
	}
	return &rateLimiter{cfg: cfg, now: now, buckets: make(map[string]*bucket)}
}

// allow takes one token from the principal's bucket and from each host's,
// or none of them when any is empty.
func (r *rateLimiter) allow(principal string, hosts []string) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	type take struct {
		b    *bucket
		name string
		rate Rate
	}
	var takes []take
	if r.cfg.PerPrincipal.Calls > 0 {
		takes = append(takes, take{r.bucket("p\x00"+principal, r.cfg.PerPrincipal, now), "principal " + principal, r.cfg.PerPrincipal})
	}
	if r.cfg.PerHost.Calls > 0 {
		for _, h := range hosts {
			takes = append(takes, take{r.bucket("h\x00"+h, r.cfg.PerHost, now), "host " + h, r.cfg.PerHost})
		}
	}
	for _, t := range takes {
		if t.b.tokens < 1 {
			perToken := t.rate.Per / time.Duration(t.rate.Calls)
			wait := time.Duration(math.Ceil((1 - t.b.tokens) * float64(perToken)))
			return &RateLimitError{Limit: t.name, Rate: t.rate, RetryAfter: wait}
		}
	}
	for _, t := range takes {
		t.b.tokens--
	}
	r.gc(now)
	return nil
}

// bucket returns key's bucket, refilled up to now.
func (r *rateLimiter) bucket(key string, rate Rate, now time.Time) *bucket {
	b, ok := r.buckets[key]
	if !ok {
		b = &bucket{tokens: float64(rate.Calls), at: now}
		r.buckets[key] = b
		return b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(rate.Calls), b.tokens+float64(rate.Calls)*d.Seconds()/rate.Per.Seconds())
		b.at = now
	}
	return b
}

// gc drops full buckets once a period: a full bucket is the same as none.
func (r *rateLimiter) gc(now time.Time) {
	per := max(r.cfg.PerPrincipal.Per, r.cfg.PerHost.Per)
	if now.Sub(r.sweep) < per {
		return
	}
	r.sweep = now
	for k, b := range r.buckets {
		rate := r.cfg.PerHost
		if k[0] == 'p' {
			rate = r.cfg.PerPrincipal
		}
		if b.tokens+float64(rate.Calls)*now.Sub(b.at).Seconds()/rate.Per.Seconds() >= float64(rate.Calls) {
			delete(r.buckets, k)
		}
	}
}

// limits takes a concurrency slot and, for calls that run something, a
// rate token. release gives the slot back.
func (g *Gateway) limits(call *Call) (release func(), err error) {
	release, err = g.limit.acquire(call.principal.Name)
	if err != nil {
		return nil, err
	}
	if call.risk >= Exec {
		if err := g.rate.allow(call.principal.Name, call.hosts); err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}
