package shell_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/validate"
)

// sentinelRoot makes a directory configured as a protected root, with a
// file in it, so that a refusal test is harmless if the refusal fails: the
// worst a regression can do is delete the sentinel.
func sentinelRoot(t *testing.T) (root, keep string, pol *validate.Policy) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "protected")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	keep = filepath.Join(root, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, keep, &validate.Policy{ProtectedRoots: []string{root}}
}

// TestPolicyRefusalRunsNothing sends refused commands aimed at a sentinel
// protected root, every part of which would also have created a marker
// file, and checks that the sentinel survived and no marker exists.
func TestPolicyRefusalRunsNothing(t *testing.T) {
	l := openLedger(t)
	dir := t.TempDir()
	root, keep, pol := sentinelRoot(t)
	marker := filepath.Join(dir, "ran")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	c := connect(t, newGateway(t, setup{Config: rigout.Config{Audit: l}, Shell: shell.Config{WorkDir: dir}, Policy: pol}))
	tests := []struct {
		name string
		args map[string]any
		rule string
	}{
		{"rm -rf root", map[string]any{"command": "touch " + marker + "; rm -rf " + root}, "recursive-delete-root"},
		{"argv rm -rf root", map[string]any{"argv": []any{"rm", "-rf", root}}, "recursive-delete-root"},
		{"nested in bash -c", map[string]any{"command": "touch " + marker + " && bash -c 'rm -rf " + root + "/*'"}, "recursive-delete-root"},
		{"curl to shell", map[string]any{"command": "touch " + marker + "; curl -s http://127.0.0.1:1 | sh"}, ""},
		{"sudo without use_sudo", map[string]any{"command": "touch " + marker + "; sudo ls"}, "sudo"},
		{"relative to the working directory", map[string]any{"command": "touch " + marker + "; rm -rf .", "working_directory": root}, "recursive-delete-root"},
		{"working directory through a symlink", map[string]any{"command": "touch " + marker + "; rm -rf *", "working_directory": link}, "recursive-delete-root"},
		{"working directory through /proc/self/root", map[string]any{"command": "touch " + marker + "; rm -rf ./*", "working_directory": "/proc/self/root" + root}, "recursive-delete-root"},
		{"script on stdin", map[string]any{"command": "bash -s", "stdin": "touch " + marker + "; rm -rf " + root}, "recursive-delete-root"},
		{"python on stdin", map[string]any{"command": "python3 -", "stdin": "import shutil; shutil.rmtree('" + root + "')"}, "recursive-delete-root"},
		{"link made by an earlier call", map[string]any{"command": "touch " + marker + "; rm -rf " + link + "/"}, "recursive-delete-root"},
		{"cd into a link made earlier", map[string]any{"command": "touch " + marker + "; cd link && rm -rf *", "working_directory": dir}, "recursive-delete-root"},
		{"evaluated subscript", map[string]any{"command": "test -v 'x[$(touch " + marker + "; rm -rf " + root + ")]'"}, "recursive-delete-root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, c, "execute_command", tt.args)
			got := text(res)
			if !res.IsError || !strings.Contains(got, "refused by policy rule") || !strings.Contains(got, "Nothing ran.") {
				t.Errorf("not refused: %q", got)
			}
			if tt.rule != "" && !strings.Contains(got, "rule "+tt.rule+":") {
				t.Errorf("refusal does not name rule %s: %q", tt.rule, got)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("part of a refused command ran")
			}
			if _, err := os.Stat(keep); err != nil {
				t.Fatalf("the sentinel root was emptied: %v", err)
			}
		})
	}
	denied := events(t, l, audit.Filter{Type: audit.TypeToolDenied})
	if len(denied) != len(tests) {
		t.Fatalf("denied rows = %d, want %d", len(denied), len(tests))
	}
	for _, e := range denied {
		if e.Rule == "" || e.Decision != audit.DecisionDeny || e.Status != audit.StatusDenied {
			t.Errorf("denied row = %+v", e)
		}
		if strings.Contains(e.Error, "touch") || strings.Contains(e.Error, marker) {
			t.Errorf("the done row stores the command text without store_args: %q", e.Error)
		}
	}
}

