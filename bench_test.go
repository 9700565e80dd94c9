package rigout_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/tools/shell"
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
	gw, err := rigout.New(rigout.Config{Tools: []rigout.Tool{noop}})
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

// BenchmarkGatewayExecuteTrue runs execute_command argv [true] in process,
// without a ledger and with one in each durability mode, side by side.
func BenchmarkGatewayExecuteTrue(b *testing.B) {
	b.Run("audit=off", func(b *testing.B) { benchExecuteTrue(b, nil) })
	b.Run("audit=full", func(b *testing.B) { benchExecuteTrue(b, &sqlite.Config{}) })
	b.Run("audit=normal", func(b *testing.B) { benchExecuteTrue(b, &sqlite.Config{UnsafeSyncNormal: true}) })
}

// benchExecuteTrue measures one call against a gateway with a ledger
// opened with lc, or none when lc is nil.
func benchExecuteTrue(b *testing.B, lc *sqlite.Config) {
	sh, err := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := rigout.Config{Tools: sh.Tools()}
	if lc != nil {
		lc.Path = filepath.Join(b.TempDir(), "audit.db")
		l, err := sqlite.Open(context.Background(), *lc)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		cfg.Audit = l
	}
	gw, err := rigout.New(cfg)
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
