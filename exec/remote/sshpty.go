package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
)

// StartPTY starts cmd on the host in a session channel with a
// pseudo-terminal (RequestPty, then the command line RemoteCommandLine
// builds, run by the login shell) on the Router's pooled connection for
// this host and principal, and returns at once. The terminal type is
// cmd.Env's TERM, else "dumb". The channel holds one of the connection's
// slots until the program ends. cmd.Stdin must be nil; Timeout, the output
// cap and OnOutput do not apply. ctx bounds connecting and the program's
// life: when it ends, the channel is closed, which hangs the remote
// terminal up.
//
// Through the rigout helper (RouterConfig.Helper, the host's mode not
// off), the terminal is opened on the host inside the principal's view
// (Local.StartPTY there), over the helper's session instead of a channel
// of its own: the login's key and agent paths are out of its sight, and
// nothing started on it outlives Close. Secrets then reach its
// environment in the request, not through the terminal. Where the helper
// cannot run under HelperAuto, the plain path below is taken and the
// PTY's Route says why; under HelperRequire the terminal is refused.
//
// On the plain path the far side runs no sandbox, and tracks no
// descendants: a hang-up (Close) ends the remote shell and the jobs it
// passes SIGHUP to; a process that ignores SIGHUP or left the terminal's
// session survives.
func (s *SSH) StartPTY(ctx context.Context, cmd exec.Command, size exec.PTYSize) (*exec.PTY, error) {
	if cmd.Stdin != nil {
		return nil, exec.ErrPTYStdin
	}
	hp, used, noHelper, err := s.startPTYViaHelper(ctx, cmd, size)
	if used {
		return hp, err
	}
	return s.startPlainPTY(ctx, cmd, size, noHelper)
}

// startPlainPTY is StartPTY over a session channel of its own.
// noHelper, if set, is why the host's helper is not used, which its
// route and result say.
func (s *SSH) startPlainPTY(ctx context.Context, cmd exec.Command, size exec.PTYSize, noHelper string) (*exec.PTY, error) {
	if len(cmd.Secrets) > 0 {
		// The line of secrets would go through the terminal, which echoes.
		return nil, fmt.Errorf("exec: secrets cannot be passed to an SSH terminal (its input is echoed); use a command")
	}
	sh, _, err := s.shell(ctx)
	if err != nil {
		if isContextError(err) {
			return nil, fmt.Errorf("exec: not started: %w", err)
		}
		return nil, err
	}
	if sh.Windows() {
		// The terminal tool drives a POSIX shell (its prompt and end
		// markers); cmd.exe and PowerShell terminals are not built.
		return nil, fmt.Errorf("%w: a terminal session on %s, which runs %s (run commands with execute_command)", exec.ErrShellUnsupported, s.ep.Name, sh)
	}
	line, err := s.lineFor(cmd, sh)
	if err != nil {
		return nil, err
	}
	line = strings.TrimPrefix(line, exec.PIDMarkerPrefix)
	if s.r.cfg.Check != nil {
		if err := s.r.cfg.Check(ctx, s.ep.Name, cmd); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exec: not started: %w", err)
	}
	if err := cmd.Proceed(); err != nil {
		return nil, err
	}
	term := cmd.Env["TERM"]
	if term == "" {
		term = "dumb"
	}
	size = size.OrDefault()
	key := s.ep.poolKey(s.principal)
	dial := func(dctx context.Context) (*conn, error) { return s.r.dialEndpoint(dctx, s.ep, s.principal) }
	for attempt := 0; ; attempt++ {
		c, err := s.r.pool.acquire(ctx, key, dial)
		if err != nil {
			if isContextError(err) {
				return nil, fmt.Errorf("exec: not started: %w", err)
			}
			return nil, err
		}
		p, owned, err := s.openPTY(ctx, c, line, term, size, noHelper)
		if err == nil {
			return p, nil
		}
		if owned {
			return nil, err
		}
		c.release()
		var oce *ssh.OpenChannelError
		if errors.As(err, &oce) && attempt < 2 {
			// sshd MaxSessions: treat this connection as full.
			c.saturate()
			continue
		}
		if cause := c.lost(); cause != nil {
			return nil, &DisconnectError{Host: s.ep.Name, Err: cause}
		}
		return nil, fmt.Errorf("exec: terminal on %s: %w", s.ep.Name, err)
	}
}

