package system_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/tools/system"
)

// get_hardware_info answers with JSON in structuredContent; here its
// memory total agrees with /proc/meminfo.
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
	sf, err := system.New(system.Config{Local: &exec.Local{Sandbox: sb}})
	if err != nil {
		fmt.Println(err)
		return
	}
	gw, _ := rigout.New(rigout.Config{Tools: sf.Tools()})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)

	var req mcp.CallToolRequest
	req.Params.Name = "get_hardware_info"
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		fmt.Println("failed", err)
		return
	}
	hw := res.StructuredContent.(map[string]any)
	total := uint64(hw["memory"].(map[string]any)["total_bytes"].(float64))
	b, _ := os.ReadFile("/proc/meminfo")
	kb, _ := strconv.ParseUint(strings.Fields(strings.SplitN(string(b), "\n", 2)[0])[1], 10, 64)
	fmt.Println(hw["host"], hw["source"], total == kb*1024)
	// Output:
	// local gopsutil true
}
