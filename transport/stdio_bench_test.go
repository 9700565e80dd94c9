package transport_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/transport"
)

// BenchmarkStdioRoundTrip measures one tools/call through ServeStdio and
// mcp-go's stdio client over in-memory pipes: the transport's own cost,
// without process wake-ups.
func BenchmarkStdioRoundTrip(b *testing.B) {
	for _, v := range []string{"2025-11-25", mcp.LATEST_PROTOCOL_VERSION} {
		b.Run(v, func(b *testing.B) { benchStdioRoundTrip(b, v) })
	}
}

func benchStdioRoundTrip(b *testing.B, version string) {
	srv := testServer(new(atomic.Int64))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = transport.ServeStdio(ctx, srv, inR, outW, transport.StdioConfig{})
		outW.Close()
	}()
	tr := mcptransport.NewIO(outR, inW, io.NopCloser(nil))
	if err := tr.Start(ctx); err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(tr)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = version
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "count"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cancel()
	inW.Close()
	<-done
}
