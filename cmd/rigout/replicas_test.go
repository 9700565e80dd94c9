package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// Two real `rigout serve` processes, gw-a and gw-b (audit.gateway): the
// terminal session and the background process made on gw-a carry gw-a in
// their IDs, so gw-b, asked about them, says whose they are and how to
// reach them instead of "not found"; gw-a still serves them; an unknown ID
// of gw-b's own is plainly not found.
func TestReplicasNameTheGatewayOfSessionsAndProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("two-gateway end-to-end test skipped in -short mode")
	}
	const token = "replica-test-token-0123456789abcdef"
	clients := map[string]*client.Client{}
	for _, gw := range []string{"gw-a", "gw-b"} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "rigout.json")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"audit": {"gateway": %q}}`, gw)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, url, _ := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_STATE_DIR=" + dir}, "--config", cfg, "--no-ssh")
		clients[gw] = httpClient(t, url, token, "2025-11-25")
	}
	a, b := clients["gw-a"], clients["gw-b"]

	res := call(t, a, "create_terminal_session", map[string]any{"session_name": "build"})
	if res.IsError {
		t.Fatalf("create on gw-a: %s", resultText(res))
	}
	sid := res.StructuredContent.(map[string]any)["session_id"].(string)
	if !strings.HasSuffix(sid, "@gw-a") || len(strings.TrimSuffix(sid, "@gw-a")) < 13 {
		t.Fatalf("session ID %q does not name gw-a after its random part", sid)
	}
	res = call(t, b, "execute_in_terminal", map[string]any{"session_id": sid, "command": "echo hi"})
	want := "terminal session " + sid + " belongs to gateway gw-a; this is gateway gw-b — route by Mcp-Session-Id"
	if !res.IsError || !strings.Contains(resultText(res), want) {
		t.Fatalf("gw-a's session on gw-b: %s", resultText(res))
	}
	res = call(t, b, "close_terminal_session", map[string]any{"session_id": sid})
	if !res.IsError || !strings.Contains(resultText(res), "belongs to gateway gw-a") {
		t.Fatalf("closing gw-a's session on gw-b: %s", resultText(res))
	}
	if res := call(t, a, "execute_in_terminal", map[string]any{"session_id": sid, "command": "echo still-here"}); res.IsError || !strings.Contains(resultText(res), "still-here") {
		t.Fatalf("gw-a lost its session: %s", resultText(res))
	}
	res = call(t, b, "execute_in_terminal", map[string]any{"session_id": "t0123456789ab@gw-b", "command": "echo hi"})
	if !res.IsError || !strings.Contains(resultText(res), "no such session") {
		t.Errorf("an unknown ID of gw-b's own on gw-b: %s", resultText(res))
	}

	res = call(t, a, "execute_command", map[string]any{"command": "sleep 30", "wait_seconds": 1})
	sc, _ := res.StructuredContent.(map[string]any)
	pid, _ := sc["process_id"].(string)
	if res.IsError || !strings.HasSuffix(pid, "@gw-a") {
		t.Fatalf("handed-off process on gw-a: %q %s", pid, resultText(res))
	}
	res = call(t, b, "process", map[string]any{"action": "read", "id": pid})
	if !res.IsError || !strings.Contains(resultText(res), "process "+pid+" belongs to gateway gw-a; this is gateway gw-b") {
		t.Fatalf("gw-a's process on gw-b: %s", resultText(res))
	}
	if res := call(t, a, "process", map[string]any{"action": "signal", "id": pid, "signal": "stop"}); res.IsError {
		t.Fatalf("stop on gw-a: %s", resultText(res))
	}
}
