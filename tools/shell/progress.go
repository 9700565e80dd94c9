package shell

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rigout/rigout"
)

// progressReporter sends notifications/progress for one call while its
// command runs, when the client passed a progress token. Clients reset their
// request timeouts on progress, so long commands are not abandoned.
type progressReporter struct {
	call     *rigout.Call
	interval time.Duration
	start    time.Time
	bytes    atomic.Int64
	count    atomic.Int64
}

// newProgress returns a reporter for req, or nil when the client asked for
// no progress.
func (f *Family) newProgress(ctx context.Context, call *rigout.Call) *progressReporter {
	if !call.WantsProgress(ctx) {
		return nil
	}
	return &progressReporter{call: call, interval: f.cfg.ProgressInterval, start: f.cfg.Now()}
}

// output counts output bytes, for the progress message.
func (p *progressReporter) output(n int) {
	if p != nil {
		p.bytes.Add(int64(n))
	}
}

// run reports progress every interval until ctx ends; call it on its own
// goroutine and cancel ctx when the command is done.
func (p *progressReporter) run(ctx context.Context) {
	if p == nil {
		return
	}
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			p.send(ctx, fmt.Sprintf("running for %s, %d bytes of output so far",
				now.Sub(p.start).Round(time.Second), p.bytes.Load()))
		}
	}
}

// send emits one progress notification; progress increases with every call.
func (p *progressReporter) send(ctx context.Context, msg string) {
	n := p.count.Add(1)
	_ = p.call.Progress(ctx, float64(n), 0, msg)
}
