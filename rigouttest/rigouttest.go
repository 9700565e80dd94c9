// Package rigouttest runs a rigout gateway inside a test, in the spirit of
// net/http/httptest and mcp-go's mcptest: the gateway with its real chain
// (the principal's scopes, the argument schema, the command gate of the
// families that use one, the limits, masking, and the intent and done
// rows), an MCP client connected to it in-process, and a real SQLite
// ledger in a temporary directory to read the rows back from.
//
// # Overview
//
// [NewServer] is the one call a test makes: it starts a [Server] from a
// rigout.Config and closes it when the test ends. [Start] does the same
// without a testing.TB, for examples and programs; the caller then calls
// [Server.Close].
//
// The functions that take a testing.TB ([Call], [Text], [Structured],
// [Events], [OpenLedger], [New], [Connect], [ServeHTTP]) are the pieces
// NewServer is made of, for a test that assembles its own: two clients of
// one gateway, a ledger shared by two gateways, a gateway over HTTP.
//
// # Usage
//
//	func TestUptime(t *testing.T) {
//		sh, err := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}})
//		if err != nil {
//			t.Fatal(err)
//		}
//		s := rigouttest.NewServer(t, rigout.Config{Tools: sh.Tools()})
//		res := s.Call(t, "execute_command", map[string]any{"command": "uptime"})
//		if res.IsError {
//			t.Fatal(rigouttest.Text(res))
//		}
//		rows := s.Events(t, audit.Filter{Tool: "execute_command"})
//		...
//	}
package rigouttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
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

// ClientName is the name the in-process client gives in its initialize
// request.
const ClientName = "rigouttest"

// Server is a gateway under test with a connected client. Its fields are
// set by [Start] and must not be changed. A Server is safe for concurrent
// use as its parts are: the gateway and the client handle concurrent calls.
type Server struct {
	// Gateway is the gateway, built by rigout.New from the Config given.
	Gateway *rigout.Gateway
	// Client is an MCP client connected to Gateway in-process and
	// initialized at the latest protocol version. Its calls are
	// attributed to the Config's Principal (rigout's local principal, with
	// every scope, if nil).
	Client *client.Client
	// Ledger is the SQLite ledger in a temporary directory that records
	// every call, when the Config gave no Audit; nil when it gave one.
	Ledger *sqlite.Ledger

	dir string // the ledger's directory, removed by Close
}

// Start builds a gateway from cfg, with a SQLite ledger in a new temporary
// directory as its Audit unless cfg sets one, and connects a client to
// it. The caller must call [Server.Close].
func Start(cfg rigout.Config) (*Server, error) {
	s := &Server{}
	if err := s.start(cfg); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(cfg rigout.Config) (err error) {
	ctx := context.Background()
	if cfg.Audit == nil {
		if s.dir, err = os.MkdirTemp("", "rigouttest-"); err != nil {
			return fmt.Errorf("rigouttest: ledger directory: %w", err)
		}
		if s.Ledger, err = sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(s.dir, "audit.db")}); err != nil {
			return fmt.Errorf("rigouttest: ledger: %w", err)
		}
		cfg.Audit = s.Ledger
	}
	if s.Gateway, err = rigout.New(cfg); err != nil {
		return fmt.Errorf("rigouttest: %w", err)
	}
	if s.Client, err = client.NewInProcessClient(s.Gateway.MCPServer()); err != nil {
		return fmt.Errorf("rigouttest: client: %w", err)
	}
	if err := initialize(ctx, s.Client, ClientName); err != nil {
		return fmt.Errorf("rigouttest: %w", err)
	}
	return nil
}

// NewServer starts a Server as [Start] does and closes it when the test
// ends; it fails the test if the gateway cannot be built.
func NewServer(t testing.TB, cfg rigout.Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("rigouttest: Close: %v", err)
		}
	})
	return s
}