func TestPolicyAllowsOrdinaryWork(t *testing.T) {
	dir := t.TempDir()
	c := connect(t, newGateway(t, setup{Shell: shell.Config{WorkDir: dir}}))
	for _, cmd := range []string{
		"mkdir -p build/x && rm -rf ./build",
		"echo $(date +%s) $((1+2))",
		"grep -c 'rm -rf /' /dev/null || true",
		"ls / >/dev/null",
		"find . -name '*.o' -delete",
	} {
		if res := callTool(t, c, "execute_command", map[string]any{"command": cmd}); res.IsError {
			t.Errorf("%s: %s", cmd, text(res))
		}
	}
}

func TestPolicyBypassNeedsTheScope(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	cmd := bypassed(sentinel)

	c := connect(t, newGateway(t, setup{Shell: shell.Config{WorkDir: dir}}))
	res := callTool(t, c, "execute_command", cmd)
	if !res.IsError || !strings.Contains(text(res), "bypass") || !strings.Contains(text(res), "Nothing ran.") {
		t.Errorf("bypass without the scope: %q", text(res))
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("bypass without the scope ran the command")
	}

	l := openLedger(t)
	p := auth.Principal{Name: "admin", Scopes: auth.FullScopes()}
	c = connect(t, newGateway(t, setup{Config: rigout.Config{Principal: &p, Audit: l}, Shell: shell.Config{WorkDir: dir}}))
	if res := callTool(t, c, "execute_command", cmd); res.IsError {
		t.Errorf("bypass with the scope: %q", text(res))
	}
	if _, err := os.Stat(sentinel); err != nil {
		t.Error("bypass with the scope did not run the command")
	}
	var bypassed int
	for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
		if e.Phase == audit.PhaseDone && e.Bypassed && e.Rule != "" {
			bypassed++
		}
	}
	if bypassed != 1 {
		t.Errorf("bypassed done rows = %d, want 1", bypassed)
	}
}

func TestPolicyFromConfig(t *testing.T) {
	pol := &validate.Policy{Mode: validate.ModeAllow, Allow: []string{"echo"}}
	c := connect(t, newGateway(t, setup{Policy: pol}))
	if res := callTool(t, c, "execute_command", map[string]any{"command": "echo ok"}); res.IsError {
		t.Errorf("allowed program refused: %s", text(res))
	}
	if res := callTool(t, c, "execute_command", map[string]any{"command": "echo ok | cat"}); !res.IsError {
		t.Errorf("allow mode let an unlisted program through: %s", text(res))
	}
	pol.Allow[0] = "cat" // the gate keeps its own copy
	if res := callTool(t, c, "execute_command", map[string]any{"command": "cat /dev/null"}); !res.IsError {
		t.Error("a change to the caller's Policy after New reached the gateway")
	}
	if _, err := gate.New(gate.Config{Policy: &validate.Policy{Rules: map[string]validate.Action{"no-such-rule": validate.Deny}}}); err == nil {
		t.Error("gate.New accepted a policy naming an unknown rule")
	}
}

// TestEnvironmentIsJudged: variables that change what runs without the
// command showing it are refused before anything runs.
func TestEnvironmentIsJudged(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "startup.sh")
	if err := os.WriteFile(script, []byte("touch "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, newGateway(t, setup{Shell: shell.Config{WorkDir: dir}}))
	for _, env := range []map[string]any{
		{"BASH_ENV": script},
		{"LD_PRELOAD": filepath.Join(dir, "evil.so")},
		{"PATH": dir + ":/usr/bin:/bin"},
		{"PROMPT_COMMAND": "touch " + marker},
	} {
		res := callTool(t, c, "execute_command", map[string]any{"command": "true", "environment": env})
		if !res.IsError || !strings.Contains(text(res), "refused by policy rule environment") {
			t.Errorf("%v: %q", env, text(res))
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%v: the command ran", env)
		}
	}
	res := callTool(t, c, "execute_command", map[string]any{"command": "echo $GREETING", "environment": map[string]any{"GREETING": "hi", "PATH": "/usr/bin:/bin:" + dir}})
	if res.IsError || !strings.Contains(text(res), "stdout:\nhi") {
		t.Errorf("ordinary variables: %q", text(res))
	}
}
