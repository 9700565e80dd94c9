package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestInstructionsStable: two starts of the binary send the same
// initialize instructions — nothing per start (a PID, a cgroup path) —
// so that a client's prompt cache keeps them.
func TestInstructionsStable(t *testing.T) {
	a, b := startStdio(t), startStdio(t)
	if a.init.Instructions == "" || a.init.Instructions != b.init.Instructions {
		t.Fatalf("instructions differ between starts:\n%s\n%s", a.init.Instructions, b.init.Instructions)
	}
}

// TestNextStepInStructuredContent walks every tool of the binary's default
// set: each either has a scenario below whose result names its next call
// in structuredContent (and the same call in its text, for clients that
// show only text), or is listed as having no next step. A tool added to
// the default set without either fails here.
func TestNextStepInStructuredContent(t *testing.T) {
	s := startStdio(t)
	c := s.client
	l, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// Tools whose results end the matter: nothing to call next.
	noNext := map[string]string{
		"bulk_file_transfer":     "a transfer ends verified or fails",
		"close_terminal_session": "the session is gone",
		"list_terminal_sessions": "a listing",
		"get_server_activity":    "a listing",
		"manage_hosts":           "listings and tests; trust (no SSH host here) names the trust call",
		"search_files":           "matches, each naming its file and line",
	}
	covered := map[string]bool{}
	next := func(tool string, args map[string]any, wantTool string) map[string]any {
		t.Helper()
		res := call(t, c, tool, args)
		text := resultText(res)
		sc, _ := res.StructuredContent.(map[string]any)
		n, _ := sc["next"].(map[string]any)
		if n == nil || n["tool"] != wantTool {
			t.Fatalf("%s %v: structuredContent next %v, want a %s call\n%s", tool, args, sc["next"], wantTool, text)
		}
		nargs, _ := n["arguments"].(map[string]any)
		if len(nargs) == 0 || !strings.Contains(text, "next: "+wantTool+" {") {
			t.Fatalf("%s: next call without arguments, or not in the text: %v\n%s", tool, n, text)
		}
		covered[tool] = true
		return nargs
	}

	// execute_command: output over the bound is kept and paged by line;
	// a command still running is handed off.
	args := next("execute_command", map[string]any{"command": "seq 1 40000"}, "process")
	if args["line"] == nil {
		t.Errorf("kept output: next read is not by line: %v", args)
	}
	args = next("execute_command", map[string]any{"command": "sleep 3; echo done", "wait_seconds": 0}, "process")
	next("process", map[string]any{"action": "read", "id": args["id"]}, "process")

	args = next("create_terminal_session", map[string]any{}, "execute_in_terminal")
	id := args["session_id"]
	next("execute_in_terminal", map[string]any{"session_id": id, "command": "sleep 3", "timeout": 1}, "execute_in_terminal")
	call(t, c, "close_terminal_session", map[string]any{"session_id": id})

	dir := t.TempDir()
	p := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("a line of text\n", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	args = next("file_operations", map[string]any{"action": "read", "path": p}, "file_operations")
	if args["offset"] == nil {
		t.Errorf("file read: next has no offset: %v", args)
	}

	for _, tl := range l.Tools {
		if _, ok := noNext[tl.Name]; !ok && !covered[tl.Name] {
			t.Errorf("tool %s has no next-step scenario here and is not listed as having no next step", tl.Name)
		}
	}
}
