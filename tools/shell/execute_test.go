package shell_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/internal/proctest"
	"github.com/rigout/rigout/tools/shell"
)

func TestExecuteCommand(t *testing.T) {
	dir := t.TempDir()
	c := connect(t, newGateway(t, setup{Shell: shell.Config{WorkDir: dir}}))
	tests := []struct {
		name      string
		args      map[string]any
		isError   bool
		wantText  []string
		wantExit  float64
		notInText []string
	}{
		{"echo", map[string]any{"command": "echo hi"}, false, []string{"$ echo hi", "host: local (via local)", "exit code: 0", "stdout:\nhi\n"}, 0, []string{"stderr:"}},
		{"non-zero exit", map[string]any{"command": "echo bad >&2; exit 3"}, true, []string{"exit code: 3", "stderr:\nbad"}, 3, nil},
		{"argv without shell", map[string]any{"argv": []any{"printf", "%s", "$(id)"}}, false, []string{"$ printf %s '$(id)'", "stdout:\n$(id)"}, 0, nil},
		{"stdin", map[string]any{"argv": []any{"cat"}, "stdin": "piped"}, false, []string{"stdout:\npiped"}, 0, nil},
		{"env", map[string]any{"command": "echo $FOO", "environment": map[string]any{"FOO": "bar"}}, false, []string{"stdout:\nbar"}, 0, nil},
		{"default dir", map[string]any{"command": "pwd"}, false, []string{dir}, 0, nil},
		{"relative dir", map[string]any{"command": "pwd", "working_directory": "."}, false, []string{dir}, 0, nil},
		{"no output", map[string]any{"command": "true"}, false, []string{"(no output)"}, 0, nil},
		{"secrets redacted", map[string]any{"command": "echo password=hunter2 monkey=banana"}, false, []string{"password=***", "monkey=banana"}, 0, []string{"hunter2"}},
		{"escapes cleaned", map[string]any{"command": `printf 'a\033[31mred\033[0m\rb\n'`}, false, []string{"ared\nb"}, 0, []string{"\x1b", "\r"}},
		{"self", map[string]any{"command": "true", "host": "self"}, false, []string{"host: self (via local)"}, 0, nil},
		{"empty optional fields", map[string]any{"command": "true", "host": "", "hosts": ""}, false, []string{"host: local (via local)"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, c, "execute_command", tt.args)
			got := text(res)
			if res.IsError != tt.isError {
				t.Errorf("isError = %v, want %v: %s", res.IsError, tt.isError, got)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notInText {
				if strings.Contains(got, w) {
					t.Errorf("text holds %q:\n%s", w, got)
				}
			}
			sc := structured(t, res)
			if sc["exit_code"] != tt.wantExit || sc["route"] != "local" {
				t.Errorf("structuredContent = %v", sc)
			}
		})
	}
}

func TestExecuteCommandRefusals(t *testing.T) {
	c := connect(t, newGateway(t, setup{Shell: shell.Config{MaxTimeout: time.Minute}}))
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"neither", map[string]any{}, "needs `command`"},
		{"both", map[string]any{"command": "true", "argv": []any{"true"}}, "not both"},
		{"empty argv", map[string]any{"argv": []any{}}, "argv"},
		{"unknown host", map[string]any{"command": "true", "host": "web1"}, `unknown host "web1"`},
		{"missing dir", map[string]any{"command": "true", "working_directory": "/no/such"}, `"/no/such" does not exist`},
		{"timeout over max", map[string]any{"command": "true", "timeout": 61}, "exceeds this gateway's maximum of 60s"},
		{"timeout type", map[string]any{"command": "true", "timeout": "10"}, "timeout: got string, want integer"},
		{"bad env name", map[string]any{"command": "true", "environment": map[string]any{"A B": "x"}}, `variable name "A B" is not a shell identifier`},
		{"missing program", map[string]any{"argv": []any{"no-such-program-rigout"}}, "executable file not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, c, "execute_command", tt.args)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("result = %v %q, want error containing %q", res.IsError, text(res), tt.want)
			}
		})
	}
}

func TestExecuteCommandTimeoutKillsEverything(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := connect(t, newGateway(t, setup{}))
	start := time.Now()
	res := callTool(t, c, "execute_command", map[string]any{
		"command": "echo $$ > " + pidFile + "; sh -c 'sleep 100 & sleep 100'",
		"timeout": 1,
	})
	if !res.IsError || !strings.Contains(text(res), "timed out after") {
		t.Fatalf("result = %q", text(res))
	}
	if sc := structured(t, res); sc["timed_out"] != true {
		t.Errorf("structuredContent = %v", sc)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("timeout took %v", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	proctest.WaitGroupGone(t, pgid, 5*time.Second)
}

func TestExecuteCommandCapsOutput(t *testing.T) {
	c := connect(t, newGateway(t, setup{Shell: shell.Config{MaxOutput: 1000}}))
	res := callTool(t, c, "execute_command", map[string]any{"command": "seq 1 100000"})
	got := text(res)
	if !strings.Contains(got, "stdout:\n1\n2\n3\n") || !strings.Contains(got, "99999\n100000\n") {
		t.Errorf("head or tail missing:\n%s", got)
	}
	if !strings.Contains(got, "bytes dropped") {
		t.Errorf("no truncation marker:\n%s", got)
	}
	sc := structured(t, res)
	if sc["stdout_bytes"] != float64(588895) || sc["stdout_dropped"] != float64(588895-1000) {
		t.Errorf("counts = %v / %v", sc["stdout_bytes"], sc["stdout_dropped"])
	}
}

// TestUnsandboxedIsSaid: a local command that ran outside the kernel
// sandbox says so in its result and in its done row.
func TestUnsandboxedIsSaid(t *testing.T) {
	l := openLedger(t)
	c := connect(t, newGateway(t, setup{Config: rigout.Config{Audit: l}}))
	res := callTool(t, c, "execute_command", map[string]any{"argv": []any{"true"}})
	if !strings.Contains(text(res), "not sandboxed: no sandbox configured") || structured(t, res)["sandboxed"] != false {
		t.Errorf("result = %q", text(res))
	}
	var done []audit.Event
	for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
		if e.Phase == audit.PhaseDone {
			done = append(done, e)
		}
	}
	if len(done) != 1 || !strings.Contains(done[0].Detail, `"unsandboxed":"no sandbox configured"`) {
		t.Errorf("done rows = %+v", done)
	}
}
