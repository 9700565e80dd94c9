package rigout_test

//lint:file-ignore SA1019 mcp-go marks what protocol 2026-07-28 removed (the GET stream, ping, logging, sampling) deprecated; rigout still serves and tests 2025-11-25 clients, which use them.

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
)

// TestNotificationsArriveBeforeTheResult sends three progress notifications
// and a log message right before a tool returns, over streamable HTTP with
// mcp-go's client and its standalone GET stream open, many times: every one
// of them must reach the client before the result does. The client hands
// the notifications of a POST's stream to OnNotification before it returns
// the result, so no wait is needed: they are counted when CallTool returns.
func TestNotificationsArriveBeforeTheResult(t *testing.T) {
	chatty := rigout.Tool{
		Name: "chatty", Description: "Reports progress, then returns at once.", Risk: rigout.ReadOnly,
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				if err := call.Progress(ctx, float64(i), 3, "step"); err != nil {
					return nil, err
				}
			}
			_ = call.Log(ctx, mcp.LoggingLevelInfo, "chatty", "done")
			return rigout.TextResult("ok"), nil
		},
	}
	gw := newGateway(t, rigout.Config{Tools: []rigout.Tool{chatty}})
	url := serveHTTP(t, gw)
	ctx := context.Background()

	c, err := client.NewStreamableHttpClient(url, mcptransport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var progress, logs int
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		defer mu.Unlock()
		switch n.Method {
		case "notifications/progress":
			progress++
		case "notifications/message":
			logs++
		}
	})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = "2025-11-25"
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		t.Fatal(err)
	}
	const rounds = 30
	for i := 0; i < rounds; i++ {
		mu.Lock()
		progress, logs = 0, 0
		mu.Unlock()
		var req mcp.CallToolRequest
		req.Params.Name = "chatty"
		req.Params.Meta = &mcp.Meta{ProgressToken: i}
		if _, err := c.CallTool(ctx, req); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		p, l := progress, logs
		mu.Unlock()
		if p != 3 || l != 1 {
			t.Fatalf("round %d: %d progress and %d log notifications before the result, want 3 and 1", i, p, l)
		}
	}
}
