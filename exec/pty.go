package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Default terminal size of a PTY whose PTYSize is zero: wide, so that
// programs wrap long lines rarely.
const (
	DefaultPTYRows = 50
	DefaultPTYCols = 200
)

// ErrPTYStdin means a Command for a PTY set Stdin: the terminal is its
// input.
var ErrPTYStdin = errors.New("exec: a PTY command reads its terminal: Stdin must be nil")

// PTYSize is a terminal's size in character cells. Zero fields take the
// defaults above.
type PTYSize struct {
	Rows, Cols uint16
}

// OrDefault returns s with its zero fields set to the defaults.
func (s PTYSize) OrDefault() PTYSize {
	if s.Rows == 0 {
		s.Rows = DefaultPTYRows
	}
	if s.Cols == 0 {
		s.Cols = DefaultPTYCols
	}
	return s
}

// PTY is a program running on a pseudo-terminal: on this machine
// ([Local.StartPTY]) or on a remote host (package exec/remote's SSH.StartPTY). Read returns what
// the program writes to its terminal, standard error included; Write types
// into it, so a Ctrl-C byte (0x03) interrupts the terminal's foreground
// process group, as on a real terminal. Read and Write may be called
// concurrently with each other and with Close; Wait by several goroutines.
type PTY struct {
	r     io.Reader
	w     io.Writer
	route string
	pid   int // local: the session leader; 0 remotely

	sandboxed   bool
	unsandboxed string

	hangup  func() error // ends the terminal: SIGHUP to what runs on it
	kill    func()       // ends what runs on it at once (local: the tree)
	waitFn  func() (Result, error)
	release func() // after the program: gives back what it held (the channel slot)
	free    func() // after Close: the terminal itself (the master fd)
	grace   time.Duration

	waitOnce  sync.Once
	done      chan struct{}
	res       Result
	err       error
	closeOnce sync.Once
	freeOnce  sync.Once
}

// PTYParts is what a remote runner's terminal is made of: NewPTY makes a
// PTY of them (package exec/remote builds its terminals so).
type PTYParts struct {
	// Output is what the program writes to its terminal; Input types
	// into it.
	Output io.Reader
	Input  io.Writer
	// Route says where the program runs (PTY.Route).
	Route string
	// Sandboxed and Unsandboxed are what PTY.Sandbox reports.
	Sandboxed   bool
	Unsandboxed string
	// Hangup ends the terminal (SIGHUP to what runs on it); Kill ends
	// what runs on it at once.
	Hangup func() error
	Kill   func()
	// Wait waits for the program's end, once.
	Wait func() (Result, error)
	// Release, after the program, gives back what it held (a channel
	// slot); Free, after Close, the terminal itself.
	Release func()
	Free    func()
	// Grace is how long Close waits after Hangup before Kill.
	Grace time.Duration
}

// NewPTY makes a PTY of parts. Every func field is required.
func NewPTY(parts PTYParts) *PTY {
	return &PTY{
		r: parts.Output, w: parts.Input, route: parts.Route,
		sandboxed: parts.Sandboxed, unsandboxed: parts.Unsandboxed,
		hangup: parts.Hangup, kill: parts.Kill, waitFn: parts.Wait,
		release: parts.Release, free: parts.Free, grace: parts.Grace,
		done: make(chan struct{}),
	}
}

// Read reads what the program wrote to the terminal. It returns io.EOF
// once the terminal has hung up (the program and everything holding the
// terminal ended, and what they wrote was read) or Close has returned.
func (p *PTY) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err != nil && n == 0 && !errors.Is(err, io.EOF) {
		// A master whose last slave closed reads EIO; a closed file,
		// ErrClosed: both are the end of the terminal.
		if errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed) {
			return 0, io.EOF
		}
	}
	return n, err
}

// Write types b into the terminal.
func (p *PTY) Write(b []byte) (int, error) { return p.w.Write(b) }

// Route says where the program runs: "local", or the SSH route.
func (p *PTY) Route() string { return p.route }

// Pid returns the local program's process ID, which is also its session
// and process group ID; 0 for a remote one.
func (p *PTY) Pid() int { return p.pid }

// Sandbox reports whether the program runs inside the kernel sandbox and,
// when it does not, why (a remote host runs none).
func (p *PTY) Sandbox() (sandboxed bool, unsandboxed string) {
	return p.sandboxed, p.unsandboxed
}

// Done returns a channel closed once Wait has returned.
func (p *PTY) Done() <-chan struct{} { return p.done }

// Wait waits for the program to exit and returns its Result (no output:
// that is what Read returned). Locally, every process left on the terminal
// is then ended, as Local.Run ends what a command leaves behind. Every
// call returns the same values.
func (p *PTY) Wait() (Result, error) {
	p.waitOnce.Do(func() {
		p.res, p.err = p.waitFn()
		p.release()
		close(p.done)
	})
	<-p.done
	return p.res, p.err
}

