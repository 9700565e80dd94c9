package rigout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/tools/shell"
)

// An embedder builds a gateway from its own tools. They go through the same
// registry and chain as the built-in families under tools/.
func Example() {
	greet := rigout.Tool{
		Name:        "greet",
		Description: "Greet someone by name.",
		Risk:        rigout.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`),
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			var args struct{ Name string }
			if err := call.Bind(&args); err != nil {
				return nil, err
			}
			return rigout.TextResult("hello, " + args.Name), nil
		},
	}
	// Commands run in a kernel sandbox: here Landlock with nothing
	// protected; sandboxcfg.Derive derives the rigout binary's from a
	// policy. (exec.Local{UnsafeNoSandbox: true} runs them unconfined.)
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	sh, err := shell.New(shell.Config{Local: &exec.Local{Sandbox: sb}})
	if err != nil {
		fmt.Println(err)
		return
	}
	gw, err := rigout.New(rigout.Config{Tools: append(sh.Tools(), greet)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gw.Close()

	// Talk to it in-process, as a client would over any transport.
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)

	var req mcp.CallToolRequest
	req.Params.Name = "greet"
	req.Params.Arguments = map[string]any{"name": "Ada"}
	res, _ := c.CallTool(ctx, req)
	fmt.Println(res.Content[0].(mcp.TextContent).Text)

	req.Params.Arguments = map[string]any{"name": 42}
	res, _ = c.CallTool(ctx, req)
	fmt.Println(res.IsError, res.Content[0].(mcp.TextContent).Text)
	// Output:
	// hello, Ada
	// true invalid arguments for greet: name: got number, want string
}

// Middleware sees every call, after the arguments were validated.
func ExampleMiddleware() {
	var seen []string
	logCalls := func(next rigout.Handler) rigout.Handler {
		return func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			res, err := next(ctx, call)
			seen = append(seen, call.Tool.Name+":"+call.Outcome.Route)
			return res, err
		}
	}
	sb, _ := exec.NewSandbox(exec.SandboxConfig{})
	defer sb.Close()
	sh, _ := shell.New(shell.Config{Local: &exec.Local{Sandbox: sb}})
	gw, _ := rigout.New(rigout.Config{Tools: sh.Tools(), Middleware: []rigout.Middleware{logCalls}})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)

	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"argv": []string{"echo", "hi"}}
	res, _ := c.CallTool(ctx, req)
	fmt.Println(strings.Contains(res.Content[0].(mcp.TextContent).Text, "stdout:\nhi"))
	fmt.Println(seen)
	// Output:
	// true
	// [execute_command:local]
}
