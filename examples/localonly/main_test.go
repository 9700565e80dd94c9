package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
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

func call(t *testing.T, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	return res
}

// TestLocalOnly: the program serves execute_command on this machine,
// refuses any other host by saying no SSH hosts are configured, and
// records the calls in its ledger.
func TestLocalOnly(t *testing.T) {
	dir := t.TempDir()
	c, _ := rigouttest.StartStdio(t, []string{"EXAMPLE_RUN_MAIN=1"}, os.Args[0], dir)
	tests := []struct {
		name    string
		args    map[string]any
		wantErr bool
		want    string
	}{
		{"this machine", map[string]any{"command": "echo from-the-shell"}, false, "from-the-shell"},
		{"localhost", map[string]any{"command": "echo on-localhost", "host": "localhost"}, false, "on-localhost"},
		{"an SSH host", map[string]any{"command": "echo never", "host": "web1"}, true, "SSH hosts are not configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "execute_command", tt.args)
			text := rigouttest.Text(res)
			if res.IsError != tt.wantErr || !strings.Contains(text, tt.want) {
				t.Errorf("execute_command %v = error %v, %q; want error %v and %q", tt.args, res.IsError, text, tt.wantErr, tt.want)
			}
		})
	}
	c.Close() // the program ends with its stdin, closing the ledger

	ledger, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer ledger.Close()
	rows, err := ledger.Query(context.Background(), audit.Filter{Tool: "execute_command"})
	if err != nil || len(rows) < len(tests) {
		t.Errorf("the ledger has %d rows of execute_command, want at least %d: %v", len(rows), len(tests), err)
	}
}
