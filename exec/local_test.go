package exec_test

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/proctest"
)

func run(t *testing.T, l *exec.Local, cmd exec.Command) exec.Result {
	t.Helper()
	res, err := l.Run(context.Background(), cmd)
	if err != nil {
		t.Fatalf("Run(%+v): %v", cmd, err)
	}
	return res
}

func TestLocalBasics(t *testing.T) {
	dir := t.TempDir()
	// Were argv run by a shell, "rm x" would remove this sentinel and
	// nothing else.
	sandbox := sentinelDir(t)
	l := &exec.Local{Env: []string{"PATH=" + os.Getenv("PATH"), "KEEP=1", "RIGOUT_AUTH_TOKEN=sekrit"}}
	tests := []struct {
		name       string
		cmd        exec.Command
		wantOut    string
		wantErrOut string
		wantCode   int
	}{
		{"echo", exec.Command{Shell: "echo hi"}, "hi\n", "", 0},
		{"exit code", exec.Command{Shell: "echo oops >&2; exit 3"}, "", "oops\n", 3},
		{"argv is not a shell", exec.Command{Argv: []string{"printf", "%s", "$HOME; rm x"}, Dir: sandbox}, "$HOME; rm x", "", 0},
		{"dir", exec.Command{Shell: "pwd", Dir: dir}, dir + "\n", "", 0},
		{"PWD follows the dir", exec.Command{Argv: []string{"printenv", "PWD"}, Dir: dir}, dir + "\n", "", 0},
		{"env merged", exec.Command{Shell: `echo "$KEEP $EXTRA"`, Env: map[string]string{"EXTRA": "a b"}}, "1 a b\n", "", 0},
		{"env overrides", exec.Command{Shell: `echo "$KEEP"`, Env: map[string]string{"KEEP": "2"}}, "2\n", "", 0},
		{"private env dropped", exec.Command{Shell: `echo "[${RIGOUT_AUTH_TOKEN-unset}]"`}, "[unset]\n", "", 0},
		{"stdin", exec.Command{Argv: []string{"cat"}, Stdin: strings.NewReader("fed")}, "fed", "", 0},
		{"no stdin reads empty", exec.Command{Argv: []string{"cat"}}, "", "", 0},
		{"bash features", exec.Command{Shell: `a=(x y); echo ${#a[@]}`}, "2\n", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, l, tt.cmd)
			if got := string(res.Stdout.Data); got != tt.wantOut {
				t.Errorf("stdout = %q, want %q", got, tt.wantOut)
			}
			if got := string(res.Stderr.Data); got != tt.wantErrOut {
				t.Errorf("stderr = %q, want %q", got, tt.wantErrOut)
			}
			if res.ExitCode != tt.wantCode {
				t.Errorf("exit = %d, want %d", res.ExitCode, tt.wantCode)
			}
			if res.Route != "local" || res.TimedOut || res.Canceled || res.Duration <= 0 {
				t.Errorf("result = %+v", res)
			}
		})
	}
	checkSentinel(t, sandbox)
}

