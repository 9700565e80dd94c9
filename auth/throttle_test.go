package auth_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/auth"
)

// clientFrom returns an HTTP client whose connections come from the local
// address ip (any 127.0.0.0/8 address works on Linux loopback).
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func TestThrottle(t *testing.T) {
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		c.Throttle = auth.ThrottleConfig{Failures: 5, Window: time.Minute}
	})
	attacker, friend := clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3")
	call := func(c *http.Client, tok string) *http.Response {
		t.Helper()
		req := h.newRequest(http.MethodPost, "/mcp", strings.NewReader("{}"), "Authorization", "Bearer "+tok)
		resp, err := c.Do(req)
		if err != nil {
			t.Skipf("cannot connect from a second loopback address: %v", err)
		}
		resp.Body.Close()
		return resp
	}
	for i := range 5 {
		if r := call(attacker, fmt.Sprintf("wrong%d", i)); r.StatusCode != 401 {
			t.Fatalf("failure %d: %d", i, r.StatusCode)
		}
	}
	r := call(attacker, "wrong")
	if r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after 5 failures: %d, want 429", r.StatusCode)
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	// The right token from the throttled address still works (the
	// attacker may share it with the real client), and a wrong one after
	// it is still throttled.
	if r := call(attacker, h.token); r.StatusCode != 200 {
		t.Fatalf("right token from throttled address: %d, want 200", r.StatusCode)
	}
	if r := call(attacker, "wrong"); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("wrong token after a right one: %d, want 429", r.StatusCode)
	}
	// Another address is not slowed.
	for range 3 {
		if r := call(friend, h.token); r.StatusCode != 200 {
			t.Fatalf("other address: %d", r.StatusCode)
		}
	}
	// /connection.json and the token endpoint share the count.
	req := h.newRequest(http.MethodGet, "/connection.json", nil, auth.SetupTokenHeader, "guess")
	if resp, err := attacker.Do(req); err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("connection.json from throttled address: %v %v", resp, err)
	}
	// After the window the address may try again.
	h.clock.Advance(time.Minute)
	if r := call(attacker, "wrong"); r.StatusCode != 401 {
		t.Fatalf("after the window: %d, want 401", r.StatusCode)
	}
	if countType(h.eventTypes(), auth.EventThrottled) < 2 {
		t.Error("no auth.throttled events")
	}
}

func TestThrottleTableBounded(t *testing.T) {
	fail, blocked, size := auth.NewThrottleForTest(auth.ThrottleConfig{Failures: 2, Window: time.Minute, MaxAddresses: 100})
	now := time.Unix(1000, 0)
	for i := range 10000 {
		fail(fmt.Sprintf("10.0.%d.%d", i/256, i%256), now)
	}
	if n := size(); n > 100 {
		t.Fatalf("table holds %d addresses, bound 100", n)
	}
	// The most recent offenders are still counted.
	fail("10.0.39.15", now)
	if _, b := blocked("10.0.39.15", now); !b {
		t.Error("recent offender forgotten")
	}
	// Expired entries go first.
	later := now.Add(2 * time.Minute)
	fail("192.0.2.1", later)
	if _, b := blocked("10.0.39.15", later); b {
		t.Error("still blocked after the window")
	}
}

// TestThrottleIPv6Prefix: addresses in one /64 share a count.
func TestThrottleIPv6Prefix(t *testing.T) {
	h := newHarness(t, func(_ *harness, c *auth.Config) { c.Throttle.Failures = 2 })
	handler := h.front.RequireBearer(http.NotFoundHandler())
	for i, addr := range []string{"[2001:db8::1]:1000", "[2001:db8::2]:1001", "[2001:db8::3]:1002"} {
		rec := newRecorder()
		req, _ := http.NewRequest(http.MethodGet, "/mcp", nil)
		req.RemoteAddr = addr
		req.Header.Set("Authorization", "Bearer wrong")
		handler.ServeHTTP(rec, req)
		want := 401
		if i == 2 {
			want = 429
		}
		if rec.Code != want {
			t.Fatalf("%s: %d, want %d", addr, rec.Code, want)
		}
	}
}

// TestNoCredentialsNotCounted: discovery probes without any credential are
// answered 401 but never throttle the address.
func TestNoCredentialsNotCounted(t *testing.T) {
	h := newHarness(t, func(_ *harness, c *auth.Config) { c.Throttle.Failures = 2 })
	for range 5 {
		if r := h.do(h.newRequest(http.MethodPost, "/mcp", nil)); r.status != 401 {
			t.Fatalf("probe: %d", r.status)
		}
	}
	if s := h.mcpStatus(h.token); s != 200 {
		t.Fatalf("after probes: %d", s)
	}
}

