package remote_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// windowsHost is an sshtest server that acts as Windows OpenSSH with the
// given shell: it names a Windows build in its version, answers the shell
// probe as that shell would, and records every other command with its
// standard input without running anything.
type windowsHost struct {
	mu    sync.Mutex
	stdin map[string][]byte
}

func (w *windowsHost) config(answer string) sshtest.Config {
	w.stdin = map[string][]byte{}
	return sshtest.Config{
		ServerVersion: "SSH-2.0-OpenSSH_for_Windows_9.5",
		Answer: func(command string, stdin []byte) (string, uint32, bool) {
			if command == exec.ShellProbe {
				return answer, 0, true
			}
			w.mu.Lock()
			w.stdin[command] = stdin
			w.mu.Unlock()
			return "done\r\n", 0, true
		},
	}
}

func (w *windowsHost) input(command string) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stdin[command]
}

func TestSSHShellDetection(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	ctx := context.Background()

	// A POSIX server (its version names no Windows build): no probe.
	posix := e.trustedServer(sshtest.Config{})
	r := e.router(nil)
	tg, err := r.Resolve(ctx, addr(posix), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if sh, err := tg.Runner.(*remote.SSH).Shell(ctx); err != nil || sh != exec.ShellPOSIX {
		t.Errorf("Shell = %q, %v; want posix", sh, err)
	}
	if n := posix.Execs(); n != 0 {
		t.Errorf("a POSIX server got %d exec requests for detection", n)
	}

	// A Windows server whose DefaultShell is a real POSIX shell answers
	// the probe as one: the probe runs in bash here.
	bashWin := e.trustedServer(sshtest.Config{ServerVersion: "SSH-2.0-OpenSSH_for_Windows_9.5"})
	tg, _ = r.Resolve(ctx, addr(bashWin), "alice")
	if sh, err := tg.Runner.(*remote.SSH).Shell(ctx); err != nil || sh != exec.ShellPOSIX {
		t.Errorf("Windows server running bash: Shell = %q, %v; want posix", sh, err)
	}
	if got := bashWin.Commands(); len(got) != 1 || got[0] != exec.ShellProbe {
		t.Errorf("commands = %q; want the probe alone", got)
	}

	tests := []struct {
		name   string
		answer string
		want   exec.Shell
	}{
		{"cmd", "rigout-shell:Windows_NT:$?\r\n", exec.ShellCmd},
		{"powershell", "rigout-shell:%OS%:True\r\n", exec.ShellPowerShell},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w windowsHost
			s := e.trustedServer(w.config(tt.answer))
			r := e.router(nil)
			tg, err := r.Resolve(ctx, addr(s), "alice")
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if sh, err := tg.Runner.(*remote.SSH).Shell(ctx); err != nil || sh != tt.want {
					t.Fatalf("Shell = %q, %v; want %q", sh, err, tt.want)
				}
			}
			// Remembered for the host: another principal's connection
			// does not probe again.
			other, _ := r.Resolve(ctx, addr(s), "bob")
			if sh, err := other.Runner.(*remote.SSH).Shell(ctx); err != nil || sh != tt.want {
				t.Fatalf("bob: Shell = %q, %v", sh, err)
			}
			if got := s.Commands(); len(got) != 1 {
				t.Errorf("commands = %q; want one probe", got)
			}
			res := runOn(t, r, addr(s), exec.Command{Shell: "dir", Dir: `C:\work`})
			if !strings.Contains(res.Route, "["+string(tt.want)+"]") {
				t.Errorf("route %q does not name the shell", res.Route)
			}
			got := s.Commands()
			last := got[len(got)-1]
			if strings.Contains(last, "rigout-pid") || strings.Contains(last, "printf") {
				t.Errorf("a POSIX prefix was sent to a %s host: %q", tt.want, last)
			}
			want, _ := exec.CommandLineFor(exec.Command{Shell: "dir", Dir: `C:\work`}, tt.want, "")
			if last != want {
				t.Errorf("sent %q; want %q", last, want)
			}
			// A command judged for another shell is not sent.
			n := len(s.Commands())
			_, err = runErr(r, addr(s), "alice", exec.Command{Shell: "rm -rf build", JudgedFor: exec.ShellPOSIX})
			var me *exec.ShellMismatchError
			if !errors.As(err, &me) || me.Runs != tt.want {
				t.Errorf("a command judged as POSIX: %v; want a ShellMismatchError", err)
			}
			if len(s.Commands()) != n {
				t.Errorf("the mismatched command was sent: %q", s.Commands()[n:])
			}
			d, err := r.Describe(ctx, addr(s), "alice")
			if err != nil || !strings.HasPrefix(d.Shell, string(tt.want)+" (detected") {
				t.Errorf("Describe: shell %q, %v", d.Shell, err)
			}
		})
	}
}

// TestSSHWindowsSecrets: on a PowerShell host secrets travel on standard
// input, never in the command line; on a cmd.exe host they are refused
// and nothing is sent.
func TestSSHWindowsSecrets(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	const secret = "s3cret value"

	var ps windowsHost
	s := e.trustedServer(ps.config("rigout-shell:%OS%:True\r\n"))
	r := e.router(nil)
	runOn(t, r, addr(s), exec.Command{Shell: "gci env:TOKEN", Secrets: map[string]string{"TOKEN": secret}})
	got := s.Commands()
	line := got[len(got)-1]
	if strings.Contains(line, "s3cret") || strings.Contains(psDecode(t, line), "s3cret") {
		t.Errorf("the secret is in the command line: %q", line)
	}
	if in := string(ps.input(line)); in != "TOKEN=czNjcmV0IHZhbHVl\n" {
		t.Errorf("stdin = %q; want the secret's line", in)
	}

	var cmd windowsHost
	s = e.trustedServer(cmd.config("rigout-shell:Windows_NT:$?\r\n"))
	_, err := runErr(r, addr(s), "alice", exec.Command{Shell: "set TOKEN", Secrets: map[string]string{"TOKEN": secret}})
	if !errors.Is(err, exec.ErrShellUnsupported) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("secrets on a cmd.exe host: %v", err)
	}
	for _, c := range s.Commands() {
		if c != exec.ShellProbe {
			t.Errorf("sent %q", c)
		}
	}
}

// TestSSHConfiguredShell: a host whose shell is configured is never
// probed, and a terminal on a Windows host is refused.
func TestSSHConfiguredShell(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{RecordOnly: true})
	r := e.router(func(c *remote.RouterConfig) {
		c.Hosts = []remote.HostConfig{{Name: "win1", Address: s.Host(), Port: s.Port(), Shell: exec.ShellCmd}}
	})
	runOn(t, r, "win1", exec.Command{Argv: []string{"git", "status"}})
	if got := s.Commands(); len(got) != 1 || got[0] != `"git" status` {
		t.Errorf("commands = %q; want the cmd.exe line alone", got)
	}
	tg, _ := r.Resolve(context.Background(), "win1", "alice")
	if _, err := tg.Runner.(*remote.SSH).StartPTY(context.Background(), exec.Command{Shell: "cmd"}, exec.PTYSize{}); !errors.Is(err, exec.ErrShellUnsupported) {
		t.Errorf("a terminal on a cmd.exe host: %v", err)
	}
	if err := (&remote.HostConfig{Name: "w", Shell: "fish"}).Validate(); !errors.Is(err, exec.ErrUnknownShell) {
		t.Errorf("shell fish: %v", err)
	}
}
