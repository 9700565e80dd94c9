package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
)

// SSH runs commands on one remote host over the Router's pooled
// connections. Get one from Router.Resolve (Target.Runner) or Router.SSH.
//
// Each Run opens a channel on a multiplexed connection for (host, login,
// principal), dialling it on first use. The command line is built by
// RemoteCommandLine, or for a host whose shell is cmd.exe or PowerShell
// (HostConfig.Shell, SSH.Shell) by CmdCommandLine or
// PowerShellCommandLine. When the Command's Timeout passes or ctx ends, the
// remote process gets SIGTERM, then SIGKILL after the grace period, and
// the channel is closed. Output is capped per stream while it streams,
// exactly as Local caps it.
//
// An SSH is safe for concurrent use.
type SSH struct {
	r         *Router
	ep        *Endpoint
	principal string
}

var _ exec.Runner = (*SSH)(nil)

// Endpoint returns the resolved destination.
func (s *SSH) Endpoint() Endpoint { return *s.ep }

// Principal returns the caller identity whose connections this SSH uses.
func (s *SSH) Principal() string { return s.principal }

// ErrNoExitStatus means the remote command ended without reporting an exit
// status or a signal.
var ErrNoExitStatus = errors.New("exec: remote command ended without an exit status")

// Run runs cmd on the host and waits for it. See Runner for the error
// contract: a non-zero exit is a Result; a *DialError, *DisconnectError or
// a refusal is an error.
//
// With RouterConfig.Helper, the command runs through the host's rigout
// helper (see HelperConfig); where it cannot run and the host's mode is
// HelperAuto, the command takes the plain path and the Result's Route and
// Unsandboxed say why.
func (s *SSH) Run(ctx context.Context, cmd exec.Command) (exec.Result, error) {
	p, res, err := s.start(ctx, cmd)
	if err != nil {
		return res, err
	}
	return p.Wait()
}

// start starts cmd through the host's helper, or on the plain path when
// the helper is off or (under HelperAuto) cannot run there.
func (s *SSH) start(ctx context.Context, cmd exec.Command) (*SSHProcess, exec.Result, error) {
	if sh, ok := s.windowsShell(); ok {
		// The helper is a Linux program: a Windows host takes the plain
		// path, quietly under HelperAuto.
		switch s.helperMode() {
		case HelperOff:
			return s.launch(ctx, cmd, "")
		case HelperRequire:
			res := exec.Result{Route: s.ep.Route(), ExitCode: -1}
			return nil, res, fmt.Errorf("exec: %s runs %s: the rigout helper runs only on Linux hosts, and the host's helper mode is require: %w", s.ep.Name, sh, ErrHelperRequired)
		}
		return s.launch(ctx, cmd, "Windows")
	}
	p, res, used, why, err := s.startViaHelper(ctx, cmd)
	if used {
		return p, res, err
	}
	return s.launch(ctx, cmd, why)
}

// connLost waits briefly for the connection's supervisor to record why it
// ended, when a session failed because of it.
func (s *SSH) connLost(c *conn) error {
	select {
	case <-c.dead:
	case <-time.After(time.Second):
	}
	return c.lost()
}

