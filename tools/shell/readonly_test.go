package shell_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/tools/shell"
)

// rowsOf returns the ledger rows of execute_command calls, by call ID.
func rowsOf(t *testing.T, l audit.Querier) map[string][]audit.Event {
	t.Helper()
	m := map[string][]audit.Event{}
	for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
		m[e.CallID] = append(m[e.CallID], e)
	}
	return m
}

// TestReadOnlyAuditOnce: a command the policy classifies read-only has its
// intent row (it runs a process: a gateway killed mid-call leaves a trace)
// and a done row classified read-only; a command that writes has both,
// not classified read-only.
func TestReadOnlyAuditOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := openLedger(t)
	c := connect(t, newGateway(t, setup{Config: rigout.Config{Audit: l}, Shell: shell.Config{WorkDir: dir}}))

	cases := []struct {
		args     map[string]any
		readOnly bool
	}{
		{map[string]any{"command": "cat f | wc -l"}, true},
		{map[string]any{"argv": []any{"cat", "f"}}, true},
		{map[string]any{"command": "ls -la", "working_directory": dir}, true},
		{map[string]any{"command": "touch g"}, false},
		{map[string]any{"command": "cat f > g"}, false},
		{map[string]any{"command": "cat f", "environment": map[string]any{"X": "1"}}, false},
		{map[string]any{"command": "cat $(echo f)"}, false},
	}
	for _, tc := range cases {
		before := rowsOf(t, l)
		res := callTool(t, c, "execute_command", tc.args)
		if res.IsError {
			t.Fatalf("%v: %s", tc.args, text(res))
		}
		var rows []audit.Event
		for id, r := range rowsOf(t, l) {
			if _, seen := before[id]; !seen {
				rows = r
			}
		}
		if tc.readOnly {
			if len(rows) != 2 || rows[0].Phase != audit.PhaseIntent || rows[1].Phase != audit.PhaseDone ||
				!strings.Contains(rows[1].Detail, `"read-only"`) || rows[1].Status != audit.StatusOK {
				t.Errorf("%v: rows %+v, want an intent row and a done row classified read-only", tc.args, rows)
			}
			continue
		}
		if len(rows) != 2 || strings.Contains(rows[0].Detail+rows[1].Detail, "read-only") {
			t.Errorf("%v: rows %+v, want an intent and a done row, not read-only", tc.args, rows)
		}
	}
}

// TestReadOnlyToken: a read-only token may run read-only commands and
// nothing else; each call is audited.
func TestReadOnlyToken(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "written")
	l := openLedger(t)
	ro := auth.Principal{Name: "observer", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}}
	c := connect(t, newGateway(t, setup{Config: rigout.Config{Principal: &ro, Audit: l}, Shell: shell.Config{WorkDir: dir}}))

	if res := callTool(t, c, "execute_command", map[string]any{"command": "ls -la && uname -a"}); res.IsError {
		t.Errorf("read-only token, read-only command: %s", text(res))
	}
	for _, cmd := range []string{"touch " + sentinel, "ls > " + sentinel, "find . -delete", "echo x | tee " + sentinel, "ls; touch " + sentinel} {
		res := callTool(t, c, "execute_command", map[string]any{"command": cmd})
		if !res.IsError || !strings.Contains(text(res), "missing scope write") {
			t.Errorf("read-only token, %q: %s", cmd, text(res))
		}
	}
	if res := callTool(t, c, "execute_command", map[string]any{"command": "ls", "use_sudo": true}); !res.IsError {
		t.Errorf("read-only token with sudo: %s", text(res))
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("a read-only token's refused command ran")
	}
	var ok, denied, intents int
	for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
		switch {
		case e.Phase == audit.PhaseIntent:
			intents++
		case e.Status == audit.StatusOK && strings.Contains(e.Detail, "read-only"):
			ok++
		case e.Status == audit.StatusDenied:
			denied++
		}
	}
	// The refused calls never ran: no intent row; the one that ran has one.
	if ok != 1 || denied != 6 || intents != 1 {
		t.Errorf("ledger: %d read-only ok rows, %d denied, %d intents, want 1, 6 and 1", ok, denied, intents)
	}
}
