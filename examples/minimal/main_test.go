package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// start runs the program (this test binary, started again) on the state
// directory args names, and returns its initialized client and the
// initialize result.
func start(t *testing.T, args ...string) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	return rigouttest.StartStdio(t, []string{"EXAMPLE_RUN_MAIN=1"}, os.Args[0], args...)
}

func call(t *testing.T, c *client.Client, tool string, args map[string]any) string {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	return res.Content[0].(mcp.TextContent).Text
}

func TestMinimal(t *testing.T) {
	dir := t.TempDir()
	c, init := start(t, dir)
	if strings.Contains(init.Instructions, "no kernel sandbox") || !strings.Contains(init.Instructions, "Containment:") {
		t.Errorf("instructions do not say the commands are contained: %s", init.Instructions)
	}
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "execute_command,hello" {
		t.Errorf("tools = %s, want execute_command,hello", got)
	}
	if got := call(t, c, "hello", nil); got != "hello" {
		t.Errorf("hello = %q", got)
	}
	if got := call(t, c, "execute_command", map[string]any{"command": "echo from-the-shell"}); !strings.Contains(got, "from-the-shell") {
		t.Errorf("execute_command = %q", got)
	}
	c.Close() // the program ends with its stdin, closing the ledger

	ledger, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer ledger.Close()
	for _, tool := range []string{"hello", "execute_command"} {
		rows, err := ledger.Query(context.Background(), audit.Filter{Tool: tool})
		if err != nil || len(rows) == 0 {
			t.Errorf("the ledger has no row of %s: %v", tool, err)
		}
	}
}