// Hangup hangs the terminal up, as closing a terminal window does: the
// program gets SIGHUP (an interactive shell passes it on to its jobs and
// exits). It returns at once; Wait waits for the end.
func (p *PTY) Hangup() error { return p.hangup() }

// Close ends the program and everything on its terminal — Hangup, then
// locally SIGKILL to the whole tree if it is still running after the
// Local's grace — waits for it, and frees the terminal, which ends a Read
// in progress. Call it once the program has ended by itself, too. It
// returns Wait's error.
func (p *PTY) Close() error {
	p.closeOnce.Do(func() { _ = p.hangup() })
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		_, _ = p.Wait()
	}()
	t := time.NewTimer(p.grace)
	defer t.Stop()
	select {
	case <-waited:
	case <-t.C:
		p.kill()
		<-waited
	}
	p.freeOnce.Do(p.free)
	return p.err
}

// StartPTY starts cmd on a new pseudo-terminal of the given size and
// returns at once. The command runs as [Local.Start] runs one — the
// sandbox, the private environment, descendant tracking, Timeout — but in
// a session of its own whose controlling terminal is the PTY (so its
// session and process group ID is its Pid), with the terminal as its
// standard input, output and error; cmd.Stdin must be nil and cmd's output
// cap and OnOutput do not apply (read the PTY). ctx bounds the program's
// life, as Start's does.
func (l *Local) StartPTY(ctx context.Context, cmd Command, size PTYSize) (*PTY, error) {
	if cmd.Stdin != nil {
		return nil, ErrPTYStdin
	}
	if l.Sandbox != nil && !cmd.Sudo {
		// In a view: the terminal is opened in the view's own devpts, so
		// that no other session's terminal is in sight.
		sz := size.OrDefault()
		proc, res, err := l.launch(ctx, cmd, nil, &sz)
		switch {
		case err == nil:
			master, err := nonblockingMaster(proc.nc.master)
			if err != nil {
				_ = proc.Signal(syscall.SIGKILL)
				_, _ = proc.Wait()
				return nil, err
			}
			return l.newLocalPTY(proc, res, master), nil
		case !errors.Is(err, errNoViews):
			return nil, err
		}
	}
	master, tty, err := openPTY(size.OrDefault())
	if err != nil {
		return nil, err
	}
	proc, res, err := l.launch(ctx, cmd, tty, nil)
	_ = tty.Close() // the program has its own copies
	if err != nil {
		_ = master.Close()
		return nil, err
	}
	return l.newLocalPTY(proc, res, master), nil
}

// newLocalPTY is the PTY of a local program on master.
func (l *Local) newLocalPTY(proc *Process, res Result, master *os.File) *PTY {
	p := &PTY{
		r: master, w: master, route: "local", pid: proc.Pid(),
		sandboxed: res.Sandboxed, unsandboxed: res.Unsandboxed,
		done:    make(chan struct{}),
		hangup:  func() error { return ignoreDone(proc.Signal(syscall.SIGHUP)) },
		kill:    func() { _ = proc.Signal(syscall.SIGKILL) },
		waitFn:  proc.Wait,
		release: func() {},
		// The master stays open until Close, so that what the program
		// wrote last can still be read after it exited.
		free:  func() { _ = master.Close() },
		grace: l.grace(),
	}
	return p
}

// nonblockingMaster returns a non-blocking duplicate of a terminal's
// master, handled by the runtime's poller (so that closing it ends a Read
// in progress), and closes m.
func nonblockingMaster(m *os.File) (*os.File, error) {
	defer m.Close()
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("exec: pseudo-terminal: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("exec: pseudo-terminal: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

func ignoreDone(err error) error {
	if errors.Is(err, ErrProcessDone) {
		return nil
	}
	return err
}

// openPTY opens a pseudo-terminal pair: the master non-blocking, so that
// closing it ends a Read in progress, and the terminal (the slave) for
// the program.
func openPTY(size PTYSize) (master, tty *os.File, err error) {
	m, tty, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("exec: open a pseudo-terminal: %w", err)
	}
	fail := func(err error) (*os.File, *os.File, error) {
		_ = m.Close()
		_ = tty.Close()
		return nil, nil, fmt.Errorf("exec: pseudo-terminal: %w", err)
	}
	if err := pty.Setsize(m, &pty.Winsize{Rows: size.Rows, Cols: size.Cols}); err != nil {
		return fail(err)
	}
	// pty's ioctls made m blocking (Fd): a Read on it could not be
	// interrupted. A non-blocking duplicate is handled by the runtime's
	// poller.
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	_ = m.Close()
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		_ = tty.Close()
		return nil, nil, fmt.Errorf("exec: pseudo-terminal: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), tty, nil
}
