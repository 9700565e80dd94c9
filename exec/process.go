package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// ErrProcessDone is returned by [Process.Signal] once the process's
// leader has exited (its pid may then be reused, so it is not signalled).
var ErrProcessDone = errors.New("exec: process already finished")

// Process is a command that [Local.Start] started and that may still be
// running. Signal may be called from any goroutine; Wait may be called by
// several goroutines and returns the same Result to each.
type Process struct {
	l   *Local
	c   *osexec.Cmd
	nc  *nsChild // instead of c, for a command in a view
	tr  *tracker
	res Result // filled in by launch, completed by wait
	// sandboxed and unsandboxed are launch's, for Sandbox: res changes.
	sandboxed   bool
	unsandboxed string
	start       time.Time
	stdout      *Capture
	stderr      *Capture
	exited      chan struct{}
	why         stopReason
	watch       sync.WaitGroup

	waitOnce sync.Once
	done     chan struct{}
	waitErr  error

	// mu protects the following.
	mu     sync.Mutex
	reaped bool // the leader has exited: its pid may be reused
}

// Start starts cmd and returns at once; [Process.Wait] waits for it. It
// runs exactly as [Local.Run] would — the same process group, cgroup or
// marker tracking, sandbox, output capture and cap, Timeout — and ctx
// bounds the process's life as Run's ctx does: when it ends, the process
// group gets SIGTERM and, Grace later, SIGKILL. Start returns an error
// only when the command could not start.
func (l *Local) Start(ctx context.Context, cmd Command) (*Process, error) {
	p, _, err := l.launch(ctx, cmd, nil, nil)
	return p, err
}

// Pid returns the process ID of the command's leader, which is also its
// process group ID.
func (p *Process) Pid() int { return p.tr.pgid }

// Sandbox reports whether the command runs inside the kernel sandbox and,
// when it does not, why (as Result.Sandboxed and Result.Unsandboxed).
func (p *Process) Sandbox() (sandboxed bool, unsandboxed string) {
	return p.sandboxed, p.unsandboxed
}

// Signal sends sig to the whole process tree: the process group and, with
// a cgroup, every process in it. It returns [ErrProcessDone] once the
// leader has exited.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return ErrProcessDone
	}
	p.tr.signal(sig)
	return nil
}

// Wait waits for the process to exit and its output to drain, and returns
// what it did, as [Local.Run] does. Every call returns the same values.
func (p *Process) Wait() (Result, error) {
	p.waitOnce.Do(func() {
		defer close(p.done)
		p.res, p.waitErr = p.wait()
	})
	<-p.done
	return p.res, p.waitErr
}