// Close closes the client, the gateway and the ledger, in that order,
// and removes the ledger's directory.
func (s *Server) Close() error {
	var errs []error
	if s.Client != nil {
		errs = append(errs, s.Client.Close())
	}
	if s.Gateway != nil {
		errs = append(errs, s.Gateway.Close())
	}
	if s.Ledger != nil {
		errs = append(errs, s.Ledger.Close())
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// CallTool calls the tool name with args through the chain. An error is
// a protocol fault; a refusal or a failure is a result with IsError.
func (s *Server) CallTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	return callTool(ctx, s.Client, name, args)
}

// Call calls a tool as [Server.CallTool] does and fails the test on a
// protocol fault.
func (s *Server) Call(t testing.TB, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return Call(t, s.Client, name, args)
}

// Query reads the rows of the Server's Ledger that f matches, in order.
// It fails if the Config gave its own Audit: query that instead.
func (s *Server) Query(ctx context.Context, f audit.Filter) ([]audit.Event, error) {
	if s.Ledger == nil {
		return nil, errors.New("rigouttest: the Config set Audit, so the Server has no ledger of its own: query that one")
	}
	return s.Ledger.Query(ctx, f)
}

// Events reads the rows f matches as [Server.Query] does and fails the
// test on an error.
func (s *Server) Events(t testing.TB, f audit.Filter) []audit.Event {
	t.Helper()
	ev, err := s.Query(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

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

// Connect returns an initialized in-process MCP client of gw, closed when
// the test ends.
func Connect(t testing.TB, gw *rigout.Gateway) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(gw.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	return Initialize(t, c, ClientName)
}

// Initialize starts c, closes it when the test ends, and initializes it
// at the latest protocol version as the client name; it returns c. It is
// for a client of another transport, such as one over [ServeHTTP].
func Initialize(t testing.TB, c *client.Client, name string) *client.Client {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	if err := initialize(context.Background(), c, name); err != nil {
		t.Fatal(err)
	}
	return c
}

// StartStdio starts the program at path with args (env added to this
// process's environment) as an MCP server on its standard input and
// output — an embedder's binary, or the test binary started again as one
// — and returns a client initialized with it at the latest protocol
// version, and the server's answer. The program ends with the test.
func StartStdio(t testing.TB, env []string, path string, args ...string) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	c, err := client.NewStdioMCPClient(path, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: ClientName, Version: "1"}
	res, err := c.Initialize(context.Background(), init)
	if err != nil {
		t.Fatal(err)
	}
	return c, res
}

func initialize(ctx context.Context, c *client.Client, name string) error {
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("start client: %w", err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return nil
}

func callTool(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

// Call calls a tool through c and fails the test on a protocol fault.
func Call(t testing.TB, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := callTool(context.Background(), c, name, args)
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

// OpenLedger opens a SQLite ledger in a temporary directory of the test,
// closed when the test ends.
func OpenLedger(t testing.TB) *sqlite.Ledger {
	t.Helper()
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Events queries a ledger and fails the test on an error.
func Events(t testing.TB, l audit.Querier, f audit.Filter) []audit.Event {
	t.Helper()
	ev, err := l.Query(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// ServeHTTP serves gw over streamable HTTP, without authentication, on a
// loopback port until the test ends, and returns the MCP endpoint's URL.
// It is for testing what only HTTP carries (sessions, headers, several
// clients at once); a bearer-authenticated server is built with package
// transport.
func ServeHTTP(t testing.TB, gw *rigout.Gateway) string {
	t.Helper()
	return ServeHTTPConfig(t, gw, transport.HTTPConfig{InsecureNoAuth: true})
}

// ServeHTTPConfig serves gw over streamable HTTP with cfg (an Auth
// middleware of the test's own, say, or Stateless) on a loopback port
// until the test ends, and returns the MCP endpoint's URL.
func ServeHTTPConfig(t testing.TB, gw *rigout.Gateway, cfg transport.HTTPConfig) string {
	t.Helper()
	h, err := transport.NewHTTP(gw.MCPServer(), cfg)
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
