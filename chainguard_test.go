package rigout_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
)

// TestNoToolOutsideTheChain registers tools straight on the exposed mcp-go
// server (a new one, and one replacing the gateway's echo) and a
// middleware after New: over HTTP, none of them runs and tools/list shows
// the gateway's tools only; echo still runs the gateway's own handler.
func TestNoToolOutsideTheChain(t *testing.T) {
	l := openLedger(t)
	var echoes, rogue, rogueMW atomic.Int64
	gw := newGateway(t, rigout.Config{Audit: l, Tools: []rigout.Tool{echoTool("echo", &echoes)}})
	bad := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rogue.Add(1)
		return mcp.NewToolResultText("ran outside the chain"), nil
	}
	gw.MCPServer().AddTool(mcp.NewTool("rogue", mcp.WithDescription("skips the chain")), bad)
	gw.MCPServer().AddTool(mcp.NewTool("echo", mcp.WithDescription("replaced")), bad)
	gw.MCPServer().Use(func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			rogueMW.Add(1)
			return next(ctx, req)
		}
	})
	c := httpClient(t, serveHTTP(t, gw))

	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Name == "echo" && tl.Description == "replaced" {
			t.Error("tools/list shows the replacement's definition of echo")
		}
	}
	if slices.Contains(names, "rogue") || !slices.Contains(names, "echo") {
		t.Errorf("tools/list = %v, want echo and no rogue", names)
	}

	var req mcp.CallToolRequest
	req.Params.Name = "rogue"
	if res, err := c.CallTool(context.Background(), req); err == nil && !res.IsError {
		t.Errorf("rogue answered: %s", text(res))
	}
	res := callTool(t, c, "echo", map[string]any{"msg": "hi"})
	if res.IsError || echoes.Load() != 1 {
		t.Errorf("echo: %s (gateway handler ran %d times)", text(res), echoes.Load())
	}
	if rogue.Load() != 0 || rogueMW.Load() != 0 {
		t.Errorf("outside the chain: handler ran %d times, middleware %d times", rogue.Load(), rogueMW.Load())
	}
	if rows := events(t, l, audit.Filter{Tool: "echo"}); len(rows) != 2 {
		t.Errorf("echo rows = %d, want 2 (intent and done, through the chain)", len(rows))
	}
}
