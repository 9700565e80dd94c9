package rigout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/tools/activity"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/transport"
)

// BenchmarkHTTPCall measures tools/call over the real HTTP transport on a
// loopback listener, with authentication (a bearer token checked by
// auth.Front, with its Guard) and audit (a SQLite ledger at its default
// durability) each on and off, for a no-op tool (the chain alone),
// execute_command argv [true] and get_server_activity {lines: 1}. Run it
// with -cpuprofile to see where the chain's time goes, and with -cpu 1,8
// to load it from several clients at once (RunParallel, one keep-alive
// connection and session per goroutine):
//
//	go test -run '^$' -bench 'HTTPCall/.*/noop' -cpuprofile cpu.out .
func BenchmarkHTTPCall(b *testing.B) {
	const token = "bench-token-0123456789abcdef"
	for _, mode := range []struct {
		name        string
		auth, audit bool
	}{{"off", false, false}, {"auth", true, false}, {"audit", false, true}, {"on", true, true}} {
		for _, tool := range []struct {
			name string
			args map[string]any
		}{
			{"noop", map[string]any{"msg": "hi"}},
			{"execute_command", map[string]any{"argv": []string{"true"}}},
			{"get_server_activity", map[string]any{"lines": 1}},
		} {
			b.Run(mode.name+"/"+tool.name, func(b *testing.B) {
				url := benchHTTPServer(b, mode.auth, mode.audit, token)
				hdr := ""
				if mode.auth {
					hdr = "Bearer " + token
				}
				b.RunParallel(func(pb *testing.PB) {
					c, err := newHTTPBenchClient(url, hdr)
					if err != nil {
						b.Error(err)
						return
					}
					defer c.close()
					for pb.Next() {
						if err := c.call(tool.name, tool.args); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// benchLedger is what get_server_activity reads when audit is off: an
// empty ledger.
type benchLedger struct{}

func (benchLedger) Query(context.Context, audit.Filter) ([]audit.Event, error) { return nil, nil }

// benchHTTPServer serves a gateway with the shell family, the activity
// family and a no-op tool over HTTP on loopback, and returns its MCP URL.
func benchHTTPServer(b *testing.B, withAuth, withAudit bool, token string) string {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	sh, err := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}, WorkDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	cfg := rigout.Config{Tools: append(sh.Tools(), rigout.Tool{
		Name: "noop", Description: "Answer at once.", Risk: rigout.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"msg":{"type":"string"}},"additionalProperties":false}`),
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		},
	})}
	var q audit.Querier = benchLedger{}
	if withAudit {
		l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "audit.db")})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		cfg.Audit, q = l, l
	}
	act, err := activity.New(activity.Config{Ledger: q})
	if err != nil {
		b.Fatal(err)
	}
	cfg.Tools = append(cfg.Tools, act.Tools()...)
	gw, err := rigout.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gw.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hc := transport.HTTPConfig{InsecureNoAuth: true}
	if withAuth {
		front, err := auth.New(auth.Config{
			Tokens:      []auth.Token{{Name: "bench", Secret: auth.NewSecret(token), Scopes: auth.FullScopes()}},
			Listener:    ln.Addr().String(),
			ResourceURL: "http://" + ln.Addr().String() + transport.DefaultPath,
		})
		if err != nil {
			b.Fatal(err)
		}
		hc = transport.HTTPConfig{Guard: front.Guard, Auth: front.RequireBearer, SessionOwner: func(r *http.Request) string {
			p, _ := auth.FromContext(r.Context())
			return p.Name
		}}
	}
	h, err := transport.NewHTTP(gw.MCPServer(), hc)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Serve(ctx, ln) }()
	b.Cleanup(func() { cancel(); <-done; h.Close() })
	return "http://" + ln.Addr().String() + transport.DefaultPath
}

// httpBenchClient speaks just enough MCP over HTTP to call tools, so that
// the client's own cost stays small beside the server's.
type httpBenchClient struct {
	url, auth, session string
	hc                 *http.Client
	id                 int
}

func newHTTPBenchClient(url, authHeader string) (*httpBenchClient, error) {
	c := &httpBenchClient{url: url, auth: authHeader, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}}
	init := map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "0"}}
	if _, err := c.post("initialize", init, true); err != nil {
		return nil, err
	}
	if _, err := c.post("notifications/initialized", nil, false); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *httpBenchClient) close() { c.hc.CloseIdleConnections() }

func (c *httpBenchClient) call(name string, args map[string]any) error {
	body, err := c.post("tools/call", map[string]any{"name": name, "arguments": args}, true)
	if err != nil {
		return err
	}
	if bytes.Contains(body, []byte(`"isError":true`)) || !bytes.Contains(body, []byte(`"result"`)) {
		return fmt.Errorf("tools/call %s: %.300s", name, body)
	}
	return nil
}

func (c *httpBenchClient) post(method string, params any, withID bool) ([]byte, error) {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if withID {
		c.id++
		m["id"] = c.id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	return body, nil
}