func TestLocalErrors(t *testing.T) {
	var l exec.Local
	tests := []struct {
		name string
		cmd  exec.Command
		want error
	}{
		{"empty", exec.Command{}, exec.ErrNoCommand},
		{"both", exec.Command{Shell: "x", Argv: []string{"x"}}, exec.ErrBothForms},
		{"missing program", exec.Command{Argv: []string{"no-such-program-rigout"}}, osexec.ErrNotFound},
		{"missing dir", exec.Command{Shell: "true", Dir: "/no/such/dir"}, os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Run(context.Background(), tt.cmd)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	_, err := l.Run(context.Background(), exec.Command{Shell: "true", Env: map[string]string{"A=B": "x"}})
	var envErr *exec.EnvNameError
	if !errors.As(err, &envErr) || envErr.Name != "A=B" {
		t.Errorf("bad env name: err = %v", err)
	}
}

func TestLocalSignal(t *testing.T) {
	var l exec.Local
	res := run(t, &l, exec.Command{Shell: "kill -KILL $$"})
	if res.Signal != "SIGKILL" || res.ExitCode != -1 {
		t.Errorf("result = %+v", res)
	}
}

func TestLocalTimeoutKillsTheGroup(t *testing.T) {
	l := &exec.Local{Grace: 200 * time.Millisecond}
	pidFile := filepath.Join(t.TempDir(), "pid")
	res := run(t, l, exec.Command{
		Shell:   "echo $$ > " + pidFile + "; sleep 100 & sleep 100",
		Timeout: 300 * time.Millisecond,
	})
	if !res.TimedOut || res.Canceled {
		t.Fatalf("result = %+v, want timed out", res)
	}
	if res.Signal == "" {
		t.Errorf("no signal in %+v", res)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	proctest.WaitGroupGone(t, pgid, 5*time.Second)
}

func TestLocalTermIgnoredGetsKill(t *testing.T) {
	l := &exec.Local{Grace: 200 * time.Millisecond}
	res := run(t, l, exec.Command{
		Shell:   `trap '' TERM; sleep 100 & wait; sleep 100`,
		Timeout: 200 * time.Millisecond,
	})
	if !res.TimedOut || res.Signal != "SIGKILL" {
		t.Errorf("result = %+v, want SIGKILL after the grace", res)
	}
}

func TestLocalCancel(t *testing.T) {
	var l exec.Local
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := l.Run(ctx, exec.Command{Shell: "sleep 100"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Canceled || res.TimedOut {
		t.Errorf("result = %+v, want canceled", res)
	}
	if _, err := l.Run(ctx, exec.Command{Shell: "true"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Run on a done context: err = %v", err)
	}
}

func TestLocalBackgroundChildDoesNotHang(t *testing.T) {
	var l exec.Local
	start := time.Now()
	res := run(t, &l, exec.Command{Shell: "sleep 3 & echo started"})
	if time.Since(start) > 10*time.Second {
		t.Fatalf("Run waited for a background child: %v", time.Since(start))
	}
	if string(res.Stdout.Data) != "started\n" || res.ExitCode != 0 {
		t.Errorf("result = %+v", res)
	}
}

// TestLocalOutputCapBoundsMemory prints 200 MiB on each stream and checks
// that the gateway kept only the cap and allocated far less than it read.
func TestLocalOutputCapBoundsMemory(t *testing.T) {
	var l exec.Local
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := run(t, &l, exec.Command{
		Shell:     "head -c 209715200 /dev/zero; head -c 209715200 /dev/zero >&2",
		MaxOutput: 1 << 20,
	})
	runtime.ReadMemStats(&after)
	const total = 200 << 20
	for _, out := range []exec.Output{res.Stdout, res.Stderr} {
		if out.Total != total || len(out.Data) != 1<<20 || out.Dropped != total-1<<20 {
			t.Errorf("output: total %d kept %d dropped %d", out.Total, len(out.Data), out.Dropped)
		}
	}
	if !res.Truncated() {
		t.Error("Truncated() = false")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d MiB to read 400 MiB of output", alloc>>20)
	}
}

func TestLocalOnOutput(t *testing.T) {
	var l exec.Local
	var got strings.Builder
	res := run(t, &l, exec.Command{
		Shell:    "echo one; echo two",
		OnOutput: func(s exec.Stream, p []byte) { got.WriteString(s.String() + ":" + string(p)) },
	})
	if res.ExitCode != 0 || !strings.Contains(got.String(), "stdout:") || !strings.Contains(got.String(), "two") {
		t.Errorf("OnOutput saw %q", got.String())
	}
}

// sentinelDir returns a fresh directory holding a file named x, for
// commands that would remove or overwrite x if quoting went wrong.
func sentinelDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("sentinel"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkSentinel fails the test if the file x in dir was removed or changed.
func checkSentinel(t testing.TB, dir string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, "x")); err != nil || string(b) != "sentinel" {
		t.Errorf("sentinel %s/x: %q, %v: a command ran that should not have", dir, b, err)
	}
}
