package remote_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	rexec "github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// wine64 returns Wine's 64-bit loader, or skips the test loudly (fails it
// when RIGOUT_REQUIRE_WINE=1).
func wine64(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"wine64", "/usr/lib/wine/wine64", "/usr/lib64/wine/wine64"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	msg := "Wine is not installed (apt-get install wine wine64): cmd.exe quoting is NOT checked against a real cmd parser"
	if os.Getenv("RIGOUT_REQUIRE_WINE") == "1" {
		t.Fatal(msg + ", and RIGOUT_REQUIRE_WINE=1")
	}
	t.Skip("SKIP: " + msg)
	return ""
}

// wineEnv returns the environment that runs Wine in the prefix
// $WINEPREFIX names, else in one of the test's own; the prefix is made
// (which takes most of a minute; it reads standard input, so not in the
// test's command) before the test goes on, and its wineserver, which
// outlives its clients briefly, is ended when the test ends.
func wineEnv(t *testing.T, wine string) []string {
	t.Helper()
	prefix := os.Getenv("WINEPREFIX")
	if prefix == "" {
		prefix = filepath.Join(t.TempDir(), "wineprefix")
	}
	env := append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all", "DISPLAY=")
	t.Cleanup(func() {
		server := filepath.Join(filepath.Dir(wine), "wineserver")
		if _, err := os.Stat(server); err != nil {
			server = "wineserver"
		}
		k := exec.Command(server, "-k")
		k.Env = env
		_ = k.Run()
	})
	boot := exec.Command(wine, "cmd", "/c", "echo", "ready")
	boot.Env = env
	if out, err := boot.CombinedOutput(); err != nil || !strings.Contains(string(out), "ready") {
		t.Fatalf("wine cmd /c echo ready: %v\n%s", err, out)
	}
	return env
}

// TestCmdHostUnderWine puts Wine's cmd behind an SSH server, as a Windows
// OpenSSH server whose DefaultShell is cmd.exe: every exec request's
// command is handed to cmd as one line. The Router detects cmd.exe from
// the probe's real answer and sends lines that Wine's cmd runs: a working
// directory that does not exist, the environment, the exit status. (A
// working directory that does exist is not tried: Wine 8.0's cmd runs the
// right side of || even when the left succeeded — `echo x || echo y`
// prints both — so `cd /d "DIR" || exit 1` always exits there, where
// cmd.exe exits only when cd fails.)
func TestCmdHostUnderWine(t *testing.T) {
	wine := wine64(t)
	env := wineEnv(t, wine)
	dir := t.TempDir()
	// The server runs SHELL -c LINE; this one feeds LINE to Wine's cmd
	// from a file (see TestCmdUnderWine) and exits with its status.
	wrapper := filepath.Join(dir, "winecmd")
	script := "#!/bin/sh\nf=$(mktemp)\nprintf '%s\\r\\nexit %%ERRORLEVEL%%\\r\\n' \"$2\" > \"$f\"\n" +
		strconv.Quote(wine) + " cmd /q /k < \"$f\"\nrc=$?\nrm -f \"$f\"\nexit $rc\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{Shell: wrapper, Env: env, ServerVersion: "SSH-2.0-OpenSSH_for_Windows_9.5"})
	r := e.router(nil)
	ctx := context.Background()
	tg, err := r.Resolve(ctx, addr(s), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if sh, err := tg.Runner.(*remote.SSH).Shell(ctx); err != nil || sh != rexec.ShellCmd {
		t.Fatalf("Shell = %q, %v; want cmd, from Wine's answer to the probe", sh, err)
	}
	tests := []struct {
		name string
		cmd  rexec.Command
		out  string
		code int
	}{
		{"missing dir", rexec.Command{Shell: "echo ran", Dir: `C:\rigout-no-such-dir`}, "", 1},
		{"env", rexec.Command{Shell: "set RIGOUTV", Env: map[string]string{"RIGOUTV": "a&b|c<d>(e)^f"}}, "RIGOUTV=a&b|c<d>(e)^f\r\n", 0},
		{"exit status", rexec.Command{Shell: "exit 3"}, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runOn(t, r, addr(s), tt.cmd)
			if got := string(res.Stdout.Data); got != tt.out || res.ExitCode != tt.code {
				t.Errorf("stdout %q, exit %d; want %q, %d (stderr %q)", got, res.ExitCode, tt.out, tt.code, res.Stderr.Data)
			}
		})
	}
}
