package shell_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/tools/shell"
)

// The shell family gives a gateway execute_command; without a Router it
// runs commands on this machine only.
func Example() {
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
	gw, err := rigout.New(rigout.Config{Tools: sh.Tools()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)

	for _, args := range []map[string]any{
		{"argv": []string{"echo", "hello"}},
		{"command": "sudo -n true"}, // refused: harmless if it ran
		{"command": "true", "host": "web1"},
	} {
		var req mcp.CallToolRequest
		req.Params.Name = "execute_command"
		req.Params.Arguments = args
		res, _ := c.CallTool(ctx, req)
		lines := strings.Split(res.Content[0].(mcp.TextContent).Text, "\n")
		fmt.Println(res.IsError, lines[0])
	}
	// Output:
	// false $ echo hello
	// true refused by policy rule sudo: sudo runs a command with other privileges and this call does not allow sudo at 1:1
	// true unknown host "web1": this gateway reaches only this machine (host "local"); SSH hosts are not configured
}
