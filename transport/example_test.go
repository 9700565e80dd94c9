package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/transport"
)

// exampleServer is an MCP server with one tool, hello.
func exampleServer() *server.MCPServer {
	srv := server.NewMCPServer("demo", "1.0", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("hello", mcp.WithDescription("says hello")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello"), nil
		})
	return srv
}

// The HTTP part of the package documentation's Usage section, on a loopback
// listener with a port the system picks, behind an auth.Front. The body of
// run is the documented code (with the listener opened first, because the
// Front must know its address); keep the two in step.
func ExampleHTTP_Serve() {
	const token = "s3cr3t-token-0123456789"
	srv := exampleServer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	run := func(ln net.Listener) error {
		front, err := auth.New(auth.Config{
			Tokens:      []auth.Token{{Name: "default", Secret: auth.NewSecret(token), Scopes: auth.FullScopes()}},
			Listener:    ln.Addr().String(),
			ResourceURL: "http://" + ln.Addr().String() + "/mcp",
		})
		if err != nil {
			return err
		}
		h, err := transport.NewHTTP(srv, transport.HTTPConfig{
			Guard:  front.Guard,
			Auth:   front.RequireBearer,
			Routes: front.Routes(),
		})
		if err != nil {
			return err
		}
		defer h.Close()
		return h.Serve(ctx, ln) // returns after ctx is done and calls drained
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- run(ln) }()

	url := "http://" + ln.Addr().String() + "/mcp"
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`
	for _, authz := range []string{"", "Bearer " + token} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			break
		}
		var answer struct {
			Result struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			} `json:"result"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		fmt.Printf("with token: %v, status %d, server %q\n", authz != "", resp.StatusCode, answer.Result.ServerInfo.Name)
	}
	http.DefaultClient.CloseIdleConnections()

	cancel()
	fmt.Println("Serve returned:", <-served)
	// Output:
	// with token: false, status 401, server ""
	// with token: true, status 200, server "demo"
	// Serve returned: <nil>
}

// The stdio part of the package documentation's Usage section, over
// in-memory pipes instead of os.Stdin and os.Stdout: initialize, call a
// tool, then end the input, which ends ServeStdio.
func ExampleServeStdio() {
	srv := exampleServer()
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler) // in a program: a handler on os.Stderr
	stdin, clientOut := io.Pipe()
	clientIn, stdout := io.Pipe()

	served := make(chan error, 1)
	go func() {
		err := transport.ServeStdio(ctx, srv, stdin, stdout, transport.StdioConfig{Logger: logger})
		stdout.Close()
		served <- err
	}()

	answers := json.NewDecoder(clientIn)
	call := func(msg string, wantAnswer bool) map[string]any {
		if _, err := io.WriteString(clientOut, msg+"\n"); err != nil {
			fmt.Println(err)
			return nil
		}
		if !wantAnswer {
			return nil
		}
		var m map[string]any
		if err := answers.Decode(&m); err != nil {
			fmt.Println(err)
		}
		return m
	}
	hello := call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`, true)
	result, _ := hello["result"].(map[string]any)
	info, _ := result["serverInfo"].(map[string]any)
	fmt.Println("server:", info["name"])
	call(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	answer := call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}`, true)
	result, _ = answer["result"].(map[string]any)
	b, _ := json.Marshal(result["content"])
	fmt.Println("hello:", string(b))

	// Drain anything the server still writes, then end the input, which
	// ends ServeStdio.
	go func() { _, _ = io.Copy(io.Discard, clientIn) }()
	clientOut.Close()
	fmt.Println("ServeStdio returned:", <-served)
	// Output:
	// server: demo
	// hello: [{"text":"hello","type":"text"}]
	// ServeStdio returned: <nil>
}