// launch starts cmd. On failure it returns the Result Run reports with its
// error. With tty, the command's standard streams are that terminal, which
// becomes its controlling terminal in a session of its own (StartPTY).
// With viewPTY, the command runs in a view, on a terminal of that size
// opened in the view's own devpts (the Process's nc.master), or fails with
// errNoViews.
func (l *Local) launch(ctx context.Context, cmd Command, tty *os.File, viewPTY *PTYSize) (*Process, Result, error) {
	res := Result{Route: "local", ExitCode: -1}
	if err := cmd.Validate(); err != nil {
		return nil, res, err
	}
	if err := ctx.Err(); err != nil {
		return nil, res, fmt.Errorf("exec: not started: %w", err)
	}
	env := l.environ(mergeSecrets(cmd.Env, cmd.Secrets), cmd.Dir)
	argv := cmd.Argv
	var path string
	if cmd.Shell != "" {
		argv = []string{l.shellPath(), "-c", cmd.Shell}
		if len(cmd.Direct) > 0 && !cmd.Sudo && l.Shell == "" && filepath.Base(argv[0]) == "bash" {
			if p, e, ok := direct(cmd.Direct, env, cmd.Dir); ok {
				argv, path, env = cmd.Direct, p, e
			}
		}
	}
	if cmd.Sudo {
		argv = append([]string{"sudo", "-n", "--"}, argv...)
	}
	if path == "" {
		p, err := osexec.LookPath(argv[0])
		if err != nil {
			return nil, res, fmt.Errorf("exec: %w", err)
		}
		path = p
	}

	stdout := NewCapture(&cmd, Stdout)
	stderr := NewCapture(&cmd, Stderr)
	stdout.bufs, stderr.bufs = &l.bufs, &l.bufs
	newCmd := func(marker string) *osexec.Cmd {
		e := env
		if marker != "" {
			e = append(slices.Clip(env), marker)
		}
		c := &osexec.Cmd{
			Path:        path,
			Args:        argv,
			Dir:         cmd.Dir,
			Env:         e,
			Stdin:       cmd.Stdin,
			Stdout:      stdout,
			Stderr:      stderr,
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
			// Output pipes are closed this long after the process
			// exits even if a background descendant still holds them,
			// so Wait cannot hang.
			WaitDelay: l.drain(),
		}
		if tty != nil {
			// A session leader is its own group leader: the tracker's
			// process group is the session's.
			c.Stdin, c.Stdout, c.Stderr = tty, tty, tty
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		}
		return c
	}

	if cmd.Dir != "" {
		if fi, err := os.Stat(cmd.Dir); err != nil {
			return nil, res, fmt.Errorf("exec: working directory: %w", err)
		} else if !fi.IsDir() {
			return nil, res, fmt.Errorf("exec: working directory %s is not a directory", cmd.Dir)
		}
	}

	sandbox := l.Sandbox
	switch {
	case sandbox == nil:
		res.Unsandboxed = "no sandbox configured"
	case cmd.Sudo:
		// sudo is setuid: under no_new_privs it cannot elevate, so the
		// command runs unconfined, and says so.
		res.Unsandboxed = "sudo needs setuid, which the sandbox's no_new_privs forbids: ran outside the sandbox"
		sandbox = nil
	case sandbox.abi == 0 && sandbox.seatbelt == nil:
		res.Unsandboxed = sandbox.Status().Reason
	}

	start := time.Now()
	if sandbox != nil {
		// In the view of the call's principal, when the sandbox has views.
		var hold func() error
		if cmd.Hold != nil {
			hold = cmd.Proceed
		}
		nc, err := sandbox.spawnInView(ctx, spawnRequest{
			path: path, argv: argv, env: env, dir: cmd.Dir, tty: tty, pty: viewPTY,
			stdin: cmd.Stdin, stdout: stdout, stderr: stderr, hold: hold,
		})
		switch {
		case err == nil:
			res.Sandboxed, res.Unsandboxed = true, ""
			p := &Process{
				l: l, nc: nc, tr: &tracker{pgid: nc.pid, view: true}, res: res, start: start,
				stdout: stdout, stderr: stderr,
				exited: make(chan struct{}), done: make(chan struct{}), sandboxed: true,
			}
			p.watch.Go(func() {
				p.why = l.watch(ctx, cmd.Timeout, p.tr, p.exited)
			})
			return p, res, nil
		case !errors.Is(err, errNoViews):
			return nil, res, fmt.Errorf("exec: start %s: %w", argv[0], err)
		}
	}
	if viewPTY != nil {
		return nil, res, errNoViews
	}
	// Outside a view the command cannot be made and held: wait first.
	if err := cmd.Proceed(); err != nil {
		return nil, res, err
	}
	c := newCmd("")
	call := CallFrom(ctx)
	cg := l.attach(c, call)
	marker := ""
	if cg == nil && !l.LeaveDescendants {
		marker = newCallMarker(call)
		c.Env = append(slices.Clip(env), marker)
	}
	sandboxed, err := l.start(ctx, sandbox, c)
	if err != nil && cg != nil && !errors.Is(err, ErrSandboxClosed) {
		// Starting into the cgroup may be what failed (no delegation,
		// no clone3): try once without it, and stop using cgroups if
		// that works.
		_ = cg.close()
		cg = nil
		marker = newCallMarker(call)
		c2 := newCmd(marker)
		firstErr := err
		if sandboxed, err = l.start(ctx, sandbox, c2); err == nil {
			l.disableCgroups(firstErr)
			c = c2
		}
	}
	if err != nil {
		if cg != nil {
			_ = cg.close()
		}
		return nil, res, fmt.Errorf("exec: start %s: %w", argv[0], err)
	}
	res.Sandboxed = sandboxed
	pgid := c.Process.Pid
	tr := &tracker{cg: cg, pgid: pgid, marker: marker}
	if marker != "" {
		// The leader is alive or a zombie until Wait: its start time
		// bounds the scan to processes started since.
		tr.since, _ = procStart(pgid)
	}
	p := &Process{
		l: l, c: c, tr: tr, res: res, start: start, stdout: stdout, stderr: stderr,
		exited: make(chan struct{}), done: make(chan struct{}),
		sandboxed: res.Sandboxed, unsandboxed: res.Unsandboxed,
	}

	// The watcher ends the process group when the timeout passes or the
	// caller's context ends, and stops as soon as the process has exited.
	p.watch.Go(func() {
		p.why = l.watch(ctx, cmd.Timeout, tr, p.exited)
	})
	return p, res, nil
}

// wait is Wait's body: Run's second half.
func (p *Process) wait() (Result, error) {
	if p.nc != nil {
		return p.waitView()
	}
	res, c, tr := p.res, p.c, p.tr
	waitExited(c.Process.Pid)
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	waitErr := c.Wait()
	res.Duration = time.Since(p.start)
	close(p.exited)
	p.watch.Wait()
	why := p.why

	res.Stdout, res.Stderr = p.stdout.Output(), p.stderr.Output()
	res.TimedOut = why == stopTimeout
	res.Canceled = why == stopCanceled
	if st, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		res.ExitCode = -1
		res.Signal = signalName(st.Signal())
	} else if c.ProcessState != nil {
		res.ExitCode = c.ProcessState.ExitCode()
	}
	var exitErr *osexec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, osexec.ErrWaitDelay) {
		return res, fmt.Errorf("exec: wait: %w", waitErr)
	}
	// Whatever the leader did, nothing of the call may outlive a timeout
	// or a cancellation, nor, unless asked, the call itself.
	if why != stopNone {
		tr.signal(syscall.SIGKILL)
	}
	res.Orphans = tr.end(p.l.LeaveDescendants)
	return res, nil
}

// waitView is wait for a command in a view. Its leader is the first
// process of its own PID namespace: when it exits, the kernel has ended
// every process it left behind before the spawner hears of the exit, so
// there is nothing left to track.
func (p *Process) waitView() (Result, error) {
	res := p.res
	st := p.nc.wait(p.l.drain())
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	res.Duration = time.Since(p.start)
	close(p.exited)
	p.watch.Wait()
	why := p.why
	res.Stdout, res.Stderr = p.stdout.Output(), p.stderr.Output()
	res.TimedOut = why == stopTimeout
	res.Canceled = why == stopCanceled
	if st.Signaled() {
		res.ExitCode = -1
		res.Signal = signalName(st.Signal())
	} else {
		res.ExitCode = st.ExitStatus()
	}
	return res, nil
}
