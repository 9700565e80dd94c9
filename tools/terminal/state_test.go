package terminal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/validate"
)

// TestTerminalState checks that a command is judged after what earlier
// commands of its session defined. The protected root is a sentinel
// directory under a temp dir: if a refusal regressed, the command would
// only delete that.
func TestTerminalState(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "precious")
	if err := os.MkdirAll(filepath.Join(root, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Config{Policy: &validate.Policy{ProtectedRoots: []string{"/", root}}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{m: newManager(t, nil), dir: t.TempDir(), gate: g}
	c := e.connect(t, "alice", nil)
	tests := []struct {
		name    string
		define  string // allowed, run first
		use     string
		refused bool
	}{
		{"alias", "alias ll='rm -rf'", "ll " + root, true},
		{"function", `cleanall() { rm -rf "$@"; }`, "cleanall " + root, true},
		{"variable", "T=" + root, `rm -rf "$T"`, true},
		{"hash", "hash -p /bin/rm lsx", "lsx -rf " + root, true},
		{"alias near miss", "alias ll='ls -la'", "ll " + root, false},
		{"function near miss", `greet() { echo "hi $1"; }`, "greet " + root, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := create(t, c, nil)
			res, text, _ := call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": tt.define})
			if res.IsError {
				t.Fatalf("define %q: %s", tt.define, text)
			}
			res, text, _ = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": tt.use})
			if res.IsError != tt.refused {
				t.Errorf("%q after %q: refused=%v, want %v: %s", tt.use, tt.define, res.IsError, tt.refused, text)
			}
			if tt.refused && !strings.Contains(text, "earlier commands of this session") {
				t.Errorf("refusal does not name the session's definitions: %s", text)
			}
			if _, err := os.Stat(filepath.Join(root, "keep")); err != nil {
				t.Fatalf("the protected sentinel is gone: %v", err)
			}
			// A new session starts without the definitions.
			other := create(t, c, nil)
			if res, text, _ := call(t, c, "execute_in_terminal", map[string]any{"session_id": other, "command": "type ll >/dev/null 2>&1 || echo none"}); res.IsError {
				t.Errorf("new session: %s", text)
			}
			call(t, c, "close_terminal_session", map[string]any{"session_id": id})
			call(t, c, "close_terminal_session", map[string]any{"session_id": other})
		})
	}
	// Definitions whose body the policy refuses are refused when made.
	id := create(t, c, nil)
	for _, cmd := range []string{
		"alias x='rm -rf " + root + "'",
		"trap 'rm -rf " + root + "' EXIT",
		"PROMPT_COMMAND='rm -rf " + root + "'",
		"PS1='$(rm -rf " + root + ")'",
	} {
		if res, text, _ := call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": cmd}); !res.IsError {
			t.Errorf("%q was allowed: %s", cmd, text)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "keep")); err != nil {
		t.Fatalf("the protected sentinel is gone: %v", err)
	}
}
