package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestCustomTool(t *testing.T) {
	gw, err := newGateway(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	c, err := client.NewInProcessClient(gw.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "disk_free,execute_command" {
		t.Errorf("tools = %s", got)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "disk_free"
	req.Params.Arguments = map[string]any{"path": t.TempDir()}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "bytes free") {
		t.Fatalf("disk_free: %v %+v", err, res)
	}
	req.Params.Arguments = map[string]any{"path": "/no/such/path"}
	res, err = c.CallTool(ctx, req)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "no such file") {
		t.Errorf("disk_free on a missing path: %v %+v", err, res)
	}
	req.Params.Arguments = map[string]any{"paht": "/"}
	res, err = c.CallTool(ctx, req)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "paht") {
		t.Errorf("misspelled argument: %v %+v", err, res)
	}
}
