// Package groupcommit is the group commit both ledgers (audit/sqlite and
// audit/postgres) write through: concurrent callers' rows are committed
// together, in one transaction and one fsync, and each caller returns only
// once the commit holding its row has ended, with that commit's error.
//
// There is no writer goroutine. The first caller to find no commit in
// progress leads: it commits its own row and every row queued behind it
// (up to a maximum), in its own goroutine, so a lone caller pays no
// hand-off to another goroutine and back. Callers arriving meanwhile
// queue; when the leader's commit ends it answers them and, if more are
// queued, hands the lead to the oldest, which commits the next batch.
//
// Callers answered together tend to come back together, but not at the
// same instant: the first to return would otherwise get a commit of its
// own while the rest queue behind it. So when a batch is smaller than half
// the previous one, the leader lingers (at most Linger, and never past
// Window from when the batch started) for the callers it expects. A lone
// caller never waits: its previous batch had one row.
package groupcommit

import (
	"errors"
	"sync"
	"time"
)

// ErrClosed is returned by [Committer.Do] after [Committer.Close].
var ErrClosed = errors.New("groupcommit: closed")

// Config configures a [Committer].
type Config[T any] struct {
	// Commit commits one batch of rows, in order, and returns the outcome
	// every caller in the batch gets. Commits never run concurrently.
	Commit func(batch []*T) error
	// MaxBatch caps the rows of one commit; at least 1.
	MaxBatch int
	// Linger is the longest wait for expected callers; Window the longest
	// time from a batch's start to its commit. Zero means no lingering.
	Linger, Window time.Duration
}

// Committer groups concurrent callers' rows into shared commits. It is
// safe for concurrent use.
type Committer[T any] struct {
	cfg Config[T]

	mu      sync.Mutex
	queue   []*request[T]
	leading bool          // a caller holds the lead
	more    chan struct{} // a row was queued while leading; buffered 1
	idle    *sync.Cond    // signalled when the lead is released
	closed  bool
	prev    int // rows of the last batch
}

type request[T any] struct {
	v    *T
	done chan error // the commit's outcome, or errLead
}

// errLead tells a queued caller that it leads now.
var errLead = errors.New("lead")

// New returns a Committer.
func New[T any](cfg Config[T]) *Committer[T] {
	cfg.MaxBatch = max(cfg.MaxBatch, 1)
	c := &Committer[T]{cfg: cfg, more: make(chan struct{}, 1)}
	c.idle = sync.NewCond(&c.mu)
	return c
}

// Do commits v with whatever rows are queued with it and returns the
// commit's error. The commit may update *v (a sequence number, a hash);
// the update is visible when Do returns.
func (c *Committer[T]) Do(v *T) error {
	r := &request[T]{v: v, done: make(chan error, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.queue = append(c.queue, r)
	if c.leading {
		select {
		case c.more <- struct{}{}:
		default:
		}
		c.mu.Unlock()
		if err := <-r.done; err != errLead {
			return err
		}
	} else {
		c.leading = true
		c.mu.Unlock()
	}
	return c.lead()
}

// lead commits the batch that starts with the leader's own row (the
// leader is always the oldest queued caller), answers the others, and
// passes the lead on.
func (c *Committer[T]) lead() error {
	start := time.Now()
	c.mu.Lock()
	// Drop a stale wake-up from before this batch.
	select {
	case <-c.more:
	default:
	}
	if c.cfg.Linger > 0 && len(c.queue) < c.prev/2 && len(c.queue) < c.cfg.MaxBatch {
		want := min(c.prev, c.cfg.MaxBatch)
		t := time.NewTimer(min(c.cfg.Linger, c.cfg.Window))
		for len(c.queue) < want && time.Since(start) < c.cfg.Window {
			c.mu.Unlock()
			timedOut := false
			select {
			case <-c.more:
			case <-t.C:
				timedOut = true
			}
			c.mu.Lock()
			if timedOut {
				break
			}
		}
		t.Stop()
	}
	n := min(len(c.queue), c.cfg.MaxBatch)
	batch := make([]*request[T], n)
	copy(batch, c.queue)
	c.queue = append(c.queue[:0], c.queue[n:]...)
	c.prev = n
	c.mu.Unlock()

	vs := make([]*T, n)
	for i, r := range batch {
		vs[i] = r.v
	}
	err := errPanicked
	defer func() {
		// Even when Commit panics, the batch is answered and the lead
		// passed on, so that no caller and no Close waits forever.
		for _, r := range batch[1:] {
			r.done <- err
		}
		c.release()
	}()
	err = c.cfg.Commit(vs)
	return err
}

// errPanicked answers the batch whose commit panicked.
var errPanicked = errors.New("groupcommit: commit panicked")

// release passes the lead to the oldest queued caller, or gives it up.
func (c *Committer[T]) release() {
	c.mu.Lock()
	if len(c.queue) > 0 {
		c.queue[0].done <- errLead
	} else {
		c.leading = false
		c.idle.Broadcast()
	}
	c.mu.Unlock()
}

// Close waits for the rows already queued to be committed; later calls to
// Do return [ErrClosed]. Close is idempotent.
func (c *Committer[T]) Close() {
	c.mu.Lock()
	c.closed = true
	for c.leading {
		c.idle.Wait()
	}
	c.mu.Unlock()
}