// openPTY opens the channel on c and starts line on a terminal. On
// success the PTY owns c's slot; on failure the caller gives it back,
// unless owned says a helper goroutine does (ctx ended first).
func (s *SSH) openPTY(ctx context.Context, c *conn, line, term string, size exec.PTYSize, noHelper string) (_ *exec.PTY, owned bool, _ error) {
	type started struct {
		p   *exec.PTY
		err error
	}
	ch := make(chan started, 1)
	s.r.pool.goTracked(func() {
		p, err := s.startPTY(ctx, c, line, term, size, noHelper)
		ch <- started{p, err}
	})
	var st started
	select {
	case st = <-ch:
	case <-ctx.Done():
		// Finish in the background: a terminal that did start is
		// closed, which gives its slot back; else the helper does.
		s.r.pool.goTracked(func() {
			if st := <-ch; st.p != nil {
				_ = st.p.Close()
			} else {
				c.release()
			}
		})
		return nil, true, fmt.Errorf("exec: not started: %w", ctx.Err())
	}
	if st.err != nil {
		return nil, false, st.err
	}
	return st.p, false, nil
}

// startPTY does openPTY's blocking work. The terminal is closed when ctx
// ends.
func (s *SSH) startPTY(ctx context.Context, c *conn, line, term string, size exec.PTYSize, noHelper string) (*exec.PTY, error) {
	sess, err := c.client.NewSession()
	if err != nil {
		return nil, err
	}
	modes := ssh.TerminalModes{ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
	if err := sess.RequestPty(term, int(size.Rows), int(size.Cols), modes); err != nil {
		sess.Close()
		return nil, fmt.Errorf("request a terminal: %w", err)
	}
	in, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	if err := sess.Start(line); err != nil {
		sess.Close()
		return nil, err
	}
	closed := make(chan struct{})
	var once sync.Once
	closeOnce := func() error {
		var err error
		once.Do(func() {
			close(closed)
			err = ignoreEOF(sess.Close())
		})
		return err
	}
	route := s.ep.Route()
	unsandboxed := "remote host: the far side runs no sandbox"
	if noHelper != "" {
		route += " [no rigout helper: " + noHelper + "]"
		unsandboxed = "remote host without the rigout helper (" + noHelper + "): the far side runs no sandbox"
	}
	// The terminal is closed when ctx ends; pty is set once it exists,
	// and a ctx that ended before closes it below.
	var pty atomic.Pointer[exec.PTY]
	stop := context.AfterFunc(ctx, func() {
		if p := pty.Load(); p != nil {
			_ = p.Close()
		}
	})
	start := time.Now()
	wait := func() (exec.Result, error) {
		err := sess.Wait()
		res := exec.Result{Route: route, ExitCode: -1, Duration: time.Since(start), Unsandboxed: unsandboxed}
		var exitErr *ssh.ExitError
		var missing *ssh.ExitMissingError
		switch {
		case err == nil:
			res.ExitCode = 0
		case errors.As(err, &exitErr):
			if sig := exitErr.Signal(); sig != "" {
				res.Signal = "SIG" + strings.TrimPrefix(sig, "SIG")
			} else {
				res.ExitCode = exitErr.ExitStatus()
			}
		case errors.As(err, &missing), errors.Is(err, io.EOF):
			select {
			case <-closed:
				res.Signal = "SIGHUP" // we hung it up
			default:
				if cause := c.lost(); cause != nil {
					return res, &DisconnectError{Host: s.ep.Name, Err: cause}
				}
				return res, fmt.Errorf("exec: %s: %w", s.ep.Name, ErrNoExitStatus)
			}
		default:
			return res, fmt.Errorf("exec: %s: %w", s.ep.Name, err)
		}
		return res, nil
	}
	p := exec.NewPTY(exec.PTYParts{
		Output: out, Input: in, Route: route, Unsandboxed: unsandboxed,
		// Closing the channel makes sshd close the terminal, which
		// sends SIGHUP to the shell.
		Hangup:  closeOnce,
		Kill:    func() { _ = closeOnce() },
		Wait:    wait,
		Release: func() { _ = closeOnce(); c.release(); stop() },
		Free:    func() {},
		Grace:   s.r.cfg.Grace,
	})
	pty.Store(p)
	if ctx.Err() != nil {
		_ = p.Close()
	}
	return p, nil
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
