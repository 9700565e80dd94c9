package terminal_test

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/terminal"
)

// A terminal session keeps its working directory and variables from one
// execute_in_terminal to the next.
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
	m, err := sessions.New(sessions.Config{Local: &exec.Local{Sandbox: sb}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	tf, err := terminal.New(terminal.Config{Manager: m, WorkDir: "/"})
	if err != nil {
		fmt.Println(err)
		return
	}
	gw, err := rigout.New(rigout.Config{Tools: tf.Tools()})
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

	callTool := func(name string, args map[string]any) map[string]any {
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			fmt.Println(err)
			return nil
		}
		sc, _ := res.StructuredContent.(map[string]any)
		return sc
	}
	id := callTool("create_terminal_session", map[string]any{"session_name": "work"})["session_id"]
	callTool("execute_in_terminal", map[string]any{"session_id": id, "command": "cd /tmp && GREETING=hello"})
	sc := callTool("execute_in_terminal", map[string]any{"session_id": id, "command": `echo "$GREETING from $PWD"`})
	fmt.Printf("exit %v, cwd %v: %s", sc["exit_code"], sc["cwd"], sc["output"])
	callTool("close_terminal_session", map[string]any{"session_id": id})
	// Output:
	// exit 0, cwd /tmp: hello from /tmp
}
