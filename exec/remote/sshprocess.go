package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/rigout/rigout/exec"
)

// SSHProcess is a command that [SSH.Start] started on a remote host and
// that may still be running: one session channel on a pooled connection.
// Signal may be called from any goroutine; Wait may be called by several
// goroutines and returns the same Result to each.
type SSHProcess struct {
	s      *SSH
	c      *conn
	sess   *ssh.Session
	pids   *exec.PIDFilter
	stdout *exec.Capture
	stderr *exec.Capture
	start  exec.Result // what launch knew; the watcher completes a copy
	res    exec.Result // the watcher's, once done is closed
	err    error
	done   chan struct{}
	helper *helperProc // set when it runs through the rigout helper
}

// Start starts cmd on the host and returns at once; [SSHProcess.Wait]
// waits for it. It runs exactly as [SSH.Run] would — the same command
// line, RouterConfig.Check, output capture and cap, Timeout (connecting
// included) — and ctx bounds the command's life as Run's ctx does: when it
// ends, the remote command gets SIGTERM, then SIGKILL after the grace
// period, and its channel is closed. Start returns an error only when the
// command could not start: refused, not connected, or the channel could
// not be opened.
//
// With RouterConfig.Helper, the command runs through the host's rigout
// helper, as with Run.
func (s *SSH) Start(ctx context.Context, cmd exec.Command) (*SSHProcess, error) {
	p, _, err := s.start(ctx, cmd)
	return p, err
}

// StartHandle is Start returning the process as a Handle, for what keeps
// background processes without knowing SSH (see HandleStarter).
func (s *SSH) StartHandle(ctx context.Context, cmd exec.Command) (exec.Handle, error) {
	p, err := s.Start(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// What an SSH host can do beyond Run, for the families that assert it.
var (
	_ exec.Hosts            = (*Router)(nil)
	_ exec.FanOuter         = (*Router)(nil)
	_ exec.ShellDetector    = (*SSH)(nil)
	_ exec.PTYStarter       = (*SSH)(nil)
	_ exec.HandleStarter    = (*SSH)(nil)
	_ exec.PolicyReadlinker = (*SSH)(nil)
	_ exec.Handle           = (*SSHProcess)(nil)
)

// Pid returns the remote process id of the command (also its process
// group there), or 0 if the host has not reported it yet. It is a pid on
// the remote host, not on this machine.
func (p *SSHProcess) Pid() int {
	if p.helper != nil {
		return int(p.helper.pid.Load())
	}
	return p.pids.ProcessID()
}

// Route returns the SSH route the command took.
func (p *SSHProcess) Route() string { return p.start.Route }

// Sandbox reports whether the command runs inside a sandbox on the host
// (through the rigout helper), and why not when it does not.
func (p *SSHProcess) Sandbox() (sandboxed bool, unsandboxed string) {
	return p.start.Sandboxed, p.start.Unsandboxed
}

// Signal sends sig to the remote command: an SSH "signal" request on its
// channel and, when the remote process id is known, kill(1) on its
// process group from a second channel (sshd ignores signal requests for
// some logins; see PIDFilter). It returns [ErrProcessDone] once the
// command has ended.
func (p *SSHProcess) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return exec.ErrProcessDone
	default:
	}
	if p.helper != nil {
		// The helper signals the command's process group on the host; a
		// SIGKILL also ends the call, should the host not answer.
		err := p.helper.h.send(exec.HelperRequest{ID: p.helper.id, Op: "signal", Signal: int(sig)})
		if sig == syscall.SIGKILL {
			p.helper.cancel()
		}
		return err
	}
	name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
	if name == "" {
		return fmt.Errorf("exec: signal %d has no SSH name", int(sig))
	}
	p.s.signal(p.c, p.sess, p.pids.WaitProcessID(exec.PIDWait, p.done), ssh.Signal(name))
	return nil
}

// Wait waits for the command to end and its output to drain, and returns
// what it did, as [SSH.Run] does. Every call returns the same values.
func (p *SSHProcess) Wait() (exec.Result, error) {
	<-p.done
	return p.res, p.err
}

