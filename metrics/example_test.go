package metrics_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/metrics"
)

// The metrics wrap the ledger the gateway records in and add a
// middleware; Handler serves them (mount it behind a token).
func Example() {
	dir, _ := os.MkdirTemp("", "metrics-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	ledger, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ledger.Close()
	m := metrics.New(metrics.Config{})
	hello := rigout.Tool{Name: "hello", Description: "says hello", Risk: rigout.ReadOnly,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello"), nil
		}}
	gw, _ := rigout.New(rigout.Config{Tools: []rigout.Tool{hello}, Audit: m.Ledger(ledger), Middleware: []rigout.Middleware{m.Middleware()}})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)
	var req mcp.CallToolRequest
	req.Params.Name = "hello"
	_, _ = c.CallTool(ctx, req)

	fams, _ := m.Registry().Gather()
	for _, f := range fams {
		if f.GetName() == "rigout_tool_calls_total" {
			for _, s := range f.GetMetric() {
				fmt.Println(s.GetLabel()[1].GetValue(), s.GetLabel()[2].GetValue(), s.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// ok hello 1
}
