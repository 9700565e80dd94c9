package transport_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/transport"
)

// testServer returns an MCP server with a tool that counts its calls.
func testServer(calls *atomic.Int64) *server.MCPServer {
	s := server.NewMCPServer("test", "1.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("count", mcp.WithDescription("count")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		return mcp.NewToolResultText("counted"), nil
	})
	return s
}

// gatedServer returns an MCP server with one tool, "gated", that says it
// started on started and answers "finished" once release is closed, or
// "cancelled" if its context ended first.
func gatedServer(started chan<- struct{}, release <-chan struct{}) *server.MCPServer {
	s := server.NewMCPServer("test", "1.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("gated", mcp.WithDescription("gated")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			return mcp.NewToolResultText("cancelled"), nil
		}
		return mcp.NewToolResultText("finished"), nil
	})
	return s
}

func newHTTP(t *testing.T, srv *server.MCPServer, cfg transport.HTTPConfig) *transport.HTTP {
	t.Helper()
	h, err := transport.NewHTTP(srv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestNewHTTPNeedsAuth(t *testing.T) {
	if _, err := transport.NewHTTP(testServer(new(atomic.Int64)), transport.HTTPConfig{}); !errors.Is(err, transport.ErrNoAuth) {
		t.Errorf("NewHTTP without Auth: err = %v", err)
	}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func post(t *testing.T, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHealth(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	degraded := false
	h := newHTTP(t, testServer(new(atomic.Int64)), transport.HTTPConfig{InsecureNoAuth: true,
		Name: "rigout", Version: "9.9", Now: func() time.Time { return now },
		Health: func() map[string]any {
			if degraded {
				return map[string]any{"ok": false, "audit": "degraded"}
			}
			return nil
		},
	})
	defer h.Close()
	ts := httptest.NewServer(h.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp.Body)
	resp.Body.Close()
	want := `{"name":"rigout","ok":true,"ts":"2026-11-30T12:00:00.000Z","version":"9.9"}` + "\n"
	if resp.StatusCode != 200 || body != want {
		t.Errorf("health = %d %s, want %s", resp.StatusCode, body, want)
	}
	degraded = true
	resp, err = http.Get(ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body = readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(body, `"audit":"degraded"`) {
		t.Errorf("degraded health = %d %s", resp.StatusCode, body)
	}
}

func TestStatelessRefusesGetAndDelete(t *testing.T) {
	h := newHTTP(t, testServer(new(atomic.Int64)), transport.HTTPConfig{InsecureNoAuth: true, Stateless: true})
	defer h.Close()
	ts := httptest.NewServer(h.Handler())
	defer ts.Close()
	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		req, _ := http.NewRequest(method, ts.URL+"/mcp", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" || !strings.Contains(body, "method_not_allowed") {
			t.Errorf("%s /mcp = %d Allow=%q %s", method, resp.StatusCode, resp.Header.Get("Allow"), body)
		}
	}
	resp := post(t, ts.URL+"/mcp", initBody, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("stateless initialize = %d session %q", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
}

func TestBodyLimitAndMalformedBodies(t *testing.T) {
	var calls atomic.Int64
	h := newHTTP(t, testServer(&calls), transport.HTTPConfig{InsecureNoAuth: true, MaxBody: 1024, Stateless: true})
	defer h.Close()
	ts := httptest.NewServer(h.Handler())
	defer ts.Close()
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"pad":"%s"}}}`
	hdr := map[string]string{"MCP-Protocol-Version": "2025-11-25"}

	// Just under the cap runs; cap+1 gets 413, by Content-Length and chunked.
	fits := strings.Replace(call, "%s", strings.Repeat("x", 1024-len(call)+2), 1)
	if len(fits) != 1024 {
		t.Fatalf("fixture is %d bytes", len(fits))
	}
	if resp := post(t, ts.URL+"/mcp", fits, hdr); resp.StatusCode != 200 {
		t.Errorf("body at the cap: %d %s", resp.StatusCode, readAll(t, resp.Body))
	}
	over := fits + " "
	if resp := post(t, ts.URL+"/mcp", over, hdr); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("cap+1 bytes: status %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", io.MultiReader(strings.NewReader(over))) // no Content-Length: chunked
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "exceeds the limit of 1024 bytes") {
		t.Errorf("chunked cap+1: %d %s", resp.StatusCode, body)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("tool ran %d times, want 1 (only the body that fit)", n)
	}

	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"batch", `[` + strings.Replace(call, "%s", "", 1) + `]`, 400, "-32600"},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"x\":\"\xff\"}", 400, "-32700"},
		{"not json", `{"jsonrpc":`, 200, "-32700"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, ts.URL+"/mcp", tt.body, hdr)
			body := readAll(t, resp.Body)
			if resp.StatusCode != tt.status && !(tt.name == "not json" && resp.StatusCode == 400) {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if !strings.Contains(body, tt.code) {
				t.Errorf("body %s lacks %s", body, tt.code)
			}
		})
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("a malformed body ran the tool: %d calls", n)
	}
}

// TestSessionsBoundToPrincipal checks that a protocol session opened by one
// principal is unknown to another, and unknown IDs get 404.
func TestSessionsBoundToPrincipal(t *testing.T) {
	h := newHTTP(t, testServer(new(atomic.Int64)), transport.HTTPConfig{InsecureNoAuth: true,
		SessionOwner: func(r *http.Request) string { return r.Header.Get("X-Test-Principal") },
	})
	defer h.Close()
	ts := httptest.NewServer(h.Handler())
	defer ts.Close()
	resp := post(t, ts.URL+"/mcp", initBody, map[string]string{"X-Test-Principal": "alice"})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || len(sid) < 32 {
		t.Fatalf("initialize = %d, session %q", resp.StatusCode, sid)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	hdr := func(who, id string) map[string]string {
		return map[string]string{"X-Test-Principal": who, "Mcp-Session-Id": id, "MCP-Protocol-Version": "2025-11-25"}
	}
	if resp := post(t, ts.URL+"/mcp", ping, hdr("alice", sid)); resp.StatusCode != 200 {
		t.Errorf("owner ping = %d", resp.StatusCode)
	}
	if resp := post(t, ts.URL+"/mcp", ping, hdr("mallory", sid)); resp.StatusCode != 404 {
		t.Errorf("other principal with alice's session = %d, want 404", resp.StatusCode)
	}
	if resp := post(t, ts.URL+"/mcp", ping, hdr("alice", "0123456789abcdef0123456789abcdef")); resp.StatusCode != 404 {
		t.Errorf("unknown session = %d, want 404", resp.StatusCode)
	}
	// Another principal can neither listen on nor end alice's session.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(method, ts.URL+"/mcp", nil)
		for k, v := range hdr("mallory", sid) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("mallory %s on alice's session = %d, want 404", method, resp.StatusCode)
		}
	}
	if resp := post(t, ts.URL+"/mcp", ping, hdr("alice", sid)); resp.StatusCode != 200 {
		t.Errorf("alice's session was disturbed by mallory: ping = %d", resp.StatusCode)
	}
	req0, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
	req0.Header.Set("X-Test-Principal", "alice")
	if resp, err := http.DefaultClient.Do(req0); err != nil || resp.StatusCode != 400 {
		t.Errorf("DELETE without a session ID = %v %v, want 400", resp.StatusCode, err)
	}

	// DELETE ends it; the ID is then unknown.
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
	for k, v := range hdr("alice", sid) {
		req.Header.Set(k, v)
	}
	dr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dr.Body.Close()
	if resp := post(t, ts.URL+"/mcp", ping, hdr("alice", sid)); resp.StatusCode != 404 {
		t.Errorf("terminated session = %d, want 404", resp.StatusCode)
	}
}

func TestGuardAndAuthOrder(t *testing.T) {
	var order []string
	wrap := func(name string, refuse bool) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				if refuse && r.Header.Get("X-Refuse") == name {
					http.Error(w, name+" refused", http.StatusForbidden)
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	}
	extra := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { order = append(order, "route") })
	var calls atomic.Int64
	h := newHTTP(t, testServer(&calls), transport.HTTPConfig{InsecureNoAuth: true,
		Stateless: true, Guard: wrap("guard", true), Auth: wrap("auth", true),
		Routes: map[string]http.Handler{"/extra": extra},
	})
	defer h.Close()
	ts := httptest.NewServer(h.Handler())
	defer ts.Close()

	resp := post(t, ts.URL+"/mcp", initBody, map[string]string{"X-Refuse": "guard"})
	if resp.StatusCode != 403 || strings.Join(order, ",") != "guard" {
		t.Errorf("guard refusal: %d, ran %v", resp.StatusCode, order)
	}
	order = nil
	resp = post(t, ts.URL+"/mcp", initBody, map[string]string{"X-Refuse": "auth"})
	if resp.StatusCode != 403 || strings.Join(order, ",") != "guard,auth" {
		t.Errorf("auth refusal: %d, ran %v", resp.StatusCode, order)
	}
	order = nil
	if _, err := http.Get(ts.URL + "/extra"); err != nil || strings.Join(order, ",") != "guard,route" {
		t.Errorf("extra route ran %v (err %v)", order, err)
	}
	order = nil
	if r, err := http.Get(ts.URL + "/health"); err != nil || r.StatusCode != 200 || len(order) != 0 {
		t.Errorf("health is open: %v %v", order, err)
	}
	if r, err := http.Get(ts.URL + "/nope"); err != nil || r.StatusCode != 404 {
		t.Errorf("unknown route: %v", err)
	}
}

// TestServeDrainsInFlightCalls starts a call, cancels the server while the
// call is in its tool, then lets the tool finish: the call's answer is the
// tool's, and Serve returns.
func TestServeDrainsInFlightCalls(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	h := newHTTP(t, gatedServer(started, release), transport.HTTPConfig{InsecureNoAuth: true, Stateless: true, ShutdownTimeout: time.Minute})
	defer h.Close()
	ln, served, cancel := serveOn(t, h)
	done := callGated(ln.Addr().String())
	<-started
	cancel()
	close(release)
	if got := <-done; !strings.Contains(got, "finished") {
		t.Errorf("in-flight call ended with %q, want it drained to completion", got)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("listener still accepting after shutdown")
	}
}

// TestServeCancelsCallsThatOutliveTheDrain: a call whose tool never
// returns by itself is cancelled once the drain is over, and Serve
// returns; without the cancellation the test would hang here.
func TestServeCancelsCallsThatOutliveTheDrain(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	h := newHTTP(t, gatedServer(started, release), transport.HTTPConfig{InsecureNoAuth: true, Stateless: true, ShutdownTimeout: 100 * time.Millisecond})
	defer h.Close()
	ln, served, cancel := serveOn(t, h)
	done := callGated(ln.Addr().String())
	<-started
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
	if got := <-done; strings.Contains(got, "finished") {
		t.Errorf("call ran to completion despite the drain timeout: %s", got)
	}
}

// serveOn serves h on a new loopback listener until cancel is called;
// served yields what Serve returned.
func serveOn(t *testing.T, h *transport.HTTP) (ln net.Listener, served <-chan error, cancel func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch := make(chan error, 1)
	go func() { ch <- h.Serve(ctx, ln) }()
	return ln, ch, cancel
}

// callGated calls the gated tool at addr; the channel yields the answer's
// body, or the error.
func callGated(addr string) <-chan string {
	done := make(chan string, 1)
	go func() {
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gated","arguments":{}}}`
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- string(b)
	}()
	return done
}

// TestSessionsCappedPerPrincipal opens many sessions as one principal and
// checks that another principal's session survives, while the flooder
// keeps at most its own cap and loses its own oldest.
func TestSessionsCappedPerPrincipal(t *testing.T) {
	h := newHTTP(t, testServer(new(atomic.Int64)), transport.HTTPConfig{InsecureNoAuth: true,
		SessionOwner:            func(r *http.Request) string { return r.Header.Get("X-Test-Principal") },
		MaxSessionsPerPrincipal: 3, MaxSessions: 5,
	})
	defer h.Close()
	ts := httptest.NewServer(h.Handler())
	defer ts.Close()
	open := func(who string) string {
		resp := post(t, ts.URL+"/mcp", initBody, map[string]string{"X-Test-Principal": who})
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != 200 || sid == "" {
			t.Fatalf("initialize as %s = %d", who, resp.StatusCode)
		}
		return sid
	}
	ping := func(who, sid string) int {
		return post(t, ts.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			map[string]string{"X-Test-Principal": who, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}).StatusCode
	}
	alice := open("alice")
	var mallory []string
	for range 50 {
		mallory = append(mallory, open("mallory"))
	}
	if s := ping("alice", alice); s != 200 {
		t.Errorf("alice's session after mallory opened 50: ping = %d, want 200", s)
	}
	if s := ping("mallory", mallory[0]); s != 404 {
		t.Errorf("mallory's oldest session: ping = %d, want 404 (evicted by its own cap)", s)
	}
	if s := ping("mallory", mallory[49]); s != 200 {
		t.Errorf("mallory's newest session: ping = %d", s)
	}
	if n := h.SessionCount("mallory"); n != 3 {
		t.Errorf("mallory holds %d sessions, want its cap 3", n)
	}
	// The store is full (alice 1 + mallory 3 + bob 1 = 5); carol's new
	// session evicts from the principal holding the most: mallory.
	bob := open("bob")
	open("carol")
	for who, sid := range map[string]string{"alice": alice, "bob": bob} {
		if s := ping(who, sid); s != 200 {
			t.Errorf("%s's session after the store filled: ping = %d", who, s)
		}
	}
	if n := h.SessionCount("mallory"); n != 2 {
		t.Errorf("mallory holds %d sessions after carol's, want 2", n)
	}
}
