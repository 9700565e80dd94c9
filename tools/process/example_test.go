package process_test

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/process"
	"github.com/rigout/rigout/tools/shell"
)

// execute_command hands a command still running after wait_seconds to
// the Manager; the process tool reads it on, waiting for its output.
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
	local := &exec.Local{Sandbox: sb} // one Local for both, one sandbox
	m, err := sessions.New(sessions.Config{Local: local})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	sh, _ := shell.New(shell.Config{Local: local, Processes: m})
	pf, err := process.New(process.Config{Manager: m})
	if err != nil {
		fmt.Println(err)
		return
	}
	gw, err := rigout.New(rigout.Config{Tools: append(sh.Tools(), pf.Tools()...)})
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
	sc := callTool("execute_command", map[string]any{"command": "sleep 0.3; echo ok", "wait_seconds": 0})
	fmt.Println("handed off:", sc["running"], sc["next"].(map[string]any)["tool"] == "process")
	args := map[string]any{"action": "read", "id": sc["process_id"], "stream": "stdout", "wait_seconds": 10}
	var out string
	for sc = callTool("process", args); ; sc = callTool("process", args) {
		out += sc["stdout"].(map[string]any)["text"].(string)
		args["offset"] = sc["next_offset"]
		if sc["running"] == false {
			break
		}
	}
	fmt.Printf("exit %v: %s", sc["exit_code"], out)
	// Output:
	// handed off: true true
	// exit 0: ok
}
