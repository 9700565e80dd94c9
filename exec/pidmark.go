package exec

import (
	"bytes"
	"io"
	"strconv"
	"sync"
	"time"
)

// Before the command, the remote line prints the login shell's process id
// to stderr between two RS (0x1e) bytes. The shell then execs the command,
// which keeps that id, and sshd has made it a session leader, so the id is
// also the command's process group. A timeout or cancellation can then end
// the whole group from a second channel (kill -TERM -- -PID) where the
// SSH "signal" request does not reach it: sshd refuses signal requests for
// root logins (no privilege separation after authentication), older
// servers ignore them, and a signal request reaches only one process, not
// a shell's children. PIDFilter removes the marker from stderr before the
// capture sees it.

const (
	pidMarkerStart = "\x1erigout-pid:"
	pidMarkerEnd   = '\x1e'
	// PIDMarkerPrefix is prepended to the remote command line. printf is
	// a builtin of every POSIX shell: no process is started.
	PIDMarkerPrefix = `printf '\036rigout-pid:%s\036' "$$" >&2; `
	// pidSearchLimit bounds how far into stderr the marker is looked for
	// (login scripts may print before it).
	pidSearchLimit = 64 << 10
)

// PIDFilter passes a stream through, removing the first pid marker and
// remembering the id: the SSH runners put it on a remote command's
// stderr (see PIDMarkerPrefix). Bytes before the marker pass at once; only a possible
// partial marker is held back.
type PIDFilter struct {
	w io.Writer

	// mu protects the following.
	mu      sync.Mutex
	buf     []byte
	scanned int
	done    bool
	pid     int
	// settled is closed once done is set: the pid is known, or will not
	// be.
	settled chan struct{}
}

// NewPIDFilter returns the PIDFilter that passes a stream on to w.
func NewPIDFilter(w io.Writer) *PIDFilter { return &PIDFilter{w: w, settled: make(chan struct{})} }

// settle marks the search over; f.mu must be held.
func (f *PIDFilter) settle() {
	if !f.done {
		f.done = true
		close(f.settled)
	}
}

// PIDWait bounds how long a signal waits for the remote process id: the
// remote shell prints it before anything else, so only a host slow to
// start the command makes it wait.
const PIDWait = 2 * time.Second

// WaitProcessID returns the remote process id once the marker has been
// seen, or 0 when it will not be or after limit, or when stop is closed
// (the command ended). A stop sent before the id arrives would otherwise
// reach only what an SSH signal request reaches (see above).
func (f *PIDFilter) WaitProcessID(limit time.Duration, stop <-chan struct{}) int {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-f.settled:
	case <-stop:
	case <-t.C:
	}
	return f.ProcessID()
}

// Write passes p on, less the pid marker, holding back only what may be
// the start of one.
func (f *PIDFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return f.w.Write(p)
	}
	f.buf = append(f.buf, p...)
	f.scan()
	return len(p), nil
}

// scan looks for the marker in buf and writes out what cannot be part of it.
func (f *PIDFilter) scan() {
	i := bytes.Index(f.buf, []byte(pidMarkerStart))
	if i < 0 {
		keep := partialPrefix(f.buf, pidMarkerStart)
		f.emit(len(f.buf) - keep)
		if f.scanned > pidSearchLimit {
			f.finish()
		}
		return
	}
	f.emit(i)
	rest := f.buf[len(pidMarkerStart):]
	j := bytes.IndexByte(rest, pidMarkerEnd)
	if j < 0 {
		if len(rest) > 20 {
			f.finish() // not a marker after all
		}
		return
	}
	if n, err := strconv.Atoi(string(rest[:j])); err == nil && n > 1 {
		f.pid = n
	}
	after := rest[j+1:]
	f.buf = nil
	f.settle()
	if len(after) > 0 {
		_, _ = f.w.Write(after)
	}
}

// emit writes the first n bytes of buf and drops them.
func (f *PIDFilter) emit(n int) {
	if n <= 0 {
		return
	}
	_, _ = f.w.Write(f.buf[:n])
	f.scanned += n
	f.buf = append(f.buf[:0], f.buf[n:]...)
}

// finish stops looking and writes out what was held.
func (f *PIDFilter) finish() {
	if len(f.buf) > 0 {
		_, _ = f.w.Write(f.buf)
	}
	f.buf = nil
	f.settle()
}

// Close writes out anything held back, at the end of the stream.
func (f *PIDFilter) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		f.finish()
	}
}

// ProcessID returns the remote process id, or 0 if not seen (yet).
func (f *PIDFilter) ProcessID() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pid
}

// partialPrefix returns the length of the longest suffix of b that is a
// proper prefix of s.
func partialPrefix(b []byte, s string) int {
	for n := min(len(b), len(s)-1); n > 0; n-- {
		if bytes.HasSuffix(b, []byte(s[:n])) {
			return n
		}
	}
	return 0
}
