package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
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

var _ Runner = (*SSH)(nil)

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
func (s *SSH) Run(ctx context.Context, cmd Command) (Result, error) {
	p, res, err := s.start(ctx, cmd)
	if err != nil {
		return res, err
	}
	return p.Wait()
}

// start starts cmd through the host's helper, or on the plain path when
// the helper is off or (under HelperAuto) cannot run there.
func (s *SSH) start(ctx context.Context, cmd Command) (*SSHProcess, Result, error) {
	if sh, ok := s.windowsShell(); ok {
		// The helper is a Linux program: a Windows host takes the plain
		// path, quietly under HelperAuto.
		switch s.helperMode() {
		case HelperOff:
			return s.launch(ctx, cmd, "")
		case HelperRequire:
			res := Result{Route: s.ep.Route(), ExitCode: -1}
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
func (s *SSH) open(ctx context.Context, c *conn, line string, cmd Command, sh Shell, stdout *capture, stderr *pidFilter) (*ssh.Session, error) {
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
				first := secretsLine(cmd.Secrets)
				if sh == ShellPowerShell {
					first = psSecretsLine(cmd.Secrets)
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
// channel (see pidFilter). Then it closes the channel and waits for the
// session to end. A peer that does not close the channel within the drain
// period is not answering: the connection is closed so that nothing waits
// on it. It returns the last signal sent and the session's end.
func (s *SSH) stop(c *conn, sess *ssh.Session, waited <-chan error, pids *pidFilter) (string, error) {
	s.signal(c, sess, pids.waitProcessID(min(pidWait, s.r.cfg.Grace), nil), ssh.SIGTERM)
	grace := time.NewTimer(s.r.cfg.Grace)
	defer grace.Stop()
	select {
	case err := <-waited:
		return "SIGTERM", err
	case <-grace.C:
	}
	s.signal(c, sess, pids.processID(), ssh.SIGKILL)
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

// RemoteCommandLine returns the command line for cmd that rigout sends in
// an SSH exec request (SSH.Run prefixes it with a builtin printf that
// reports the process id on stderr, removed before capture, so that a
// timeout can end the whole process group). The remote login shell (sshd runs it with -c) reads it,
// so every piece of data in it is quoted with mvdan.cc/sh's syntax.Quote:
// POSIX single quotes, or bash's $'…' for a string holding a control
// character such as a newline (bash, zsh, ksh and busybox ash understand
// it; dash does not). The line is:
//
//	[cd -- DIR && ][export K=V… && ]exec [sudo -n -- ]ARGV…
//
// A DIR of "~" or "~/…" starts from the remote $HOME; a relative DIR from
// the login directory.
// where ARGV is cmd.Argv quoted word by word, or for a shell command
// `SHELL -c COMMAND`. SHELL is shell when it is not empty; otherwise bash
// when the host has it, else sh, chosen on the host without running
// anything (`command -v` is built in). exec makes the command the process
// sshd started, so that a signal reaches it. Env names are validated; a
// NUL byte anywhere is an error.
func RemoteCommandLine(cmd Command, shell string) (string, error) {
	if err := cmd.Validate(); err != nil {
		return "", err
	}
	var b strings.Builder
	if len(cmd.Secrets) > 0 {
		// The values come on standard input (see secretsLine); read and
		// export them with built-ins only, so that no value is in an argv.
		b.WriteString(secretsPrefix)
	}
	q := func(s string) error {
		v, err := quoteArg(s)
		if err != nil {
			return fmt.Errorf("exec: cannot quote %q for the remote shell: %w", s, err)
		}
		b.WriteString(v)
		return nil
	}
	switch dir := cmd.Dir; {
	case dir == "":
	case dir == "~":
		b.WriteString(`cd -- "$HOME" && `)
	case strings.HasPrefix(dir, "~/"):
		b.WriteString(`cd -- "$HOME"/`)
		if err := q(dir[2:]); err != nil {
			return "", err
		}
		b.WriteString(" && ")
	default:
		b.WriteString("cd -- ")
		if err := q(dir); err != nil {
			return "", err
		}
		b.WriteString(" && ")
	}
	if len(cmd.Env) > 0 {
		// A name in Secrets takes the Secrets value (exported earlier).
		keys := make([]string, 0, len(cmd.Env))
		for k := range cmd.Env {
			if _, secret := cmd.Secrets[k]; !secret {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		b.WriteString("export")
		for _, k := range keys {
			b.WriteString(" " + k + "=")
			if err := q(cmd.Env[k]); err != nil {
				return "", err
			}
		}
		b.WriteString(" && ")
	}
	argv := cmd.Argv
	pickShell := false
	if cmd.Shell != "" {
		pickShell = shell == ""
		argv = []string{shell, "-c", cmd.Shell}
		if pickShell {
			b.WriteString("{ command -v bash >/dev/null 2>&1 && rigout_sh=bash || rigout_sh=sh; } && ")
		}
	}
	b.WriteString("exec")
	if cmd.Sudo {
		b.WriteString(" sudo -n --")
	}
	for i, a := range argv {
		b.WriteByte(' ')
		if i == 0 && pickShell {
			b.WriteString(`"$rigout_sh"`)
			continue
		}
		if err := q(a); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// secretsPrefix is what a command line with Command.Secrets starts with:
// the remote shell reads one line from standard input and evaluates it.
// read, eval, export and unset are built-ins: the values never appear in
// a process's argv. rigout_nl holds the newline that values with one are
// rebuilt with (see secretsLine).
const secretsPrefix = "rigout_nl='\n' && IFS= read -r rigout_env && eval \"$rigout_env\" && unset rigout_env rigout_nl && "

// secretsLine is the line of standard input that carries secrets: one
// export of every variable, each value single-quoted, a quote written
// '\” and a newline '"$rigout_nl"', so that the line holds no newline
// before its end.
func secretsLine(secrets map[string]string) string {
	keys := make([]string, 0, len(secrets))
	for k := range secrets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("export")
	for _, k := range keys {
		v := strings.ReplaceAll(secrets[k], "'", `'\''`)
		v = strings.ReplaceAll(v, "\n", `'"$rigout_nl"'`)
		b.WriteString(" " + k + "='" + v + "'")
	}
	b.WriteString("\n")
	return b.String()
}
