// Package gwtest holds the helpers the gateway's and the tool families'
// tests share: an in-process MCP client, a real SQLite ledger in a temp
// dir, a loopback HTTP server, and readers for results. It is for tests
// only.
package gwtest

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/transport"
)

// New builds a gateway and closes it when the test ends.
func New(t testing.TB, cfg rigout.Config) *rigout.Gateway {
	t.Helper()
	gw, err := rigout.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

// Connect returns an initialized in-process MCP client for gw.
func Connect(t testing.TB, gw *rigout.Gateway) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(gw.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	return Initialize(t, c, "test")
}

// Initialize starts c, closes it when the test ends, and initializes it
// at the latest protocol version as the client name; it returns c.
func Initialize(t testing.TB, c *client.Client, name string) *client.Client {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// Call calls a tool and fails the test on a protocol error.
func Call(t testing.TB, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// Text joins a result's text blocks.
func Text(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}

// Structured decodes a result's structuredContent.
func Structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// OpenLedger opens a real SQLite ledger in a temp dir, closed when the test
// ends.
func OpenLedger(t testing.TB) *sqlite.Ledger {
	t.Helper()
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Events queries the ledger.
func Events(t testing.TB, l audit.Querier, f audit.Filter) []audit.Event {
	t.Helper()
	ev, err := l.Query(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// ServeHTTP serves gw over streamable HTTP without authentication on a
// loopback port until the test ends, and returns the MCP URL.
func ServeHTTP(t testing.TB, gw *rigout.Gateway) string {
	t.Helper()
	h, err := transport.NewHTTP(gw.MCPServer(), transport.HTTPConfig{InsecureNoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		h.Close()
	})
	return "http://" + ln.Addr().String() + "/mcp"
}