// launch connects (or reuses a pooled connection), opens a session channel
// and starts cmd on it. On failure it returns the Result Run reports with
// its error. noHelper, if set, says why the rigout helper is not used
// although the host's mode is auto: the Result's Route and Unsandboxed say
// so.
func (s *SSH) launch(ctx context.Context, cmd exec.Command, noHelper string) (*SSHProcess, exec.Result, error) {
	res := exec.Result{Route: s.ep.Route(), ExitCode: -1, Unsandboxed: "remote host: the far side runs no sandbox"}
	if noHelper != "" {
		res.Route += " [no rigout helper: " + noHelper + "]"
		res.Unsandboxed = "remote host without the rigout helper (" + noHelper + "): the far side runs no sandbox"
	}
	if err := cmd.Validate(); err != nil {
		return nil, res, err
	}
	// The shell known before connecting (configured or detected earlier)
	// shapes the line now; else it is detected on the connection.
	sh, _, known := s.knownShell()
	var line string
	var err error
	if known {
		s.windowsRoute(&res, sh, noHelper)
		if line, err = s.lineFor(cmd, sh); err != nil {
			return nil, res, err
		}
	}
	if s.r.cfg.Check != nil {
		if err := s.r.cfg.Check(ctx, s.ep.Name, cmd); err != nil {
			return nil, res, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, res, fmt.Errorf("exec: not started: %w", err)
	}

	// The Timeout bounds the whole run, connecting included.
	start := time.Now()
	var deadline *time.Timer
	actx, cancel := ctx, context.CancelFunc(func() {})
	if cmd.Timeout > 0 {
		deadline = time.NewTimer(cmd.Timeout)
		actx, cancel = context.WithTimeout(ctx, cmd.Timeout)
	}
	fail := func(r exec.Result, err error) (*SSHProcess, exec.Result, error) {
		cancel()
		if deadline != nil {
			deadline.Stop()
		}
		return nil, r, err
	}

	stdout := exec.NewCapture(&cmd, exec.Stdout)
	stderr := exec.NewCapture(&cmd, exec.Stderr)
	pids := exec.NewPIDFilter(stderr)

	var c *conn
	var sess *ssh.Session
	for attempt := 0; ; attempt++ {
		c, err = s.r.pool.acquire(actx, s.ep.poolKey(s.principal), func(dctx context.Context) (*conn, error) {
			return s.r.dialEndpoint(dctx, s.ep, s.principal)
		})
		if err != nil {
			if isContextError(err) && ctx.Err() == nil && cmd.Timeout > 0 {
				return fail(res, &DialError{Host: s.ep.Name, Address: s.ep.Address(),
					Err: fmt.Errorf("not connected within the command timeout %v: %w", cmd.Timeout, ErrConnectTimeout)})
			}
			if isContextError(err) {
				return fail(res, fmt.Errorf("exec: not started: %w", err))
			}
			return fail(res, err)
		}
		if !known {
			// First contact: the shell decides the line (see SSH.Shell).
			if sh, _, err = s.detectOn(actx, c); err == nil {
				s.windowsRoute(&res, sh, noHelper)
				line, err = s.lineFor(cmd, sh)
			}
			if err != nil {
				c.release()
				return fail(res, err)
			}
			known = true
		}
		if attempt == 0 {
			// Connected (the dial overlapped whatever Hold waits for).
			if err := cmd.Proceed(); err != nil {
				c.release()
				return fail(res, err)
			}
		}
		sess, err = s.open(actx, c, line, cmd, sh, stdout, pids)
		if err == nil {
			break
		}
		var oce *ssh.OpenChannelError
		if errors.As(err, &oce) && attempt < 2 {
			// The server limits sessions per connection (sshd
			// MaxSessions): treat this one as full and use another.
			c.saturate()
			c.release()
			continue
		}
		c.release()
		if isContextError(err) {
			if ctx.Err() == nil && cmd.Timeout > 0 {
				res.TimedOut = true
				return fail(res, fmt.Errorf("exec: not started on %s within the timeout %v: %w", s.ep.Name, cmd.Timeout, err))
			}
			return fail(res, fmt.Errorf("exec: not started: %w", err))
		}
		if cause := c.lost(); cause != nil {
			return fail(res, &DisconnectError{Host: s.ep.Name, Err: cause})
		}
		return fail(res, fmt.Errorf("exec: start on %s: %w", s.ep.Name, err))
	}

	p := &SSHProcess{s: s, c: c, sess: sess, pids: pids, stdout: stdout, stderr: stderr, start: res, done: make(chan struct{})}
	waited := make(chan error, 1)
	s.r.pool.goTracked(func() { waited <- sess.Wait() })
	s.r.pool.goTracked(func() {
		defer close(p.done)
		defer cancel()
		defer c.release()
		var timer <-chan time.Time
		if deadline != nil {
			defer deadline.Stop()
			timer = deadline.C
		}
		p.res, p.err = p.watch(ctx, start, timer, waited)
	})
	return p, res, nil
}

// watch waits for the command to end, its timeout to pass or ctx to end,
// stops it on the latter two, and returns what it did.
func (p *SSHProcess) watch(ctx context.Context, start time.Time, deadline <-chan time.Time, waited <-chan error) (exec.Result, error) {
	s, c, res := p.s, p.c, p.start
	var why stopReason
	var waitErr error
	select {
	case waitErr = <-waited:
	case <-deadline:
		why = stopTimeout
	case <-ctx.Done():
		why = stopCanceled
	}
	lastSignal := ""
	if why != stopNone {
		lastSignal, waitErr = s.stop(c, p.sess, waited, p.pids)
	}
	p.pids.Close()
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = p.stdout.Output(), p.stderr.Output()
	res.TimedOut = why == stopTimeout
	res.Canceled = why == stopCanceled

	var exitErr *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case waitErr == nil:
		res.ExitCode = 0
	case errors.As(waitErr, &exitErr):
		if sig := exitErr.Signal(); sig != "" {
			res.ExitCode = -1
			res.Signal = "SIG" + strings.TrimPrefix(sig, "SIG")
		} else {
			res.ExitCode = exitErr.ExitStatus()
		}
	case why != stopNone:
		// We stopped it and the channel closed without a status.
		res.ExitCode, res.Signal = -1, lastSignal
	case errors.As(waitErr, &missing):
		if cause := s.connLost(c); cause != nil {
			return res, &DisconnectError{Host: s.ep.Name, Err: cause}
		}
		return res, fmt.Errorf("exec: %s: %w", s.ep.Name, ErrNoExitStatus)
	default:
		if cause := s.connLost(c); cause != nil {
			return res, &DisconnectError{Host: s.ep.Name, Err: cause}
		}
		return res, fmt.Errorf("exec: %s: %w", s.ep.Name, waitErr)
	}
	return res, nil
}

// stopReason says why a remote command was stopped.
type stopReason int

const (
	stopNone stopReason = iota
	stopTimeout
	stopCanceled
)
