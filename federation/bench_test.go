package federation_test

import (
	"context"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/federation"
	"github.com/rigout/rigout/rigouttest"
)

// BenchmarkEcho compares one echo call made straight to a stdio
// downstream with the same call made through the gateway (chain, no
// ledger) to the same kind of downstream: the ratio is what federation
// costs. Run: go test -run '^$' -bench Echo ./federation
func BenchmarkEcho(b *testing.B) {
	ctx := context.Background()
	args := map[string]any{"msg": "hi"}
	b.Run("direct", func(b *testing.B) {
		c, err := client.NewStdioMCPClient(os.Args[0], []string{"FEDTEST_DOWNSTREAM=stdio", "FEDTEST_DIR=" + b.TempDir()}, "-test.run=^$")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		var init mcp.InitializeRequest
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			b.Fatal(err)
		}
		echoLoop(b, c, "echo", args)
	})
	b.Run("gateway", func(b *testing.B) {
		gw := rigouttest.New(b, rigout.Config{})
		fed, err := federation.New(federation.Config{Servers: []federation.Server{{
			Name: "a", Command: []string{os.Args[0], "-test.run=^$"},
			Env: map[string]string{"FEDTEST_DOWNSTREAM": "stdio", "FEDTEST_DIR": b.TempDir()},
		}}, UnsafeNoSandbox: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := fed.Start(ctx, gw); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { fed.Close() })
		echoLoop(b, rigouttest.Connect(b, gw), "a__echo", args)
	})
}

func echoLoop(b *testing.B, c *client.Client, name string, args map[string]any) {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", name, err, res)
		}
	}
}
