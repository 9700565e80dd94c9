package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// TestDownstreamSection: the configuration file's downstream section puts
// another MCP server behind the gateway — here a second rigout over stdio
// — whose tools are served as inner__TOOL through the same chain.
func TestDownstreamSection(t *testing.T) {
	innerState := t.TempDir()
	inner, _ := json.Marshal(map[string]any{"downstream": map[string]any{"inner": map[string]any{
		"command":         []string{rigoutBinary(t), "stdio"},
		"env":             map[string]string{"RIGOUT_STATE_DIR": innerState},
		"read_only_tools": []string{"get_server_activity"},
		"deny":            []string{"*terminal*"},
		"timeout":         "30s",
	}}})
	s := startStdio(t, "--config", writeConfig(t, string(inner)))
	names, _ := toolNames(t, s)
	for _, want := range []string{"inner__execute_command", "inner__get_server_activity", "downstream_status", "execute_command"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s in %v", want, names)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "inner__") && strings.Contains(n, "terminal") {
			t.Errorf("denied tool served: %s", n)
		}
	}
	var req mcp.CallToolRequest
	req.Params.Name = "inner__execute_command"
	req.Params.Arguments = map[string]any{"command": "echo from-the-inner-rigout"}
	res, err := s.client.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(resultText(res), "from-the-inner-rigout") {
		t.Errorf("inner__execute_command = %q", resultText(res))
	}
	req.Params.Name, req.Params.Arguments = "downstream_status", nil
	if res, err = s.client.CallTool(context.Background(), req); err != nil || !strings.Contains(resultText(res), `"state": "ready"`) {
		t.Errorf("downstream_status = %v %q", err, resultText(res))
	}

	// The inner rigout runs in the outer gateway's sandbox, in the view of
	// a principal of its own (federation:inner): a PID and a mount
	// namespace other than the outer gateway's, where the outer gateway's
	// state directory is hidden. The outer gateway's own commands show
	// whether views work here.
	res = call(t, s.client, "execute_command", map[string]any{"command": "ls /proc | grep -c '^[0-9]'"})
	sc, _ := res.StructuredContent.(map[string]any)
	if n, _ := strconv.Atoi(strings.TrimSpace(fmt.Sprint(sc["stdout"]))); n == 0 || n > 5 {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("no per-principal views here (a command sees %d processes)", n)
		}
		t.Skipf("SKIP: no per-principal views here (a command sees %d processes)", n)
	}
	pid := 0
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		// The inner rigout itself, not a spawner of its own views.
		cmdline, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if procEnv(p.Name(), "RIGOUT_STATE_DIR") == innerState && strings.HasSuffix(string(cmdline), "\x00stdio\x00") {
			pid, _ = strconv.Atoi(p.Name())
		}
	}
	if pid == 0 {
		t.Fatal("the inner rigout's process was not found")
	}
	for _, ns := range []string{"pid", "mnt"} {
		outer, err1 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", s.pid, ns))
		down, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		if err1 != nil || err2 != nil || outer == down {
			t.Errorf("the stdio downstream shares the gateway's %s namespace (%s, %s; %v %v)", ns, outer, down, err1, err2)
		}
	}
	outerState := procEnv(strconv.Itoa(s.pid), "RIGOUT_STATE_DIR")
	if entries, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "root", outerState)); err == nil && len(entries) > 0 {
		t.Errorf("the stdio downstream's view shows the gateway's state directory %s (%d entries)", outerState, len(entries))
	}
}

// procEnv returns process pid's environment variable name, or "".
func procEnv(pid, name string) string {
	env, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
	if err != nil {
		return ""
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// TestDownstreamTokenCredential: an HTTP downstream's bearer token comes
// from a credential alias (token_credential) that allows "downstream"; an
// alias that does not allow it gives the downstream no token, and its
// tools are not served.
func TestDownstreamTokenCredential(t *testing.T) {
	const token = "downstream-token-0123456789abcdef"
	s := mcpserver.NewMCPServer("web", "1")
	s.AddTool(mcp.NewTool("hello", mcp.WithDescription("Says hello.")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello from the downstream"), nil
	})
	h := mcpserver.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tokFile := filepath.Join(t.TempDir(), "downstream.token")
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		tools  []string
		served bool
	}{
		{"allowed", []string{"downstream"}, true},
		{"not allowed", []string{"execute_command"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := json.Marshal(map[string]any{
				"credentials": map[string]any{"dtok": map[string]any{"file": tokFile, "tools": tt.tools}},
				"downstream":  map[string]any{"web": map[string]any{"url": srv.URL + "/mcp", "token_credential": "dtok"}},
			})
			c := startStdio(t, "--config", writeConfig(t, string(cfg)))
			if !tt.served {
				var req mcp.CallToolRequest
				req.Params.Name = "downstream_status"
				res, err := c.client.CallTool(context.Background(), req)
				if err != nil || !strings.Contains(resultText(res), "dtok") {
					t.Errorf("downstream_status does not name the refused alias: %v %q", err, resultText(res))
				}
				if strings.Contains(resultText(res), token) {
					t.Error("downstream_status shows the token")
				}
				if names, _ := toolNames(t, c); slices.Contains(names, "web__hello") {
					t.Errorf("web__hello served without an allowed credential: %v", names)
				}
				return
			}
			var names []string
			for range 100 { // the downstream connects in the background
				if names, _ = toolNames(t, c); slices.Contains(names, "web__hello") {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if !slices.Contains(names, "web__hello") {
				t.Fatalf("no web__hello in %v", names)
			}
			var req mcp.CallToolRequest
			req.Params.Name = "web__hello"
			res, err := c.client.CallTool(context.Background(), req)
			if err != nil || res.IsError || !strings.Contains(resultText(res), "hello from the downstream") {
				t.Errorf("web__hello = %v %q", err, resultText(res))
			}
		})
	}
}
