package activity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/tools/activity"
)

// get_server_activity reads recent events from the ledger the gateway
// writes.
func Example() {
	dir, _ := os.MkdirTemp("", "activity-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	ledger, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ledger.Close()
	act, err := activity.New(activity.Config{Ledger: ledger})
	if err != nil {
		fmt.Println(err)
		return
	}
	gw, _ := rigout.New(rigout.Config{Tools: act.Tools(), Audit: ledger})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)

	var req mcp.CallToolRequest
	req.Params.Name = "get_server_activity"
	// This call is recorded (its intent and done rows), then shown by the
	// next, which has its own intent row committed before it reads.
	_, _ = c.CallTool(ctx, req)
	res, _ := c.CallTool(ctx, req)
	var out struct {
		Server struct {
			Health rigout.Health `json:"health"`
		} `json:"server"`
		Events []struct{ Tool, Status string } `json:"events"`
	}
	_ = json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &out)
	fmt.Println(out.Server.Health.Audit, out.Events)
	// Output:
	// ok [{get_server_activity started} {get_server_activity ok} {get_server_activity started}]
}
