package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestDownstreamSection: the configuration file's downstream section puts
// another MCP server behind the gateway — here a second rigout over stdio
// — whose tools are served as inner__TOOL through the same chain.
func TestDownstreamSection(t *testing.T) {
	inner, _ := json.Marshal(map[string]any{"downstream": map[string]any{"inner": map[string]any{
		"command":         []string{rigoutBinary(t), "stdio"},
		"env":             map[string]string{"RIGOUT_STATE_DIR": t.TempDir()},
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
}
