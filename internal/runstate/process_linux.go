package runstate

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Process is a handle on the recorded process that stays valid when its
// PID is reused: a pidfd opened, then checked against the identity.
type Process struct {
	id Identity
	fd int
}

// Open returns a handle on the process id names, or ErrNotSame.
func Open(id Identity) (*Process, error) {
	fd, err := unix.PidfdOpen(id.PID, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, ErrNotSame
		}
		return nil, fmt.Errorf("runstate: pidfd_open %d: %w", id.PID, err)
	}
	// The pidfd now pins this process: if it is the one recorded, every
	// signal sent through fd reaches it and no other.
	if reason(id) != "" {
		unix.Close(fd)
		return nil, ErrNotSame
	}
	return &Process{id: id, fd: fd}, nil
}

// Signal sends sig to the process.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := unix.PidfdSendSignal(p.fd, sig, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return ErrNotSame
		}
		return fmt.Errorf("runstate: signal %d: %w", p.id.PID, err)
	}
	return nil
}

// Wait waits up to d for the process to exit and reports whether it did.
func (p *Process) Wait(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds()))
		if err == nil && n > 0 {
			return true
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			// Fall back to /proc when poll on a pidfd is not supported.
			if _, err := Of(p.id.PID); err != nil {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// Close releases the handle.
func (p *Process) Close() error { return unix.Close(p.fd) }
