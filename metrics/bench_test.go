package metrics_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/metrics"
)

// BenchmarkCall compares a mutating call (intent and done rows on a real
// SQLite ledger) through the gateway with and without the metrics: the
// ledger wrapper and the in-flight middleware. Compare the two side by
// side in one run.
func BenchmarkCall(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "plain"
		if withMetrics {
			name = "metrics"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "audit.db"), UnsafeSyncNormal: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			touch := rigout.Tool{Name: "touch", Description: "mutates nothing", Risk: rigout.Mutating,
				Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText("ok"), nil
				}}
			cfg := rigout.Config{Tools: []rigout.Tool{touch}, Audit: l}
			if withMetrics {
				m := metrics.New(metrics.Config{})
				cfg.Audit = m.Ledger(l)
				cfg.Middleware = []rigout.Middleware{m.Middleware()}
			}
			gw, err := rigout.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer gw.Close()
			c, err := client.NewInProcessClient(gw.MCPServer())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			_ = c.Start(ctx)
			var init mcp.InitializeRequest
			init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
			if _, err := c.Initialize(ctx, init); err != nil {
				b.Fatal(err)
			}
			var req mcp.CallToolRequest
			req.Params.Name = "touch"
			b.ReportAllocs()
			for b.Loop() {
				if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