// open opens a session channel and starts line on it. If ctx ends first,
// a helper goroutine finishes the work in the background: it stops a
// command that did start, and gives back the channel slot.
func (s *SSH) open(ctx context.Context, c *conn, line string, cmd exec.Command, sh exec.Shell, stdout *exec.Capture, stderr *exec.PIDFilter) (*ssh.Session, error) {
	type started struct {
		sess *ssh.Session
		err  error
	}
	ch := make(chan started, 1)
	s.r.pool.goTracked(func() {
		sess, err := c.client.NewSession()
		if err == nil {
			sess.Stdin = cmd.Stdin
			if len(cmd.Secrets) > 0 {
				first := exec.SecretsLine(cmd.Secrets)
				if sh == exec.ShellPowerShell {
					first = exec.PowerShellSecretsLine(cmd.Secrets)
				}
				in := []io.Reader{strings.NewReader(first)}
				if cmd.Stdin != nil {
					in = append(in, cmd.Stdin)
				}
				sess.Stdin = io.MultiReader(in...)
			}
			sess.Stdout = stdout
			sess.Stderr = stderr
			if err = sess.Start(line); err != nil {
				sess.Close()
				sess = nil
			}
		}
		ch <- started{sess, err}
	})
	select {
	case st := <-ch:
		return st.sess, st.err
	case <-ctx.Done():
		// The slot stays taken until the helper is done with it.
		c.p.mu.Lock()
		c.active++
		c.p.mu.Unlock()
		s.r.pool.goTracked(func() {
			defer c.release()
			st := <-ch
			if st.sess == nil {
				return
			}
			waited := make(chan error, 1)
			s.r.pool.goTracked(func() { waited <- st.sess.Wait() })
			s.stop(c, st.sess, waited, stderr)
		})
		return nil, ctx.Err()
	}
}

// stop ends the remote command: SIGTERM, then SIGKILL after the grace
// period, each sent both as an SSH "signal" request and, when the remote
// process id is known, as kill(1) on its process group from a second
// channel (see PIDFilter). Then it closes the channel and waits for the
// session to end. A peer that does not close the channel within the drain
// period is not answering: the connection is closed so that nothing waits
// on it. It returns the last signal sent and the session's end.
func (s *SSH) stop(c *conn, sess *ssh.Session, waited <-chan error, pids *exec.PIDFilter) (string, error) {
	s.signal(c, sess, pids.WaitProcessID(min(exec.PIDWait, s.r.cfg.Grace), nil), ssh.SIGTERM)
	grace := time.NewTimer(s.r.cfg.Grace)
	defer grace.Stop()
	select {
	case err := <-waited:
		return "SIGTERM", err
	case <-grace.C:
	}
	s.signal(c, sess, pids.ProcessID(), ssh.SIGKILL)
	drain := time.NewTimer(s.r.cfg.Drain)
	defer drain.Stop()
	select {
	case err := <-waited:
		return "SIGKILL", err
	case <-drain.C:
	}
	sess.Close()
	drain.Reset(s.r.cfg.Drain)
	select {
	case err := <-waited:
		return "SIGKILL", err
	case <-drain.C:
	}
	c.kill(errors.New("the peer did not close a channel after SIGKILL"))
	return "SIGKILL", <-waited
}

// signal sends sig to the remote command: a "signal" request on its
// channel, and kill(1) to its process group on a channel of its own.
func (s *SSH) signal(c *conn, sess *ssh.Session, pid int, sig ssh.Signal) {
	_ = sess.Signal(sig)
	if pid <= 1 {
		return
	}
	s.r.pool.goTracked(func() { s.killGroup(c, pid, sig) })
}

// killGroup runs kill on the host, on c or, when c has no room for another
// channel, on another connection of the same key. It gives up after the
// drain period.
func (s *SSH) killGroup(c *conn, pid int, sig ssh.Signal) {
	line := fmt.Sprintf("kill -%s -- -%d 2>/dev/null || kill -%s %d 2>/dev/null; true", sig, pid, sig, pid)
	ctx, cancel := context.WithTimeout(context.Background(), s.r.cfg.Drain+s.r.cfg.Grace)
	defer cancel()
	run := func(client *ssh.Client) error {
		sess, err := client.NewSession()
		if err != nil {
			return err
		}
		defer sess.Close()
		stop := context.AfterFunc(ctx, func() { sess.Close() })
		defer stop()
		return sess.Run(line)
	}
	err := run(c.client)
	var oce *ssh.OpenChannelError
	if !errors.As(err, &oce) {
		return
	}
	other, err := s.r.pool.acquire(ctx, s.ep.poolKey(s.principal), func(dctx context.Context) (*conn, error) {
		return s.r.dialEndpoint(dctx, s.ep, s.principal)
	})
	if err != nil {
		return
	}
	defer other.release()
	_ = run(other.client)
}
