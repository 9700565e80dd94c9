package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/rigouttest"
)

// TestMain: started with EXAMPLE_RUN_MAIN=1, the test binary is the
// example program itself, so the test runs it as a process.
func TestMain(m *testing.M) {
	if os.Getenv("EXAMPLE_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	exec.ServeSandboxSpawner()
	os.Exit(m.Run())
}

func TestAllButOne(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "rigout.json")
	// The file turns on a family that is off by default and allows only
	// echo: the program serves what the file says, minus the terminals.
	if err := os.WriteFile(conf, []byte(`{"tool_families": {"system": true}, "policy": {"mode": "allow", "allow": ["echo"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	// HOME is the test's, so that no ~/.ssh of the machine's is read.
	c, _ := rigouttest.StartStdio(t, []string{"EXAMPLE_RUN_MAIN=1", "HOME=" + dir, "SSH_AUTH_SOCK="}, os.Args[0], conf, state)
	ctx := context.Background()
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"execute_command", "process", "file_operations", "system_monitoring", "get_server_activity", "manage_hosts"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not served: %v", want, names)
		}
	}
	for _, gone := range []string{"create_terminal_session", "docker_operations"} {
		if slices.Contains(names, gone) {
			t.Errorf("%s is served: %v", gone, names)
		}
	}
	// The file's policy holds: echo runs, ls (harmless if it ran) is
	// refused as not allowed.
	tests := []struct {
		command string
		refused bool
		want    string
	}{
		{"echo allowed-by-the-file", false, "allowed-by-the-file"},
		{"ls /", true, "ls"},
	}
	for _, tt := range tests {
		var req mcp.CallToolRequest
		req.Params.Name = "execute_command"
		req.Params.Arguments = map[string]any{"command": tt.command}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", tt.command, err)
		}
		if res.IsError != tt.refused || !strings.Contains(res.Content[0].(mcp.TextContent).Text, tt.want) {
			t.Errorf("%s: refused %v, want %v: %+v", tt.command, res.IsError, tt.refused, res)
		}
	}
}
