package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/validate"
)

// A command-running tool holds a Gate and checks every command with it
// before running it; a non-nil result is the call's answer.
func Example() {
	root, _ := os.MkdirTemp("", "gate-example-")
	defer os.RemoveAll(root)
	g, err := gate.New(gate.Config{Policy: &validate.Policy{ProtectedRoots: []string{root}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	clean := rigout.Tool{
		Name:        "clean",
		Description: "Delete a directory.",
		Risk:        rigout.Exec,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"dir":{"type":"string"}},"required":["dir"]}`),
		Paths:       []rigout.PathArg{{Name: "dir"}},
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			dir, _ := call.Path("dir")
			if res := g.Check(ctx, call, gate.Command{Host: "local", Argv: []string{"rm", "-rf", dir}}); res != nil {
				return res, nil // refused, or a question for the person
			}
			return rigout.TextResult("would remove " + filepath.Base(dir)), nil // a real tool runs it here
		},
	}
	gw, _ := rigout.New(rigout.Config{Tools: []rigout.Tool{clean}})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)

	for _, dir := range []string{filepath.Join(root, "build"), root} {
		var req mcp.CallToolRequest
		req.Params.Name = "clean"
		req.Params.Arguments = map[string]any{"dir": dir}
		res, _ := c.CallTool(ctx, req)
		text := res.Content[0].(mcp.TextContent).Text
		if res.IsError {
			text = text[:len("refused by policy rule recursive-delete-root")]
		}
		fmt.Println(res.IsError, text)
	}
	// Output:
	// false would remove build
	// true refused by policy rule recursive-delete-root
}

// Judge tells what the policy decides without asking anyone.
func ExampleGate_Judge() {
	g, _ := gate.New(gate.Config{})
	fmt.Println(g.Judge(gate.Command{Shell: "ls -la"}).Allowed)
	fmt.Println(g.Judge(gate.Command{Shell: "rm -rf .", Dir: "/"}).Rule)
	fmt.Println(gate.Command{Argv: []string{"printf", "%s", "it's"}})
	// Output:
	// true
	// recursive-delete-root
	// printf %s "it's"
}
