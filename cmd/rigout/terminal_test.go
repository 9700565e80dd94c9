package main

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestE2EToolListStaysSmall bounds what every conversation pays for the
// binary's default tools/list, every family in it, and checks that
// --no-terminals leaves the terminal family out.
func TestE2EToolListStaysSmall(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     []string
		terminal bool
	}{
		{"default", nil, true},
		{"no-terminals", []string{"--no-terminals"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startStdio(t, tt.args...)
			l, err := s.client.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 10<<10 {
				t.Errorf("tools/list is %d bytes, budget 10 KiB", len(b))
			}
			var names []string
			for _, tool := range l.Tools {
				names = append(names, tool.Name)
			}
			got := strings.Contains(strings.Join(names, ","), "execute_in_terminal")
			if got != tt.terminal {
				t.Errorf("terminal tools listed = %v, want %v: %v", got, tt.terminal, names)
			}
			t.Logf("tools/list: %d tools, %d bytes: %v", len(l.Tools), len(b), names)
		})
	}
}

// TestE2ETerminalSession drives a terminal session through the binary: it
// keeps cwd and variables, a refused command never reaches the shell, and
// get_server_activity shows the session's events.
func TestE2ETerminalSession(t *testing.T) {
	s := startStdio(t)
	dir := t.TempDir()
	res := call(t, s.client, "create_terminal_session", map[string]any{"session_name": "build"})
	if res.IsError {
		t.Fatalf("create: %s", resultText(res))
	}
	id := res.StructuredContent.(map[string]any)["session_id"].(string)
	res = call(t, s.client, "create_terminal_session", map[string]any{"session_name": "build"})
	if !res.IsError || !strings.Contains(resultText(res), `named "build" is already open: `+id) {
		t.Errorf("same name again: %s", resultText(res))
	}
	run := func(cmd string) *mcp.CallToolResult {
		return call(t, s.client, "execute_in_terminal", map[string]any{"session_id": id, "command": cmd})
	}
	if res := run("cd " + dir + " && GREETING=hello"); res.IsError {
		t.Fatalf("cd: %s", resultText(res))
	}
	res = run(`echo "$GREETING from $(pwd)"`)
	if res.IsError || !strings.Contains(resultText(res), "hello from "+dir) || !strings.Contains(resultText(res), "exit code: 0") {
		t.Errorf("state did not persist: %s", resultText(res))
	}
	// The gate refuses before anything is written: the marker file is
	// never created. (The refused command is harmless if it ran: it
	// decodes and runs `echo hi`.)
	res = run("echo ZWNobyBoaQ== | base64 -d | sh; touch " + dir + "/ran")
	if !res.IsError || !strings.Contains(resultText(res), "refused by policy rule remote-script") {
		t.Errorf("a decoded script in a terminal: %s", resultText(res))
	}
	res = run("ls " + dir)
	if strings.Contains(resultText(res), "ran") {
		t.Errorf("a refused command reached the shell: %s", resultText(res))
	}
	res = call(t, s.client, "close_terminal_session", map[string]any{"session_id": id})
	if res.IsError {
		t.Fatalf("close: %s", resultText(res))
	}
	res = call(t, s.client, "get_server_activity", map[string]any{})
	text := resultText(res)
	for _, want := range []string{"session.open", "session.command", "session.close"} {
		if !strings.Contains(text, want) {
			t.Errorf("get_server_activity lacks %s:\n%s", want, text)
		}
	}
}

// TestE2ETerminalCaps checks that --max-terminals-per-token and
// --max-terminals reach the session manager: a lower cap refuses the next
// session as busy, a higher one admits more than the default, and a cap
// below one is refused at start.
func TestE2ETerminalCaps(t *testing.T) {
	t.Run("lower", func(t *testing.T) {
		s := startStdio(t, "--max-terminals-per-token", "2")
		for i := range 2 {
			if res := call(t, s.client, "create_terminal_session", map[string]any{}); res.IsError {
				t.Fatalf("session %d: %s", i+1, resultText(res))
			}
		}
		res := call(t, s.client, "create_terminal_session", map[string]any{})
		if !res.IsError || !strings.Contains(resultText(res), "already has 2 terminal sessions open") {
			t.Errorf("third session under a cap of 2: %s", resultText(res))
		}
	})
	t.Run("higher", func(t *testing.T) {
		s := startStdio(t, "--max-terminals", "40", "--max-terminals-per-token", "40")
		for i := range 9 { // one past the default per-token cap of 8
			if res := call(t, s.client, "create_terminal_session", map[string]any{}); res.IsError {
				t.Fatalf("session %d under a cap of 40: %s", i+1, resultText(res))
			}
		}
	})
	for _, flag := range []string{"--max-terminals", "--max-terminals-per-token"} {
		t.Run(flag+"=0", func(t *testing.T) {
			cmd := osexec.Command(rigoutBinary(t), "stdio", flag, "0")
			cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), flag+" 0: must be at least 1") {
				t.Errorf("rigout stdio %s 0: %v: %s", flag, err, out)
			}
		})
	}
}
