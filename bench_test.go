package rigout_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
)

// BenchmarkGatewayNoop measures the gateway's own cost per call (registry,
// middleware, schema validation, mcp-go dispatch) with a tool that does
// nothing. BenchmarkGatewayExecuteTrue adds a local `true`.
//
//	go test -run '^$' -bench Gateway .
func BenchmarkGatewayNoop(b *testing.B) {
	noop := rigout.Tool{
		Name: "noop", Description: "Nothing.", Risk: rigout.ReadOnly,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return rigout.TextResult("ok"), nil
		},
	}
	gw, err := rigout.New(rigout.Config{NoBuiltinTools: true, Tools: []rigout.Tool{noop}})
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	c := connect(b, gw)
	var req mcp.CallToolRequest
	req.Params.Name = "noop"
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGatewayExecuteTrue(b *testing.B) {
	gw, err := rigout.New(rigout.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	c := connect(b, gw)
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"argv": []string{"true"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkGatewayExecuteTrueAudited(b *testing.B) {
	b.Run("sync=full", func(b *testing.B) { benchAudited(b, false) })
	b.Run("sync=normal", func(b *testing.B) { benchAudited(b, true) })
}

func benchAudited(b *testing.B, normal bool) {
	l, err := audit.Open(context.Background(), audit.Config{Path: filepath.Join(b.TempDir(), "audit.db"), UnsafeSyncNormal: normal})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	gw, err := rigout.New(rigout.Config{Audit: l})
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	c := connect(b, gw)
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"argv": []string{"true"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