// TestThrottleNeverRefusesValidCredential: bad tokens from 127.0.0.1, the
// address every local process shares, lock out bad and missing credentials
// from it, never a valid one, on the MCP endpoint and /connection.json.
func TestThrottleNeverRefusesValidCredential(t *testing.T) {
	var expired string
	h := newHarness(t, func(h *harness, c *auth.Config) {
		expired = newToken(t)
		c.Tokens = append(c.Tokens, auth.Token{Name: "old", Secret: auth.NewSecret(expired), Scopes: auth.FullScopes(), Expires: h.clock.Now()})
		c.Throttle = auth.ThrottleConfig{Failures: 10, Window: time.Minute}
	})
	handler := h.front.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	port := 40000
	send := func(from, path, header, value string) *httptest.ResponseRecorder {
		t.Helper()
		port++ // a new connection each time: only the IP may count
		req := httptest.NewRequest(http.MethodPost, h.base+path, strings.NewReader("{}"))
		if path == "/connection.json" {
			req.Method = http.MethodGet
		}
		req.RemoteAddr = net.JoinHostPort(from, strconv.Itoa(port))
		if header != "" {
			req.Header.Set(header, value)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec
	}
	for i := range 10 {
		if rec := send("127.0.0.1", "/mcp", "Authorization", "Bearer "+newToken(t)); rec.Code != 401 {
			t.Fatalf("bad token %d: %d, want 401", i, rec.Code)
		}
	}
	tests := []struct {
		name, from, path, header, value string
		want                            int
	}{
		{name: "valid token", from: "127.0.0.1", path: "/mcp", header: "Authorization", value: "Bearer " + h.token, want: 204},
		{name: "valid token, lower-case scheme", from: "127.0.0.1", path: "/mcp", header: "Authorization", value: "bearer " + h.token, want: 204},
		{name: "bad token", from: "127.0.0.1", path: "/mcp", header: "Authorization", value: "Bearer " + newToken(t), want: 429},
		{name: "valid token again", from: "127.0.0.1", path: "/mcp", header: "Authorization", value: "Bearer " + h.token, want: 204},
		{name: "expired token", from: "127.0.0.1", path: "/mcp", header: "Authorization", value: "Bearer " + expired, want: 429},
		{name: "malformed header", from: "127.0.0.1", path: "/mcp", header: "Authorization", value: "Bearer", want: 429},
		{name: "no credential", from: "127.0.0.1", path: "/mcp", want: 429},
		{name: "token in query", from: "127.0.0.1", path: "/mcp?access_token=" + h.token, want: 429},
		{name: "connection.json, valid token", from: "127.0.0.1", path: "/connection.json", header: "Authorization", value: "Bearer " + h.token, want: 200},
		{name: "connection.json, bad token", from: "127.0.0.1", path: "/connection.json", header: "Authorization", value: "Bearer " + newToken(t), want: 429},
		{name: "connection.json, bad setup token", from: "127.0.0.1", path: "/connection.json", header: auth.SetupTokenHeader, value: newToken(t), want: 429},
		{name: "connection.json, nothing", from: "127.0.0.1", path: "/connection.json", want: 429},
		{name: "other address, valid token", from: "127.0.0.2", path: "/mcp", header: "Authorization", value: "Bearer " + h.token, want: 204},
		{name: "other address, bad token", from: "127.0.0.2", path: "/mcp", header: "Authorization", value: "Bearer " + newToken(t), want: 401},
		{name: "IPv6 loopback, bad token", from: "::1", path: "/mcp", header: "Authorization", value: "Bearer " + newToken(t), want: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := send(tt.from, tt.path, tt.header, tt.value)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tt.want, rec.Body)
			}
			if tt.want == 429 {
				if s, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || s < 1 || s > 60 {
					t.Errorf("Retry-After %q", rec.Header().Get("Retry-After"))
				}
			}
			if rec.Code >= 400 {
				leaks.text(rec.Body.String())
			}
		})
	}
	if n := countType(h.eventTypes(), auth.EventDenied); n != 10+2 {
		t.Errorf("%d %s events, want 12 (the lockout and the other addresses' bad tokens)", n, auth.EventDenied)
	}
	if n := countType(h.eventTypes(), auth.EventThrottled); n != 8 {
		t.Errorf("%d %s events, want one per 429 (8)", n, auth.EventThrottled)
	}
}
