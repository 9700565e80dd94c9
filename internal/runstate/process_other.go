//go:build !linux

package runstate

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Process is a handle on the recorded process. Without pidfds (macOS and
// other systems), it is the PID and its identity, checked again right
// before every signal: the window between that check and kill(2) is the
// only one in which a reused PID could be signalled, and a reused PID
// also needs the same start time to the microsecond to pass the check.
type Process struct {
	id Identity
}

// Open returns a handle on the process id names, or ErrNotSame.
func Open(id Identity) (*Process, error) {
	if reason(id) != "" {
		return nil, ErrNotSame
	}
	return &Process{id: id}, nil
}

// Signal sends sig to the process after checking that its PID still
// names the recorded process.
func (p *Process) Signal(sig syscall.Signal) error {
	if reason(p.id) != "" {
		return ErrNotSame
	}
	if err := unix.Kill(p.id.PID, sig); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return ErrNotSame
		}
		return fmt.Errorf("runstate: signal %d: %w", p.id.PID, err)
	}
	return nil
}

// Wait waits up to d for the process to exit and reports whether it did.
// A PID that comes to name another process counts as exited.
func (p *Process) Wait(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if reason(p.id) != "" {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Close releases the handle.
func (p *Process) Close() error { return nil }
