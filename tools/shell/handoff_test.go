package shell_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/shell"
)

func newManager(t *testing.T) *sessions.Manager {
	t.Helper()
	m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true}, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// waitDone waits for alice's only process to finish and returns it.
func waitDone(t *testing.T, m *sessions.Manager, id string) sessions.Info {
	t.Helper()
	p, err := m.Get("local", id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return p.Info()
}

func TestHandOffWaitReportsProgress(t *testing.T) {
	m := newManager(t)
	c := connect(t, newGateway(t, setup{Shell: shell.Config{Processes: m, ProgressInterval: 100 * time.Millisecond}}))
	var mu sync.Mutex
	n := 0
	c.OnNotification(func(note mcp.JSONRPCNotification) {
		if note.Method == "notifications/progress" {
			mu.Lock()
			n++
			mu.Unlock()
		}
	})
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"command": "sleep 0.6; echo x", "wait_seconds": 5}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || res.IsError || !strings.Contains(text(res), "exit code: 0") {
		t.Fatalf("%v %s", err, text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if n < 3 {
		t.Fatalf("%d progress notifications while waiting", n)
	}
}

// TestHandedOffKeepsDefaultTimeout: a handed-off command ends at the
// default timeout, as documented, unless the call sets a longer one.
func TestHandedOffKeepsDefaultTimeout(t *testing.T) {
	m := newManager(t)
	c := connect(t, newGateway(t, setup{Shell: shell.Config{Processes: m, DefaultTimeout: time.Second}}))
	res := callTool(t, c, "execute_command", map[string]any{"command": "sleep 3; echo late", "wait_seconds": 0})
	id, _ := structured(t, res)["process_id"].(string)
	if id == "" {
		t.Fatalf("not handed off: %s", text(res))
	}
	if in := waitDone(t, m, id); !in.TimedOut || in.StdoutBytes != 0 {
		t.Fatalf("default timeout not applied: %+v", in)
	}
	// A timeout the call sets replaces it.
	res = callTool(t, c, "execute_command", map[string]any{"command": "sleep 1.5; echo late", "wait_seconds": 0, "timeout": 10})
	id, _ = structured(t, res)["process_id"].(string)
	if in := waitDone(t, m, id); in.TimedOut || in.ExitCode != 0 || in.StdoutBytes != 5 {
		t.Fatalf("explicit timeout not applied: %+v", in)
	}
}

func TestWaitSecondsNeedsProcesses(t *testing.T) {
	c := connect(t, newGateway(t, setup{}))
	res := callTool(t, c, "execute_command", map[string]any{"command": "true", "wait_seconds": 1})
	if !res.IsError {
		t.Fatalf("wait_seconds accepted without a Manager: %s", text(res))
	}
}
