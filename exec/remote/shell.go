package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
)

// shellKey is what a remembered shell is filed under: the login and
// address, whatever the path to it.
func shellKey(ep *Endpoint) string { return ep.User + "@" + ep.Address() }

// knownShell returns the shell configured for the host or remembered from
// an earlier detection, with how it was learned.
func (s *SSH) knownShell() (exec.Shell, string, bool) {
	if s.ep.Shell != "" && s.ep.Shell != exec.ShellAuto {
		return s.ep.Shell, "configured", true
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	k, ok := s.r.shells[shellKey(s.ep)]
	return k.shell, k.how, ok
}

// learnedShell is a shell detected on a host, and how.
type learnedShell struct {
	shell exec.Shell
	how   string
}

// Shell returns the shell the host runs commands with: the configured
// one (HostConfig.Shell), else the one detected earlier on this Router,
// else it detects it now, on a pooled connection, and remembers it for
// the host (login and address). Detection reads the server's version
// string: a server that names no Windows build is taken for a POSIX
// shell without running anything; a Windows one (Win32-OpenSSH, whose
// DefaultShell may be cmd.exe, PowerShell or bash) is asked one harmless
// probe, echo rigout-shell:%OS%:$?, whose output differs in each shell.
// An answer it cannot read is an error, and nothing is remembered.
func (s *SSH) Shell(ctx context.Context) (exec.Shell, error) {
	sh, _, err := s.shell(ctx)
	return sh, err
}

// shell is Shell with how the shell was learned.
func (s *SSH) shell(ctx context.Context) (exec.Shell, string, error) {
	if sh, how, ok := s.knownShell(); ok {
		return sh, how, nil
	}
	c, err := s.r.pool.acquire(ctx, s.ep.poolKey(s.principal), func(dctx context.Context) (*conn, error) {
		return s.r.dialEndpoint(dctx, s.ep, s.principal)
	})
	if err != nil {
		return "", "", err
	}
	defer c.release()
	return s.detectOn(ctx, c)
}

// detectOn detects the host's shell on the connection c and remembers it.
func (s *SSH) detectOn(ctx context.Context, c *conn) (exec.Shell, string, error) {
	sh, how, err := detectShell(ctx, c.client)
	if err != nil {
		return "", "", fmt.Errorf("exec: detect the shell of %s: %w (set the host's shell in its configuration)", s.ep.Name, err)
	}
	s.r.mu.Lock()
	if s.r.shells == nil {
		s.r.shells = map[string]learnedShell{}
	}
	s.r.shells[shellKey(s.ep)] = learnedShell{sh, how}
	s.r.mu.Unlock()
	return sh, how, nil
}

// detectShell applies the detection Shell describes on client.
func detectShell(ctx context.Context, client *ssh.Client) (exec.Shell, string, error) {
	version := client.ServerVersion()
	if !windowsServer(version) {
		return exec.ShellPOSIX, fmt.Sprintf("detected: the server (%s) names no Windows build", safeVersion(version)), nil
	}
	sess, err := client.NewSession()
	if err != nil {
		return "", "", err
	}
	defer sess.Close()
	stop := context.AfterFunc(ctx, func() { sess.Close() })
	defer stop()
	var out bytes.Buffer
	sess.Stdout = &limitedWriter{w: &out, n: 4096}
	if err := sess.Run(exec.ShellProbe); err != nil {
		var ee *ssh.ExitError
		if !errors.As(err, &ee) {
			return "", "", err
		}
	}
	sh, ok := exec.ParseShellProbe(out.String())
	if !ok {
		return "", "", fmt.Errorf("the probe %q answered %q, which no known shell prints", exec.ShellProbe, safeVersion(out.Bytes()))
	}
	return sh, fmt.Sprintf("detected: the server (%s) answered the probe as %s", safeVersion(version), sh), nil
}

// lineFor is the complete line for cmd on a host running sh: the POSIX
// line with its process-id marker, or the Windows line.
func (s *SSH) lineFor(cmd exec.Command, sh exec.Shell) (string, error) {
	if cmd.JudgedFor != "" && cmd.JudgedFor != exec.ShellAuto && cmd.JudgedFor != sh {
		return "", &exec.ShellMismatchError{Host: s.ep.Name, JudgedFor: cmd.JudgedFor, Runs: sh}
	}
	if sh.Windows() {
		return exec.CommandLineFor(cmd, sh, "")
	}
	line, err := exec.RemoteCommandLine(cmd, s.r.cfg.RemoteShell)
	if err != nil {
		return "", err
	}
	return exec.PIDMarkerPrefix + line, nil
}

// windowsShell reports whether the host is known to run cmd.exe or
// PowerShell.
func (s *SSH) windowsShell() (exec.Shell, bool) {
	sh, _, ok := s.knownShell()
	return sh, ok && sh.Windows()
}

// windowsRoute names a Windows shell in res's route, and, when the
// helper was wanted (noHelper set), why a Windows host goes without it.
func (s *SSH) windowsRoute(res *exec.Result, sh exec.Shell, noHelper string) {
	if !sh.Windows() {
		return
	}
	res.Route = s.ep.Route() + " [" + string(sh) + "]"
	res.Unsandboxed = "remote host: the far side runs no sandbox"
	if noHelper != "" {
		why := "a Windows host: the helper runs on Linux only"
		res.Route += " [no rigout helper: " + why + "]"
		res.Unsandboxed = "remote host without the rigout helper (" + why + "): the far side runs no sandbox"
	}
}

// KnownShell returns the host's shell when it is known without contacting
// the host: configured (HostConfig.Shell) or detected earlier by this
// Router. ok is false when only Shell can tell.
func (s *SSH) KnownShell() (sh exec.Shell, ok bool) {
	sh, _, ok = s.knownShell()
	return sh, ok
}

// windowsServer reports whether an SSH server's version string names a
// Windows build (Win32-OpenSSH: "SSH-2.0-OpenSSH_for_Windows_9.5"; Bitvise
// WinSSHD).
func windowsServer(version []byte) bool {
	v := strings.ToLower(string(version))
	return strings.Contains(v, "windows") || strings.Contains(v, "winsshd")
}

// safeVersion is a server's version string or a probe's answer, bounded
// and printable.
func safeVersion(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	s := strings.ToValidUTF8(string(b), "?")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, strings.TrimSpace(s))
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
