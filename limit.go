package rigout

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
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

// acquire takes a slot for principal, or reports which cap is full.
func (l *limiter) acquire(principal string) (release func(), full string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total >= l.max:
		return nil, "gateway"
	case l.by[principal] >= l.perPrincipal:
		return nil, "principal"
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
	}, ""
}

// limitConcurrency refuses a call when too many are already running.
func (g *Gateway) limitConcurrency(next Handler) Handler {
	return func(ctx context.Context, call *Call) (*mcp.CallToolResult, error) {
		who := g.principal(ctx).Name
		release, full := g.limit.acquire(who)
		if release == nil {
			call.Outcome.Status = "busy"
			if full == "gateway" {
				return ErrorResult("busy: this gateway is already running %d calls; retry when some have finished", g.limit.max), nil
			}
			return ErrorResult("busy: %s already has %d calls running; retry when some have finished", who, g.limit.perPrincipal), nil
		}
		defer release()
		return next(ctx, call)
	}
}
