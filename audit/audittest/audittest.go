// Package audittest provides test doubles for package audit: an in-memory
// [Recorder] that can be told to fail, for testing that callers fail closed.
// It needs no database and no cgo; to test against the real SQLite ledger,
// use package github.com/rigout/rigout/audit/sqlite/sqlitetest.
package audittest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rigout/rigout/audit"
)

// ErrInjected is the error a [Recorder] returns after [Recorder.FailAfter]
// or [Recorder.FailWhen] when no other error was given.
var ErrInjected = errors.New("audittest: injected write failure")

// Recorder is an in-memory [audit.Recorder]. It keeps every event it
// accepts, in order, numbered from 1, and can be told to fail, the way a
// ledger on a full or read-only disk does. The zero value accepts
// everything. A Recorder is safe for concurrent use.
type Recorder struct {
	// mu protects the following.
	mu     sync.Mutex
	events []audit.Event
	calls  int
	fail   func(audit.Event) error
}

var _ audit.Recorder = (*Recorder)(nil)

// Record stores e, or returns the injected error without storing it.
func (r *Recorder) Record(_ context.Context, e audit.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail != nil {
		if err := r.fail(e); err != nil {
			return err
		}
	}
	e.Seq = int64(len(r.events) + 1)
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	r.events = append(r.events, e)
	return nil
}

// FailWhen installs fail, called for every later event under the
// Recorder's lock: a non-nil result is returned by Record and the event is
// dropped. A nil fail removes the hook.
func (r *Recorder) FailWhen(fail func(audit.Event) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = fail
}

// FailAfter makes every Record after the next n fail with err (ErrInjected
// if err is nil). FailAfter(0, nil) fails from the next call on.
func (r *Recorder) FailAfter(n int, err error) {
	if err == nil {
		err = ErrInjected
	}
	left := n
	r.FailWhen(func(audit.Event) error {
		if left > 0 {
			left--
			return nil
		}
		return err
	})
}

// Events returns a copy of the accepted events.
func (r *Recorder) Events() []audit.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]audit.Event, len(r.events))
	copy(out, r.events)
	return out
}

// Calls reports how many times Record was called, including failures.
func (r *Recorder) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}
