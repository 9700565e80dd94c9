package auth_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/rigout/rigout/auth"
)

// TestOriginRejected: every Origin that is present and not allowed gets 403
// before anything else runs, on every route.
func TestOriginRejected(t *testing.T) {
	h := newHarness(t, nil)
	_, port, _ := net.SplitHostPort(h.addr)
	other := "1"
	if port == "1" {
		other = "2"
	}
	origins := []string{
		"https://evil.example",
		"http://evil.example",
		"null",
		"http://localhost.evil.example:" + port,
		"http://localhost.:" + port, // trailing dot
		"http://127.0.0.1.:" + port,
		"http://127.0.0.1.nip.io:" + port,
		"http://localhost:" + other + port, // wrong port
		"http://127.0.0.1:" + other + port,
		"http://localhost",          // no port: port 80
		"https://localhost:" + port, // wrong scheme
		"https://127.0.0.1:" + port,
		"ws://127.0.0.1:" + port,
		"http://[::1]:" + other + port,
		"http://xn--lcalhost-9of:" + port, // punycode lookalike
		"http://lоcalhost:" + port,        // Cyrillic о
		"http://ｌocalhost:" + port,        // full-width l
		"http://localhost:" + port + "/",  // not a serialised origin
		"http://user@localhost:" + port,
		"http://127.0.0.2:" + port,
		"http://0.0.0.0:" + port,
		"*",
		"",
		"file://",
		"http://localhost:" + port + " http://evil.example",
	}
	paths := []string{"/mcp", "/connection.json", "/.well-known/oauth-protected-resource", "/.well-known/registry-card", "/nonexistent"}
	for _, o := range origins {
		for _, p := range paths {
			t.Run(o+p, func(t *testing.T) {
				before := h.calls.Load()
				req := h.newRequest(http.MethodPost, p, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
					"Authorization", "Bearer "+h.token)
				req.Header["Origin"] = []string{o} // set verbatim, even when empty
				r := h.do(req)
				if r.status != http.StatusForbidden {
					t.Fatalf("status %d, want 403", r.status)
				}
				if m := r.json(t); m["error"] != "forbidden" || m["error_description"] != "origin not allowed" {
					t.Errorf("body %v", m)
				}
				if h.calls.Load() != before {
					t.Error("the wrapped handler ran")
				}
				assertNoCORS(t, r)
			})
		}
	}
	if n := countType(h.eventTypes(), auth.EventRejected); n != len(origins)*len(paths) {
		t.Errorf("%d http.rejected events, want %d", n, len(origins)*len(paths))
	}
}

func countType(ts []auth.EventType, typ auth.EventType) int {
	n := 0
	for _, t := range ts {
		if t == typ {
			n++
		}
	}
	return n
}

func assertNoCORS(t *testing.T, r response) {
	t.Helper()
	for k := range r.header {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			t.Errorf("CORS header %s sent without CORS configured", k)
		}
	}
}

// TestOriginAllowed: the server's own origins, configured origins and no
// Origin at all go through to authentication.
func TestOriginAllowed(t *testing.T) {
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		c.AllowedOrigins = []string{"https://App.Example.com:443"}
	})
	_, port, _ := net.SplitHostPort(h.addr)
	for _, o := range []string{"", "http://127.0.0.1:" + port, "http://localhost:" + port, "http://LOCALHOST:" + port, "http://[::1]:" + port, "https://app.example.com"} {
		t.Run(o, func(t *testing.T) {
			hdr := []string{"Authorization", "Bearer " + h.token}
			if o != "" {
				hdr = append(hdr, "Origin", o)
			}
			r := h.do(h.newRequest(http.MethodPost, "/mcp", strings.NewReader("{}"), hdr...))
			if r.status != 200 {
				t.Fatalf("status %d", r.status)
			}
			assertNoCORS(t, r)
			// Without a token it reaches authentication: 401, not 403.
			hdr = hdr[2:]
			if r := h.do(h.newRequest(http.MethodPost, "/mcp", nil, hdr...)); r.status != http.StatusUnauthorized {
				t.Fatalf("no token: status %d, want 401", r.status)
			}
		})
	}
}

// TestHostRejected: DNS rebinding with no Origin at all is stopped by the
// Host check on a loopback listener.
func TestHostRejected(t *testing.T) {
	h := newHarness(t, nil)
	_, port, _ := net.SplitHostPort(h.addr)
	hosts := []string{
		"attacker.example",
		"attacker.example:" + port,
		"localhost.:" + port,
		"localhost.evil.example:" + port,
		"127.0.0.1.nip.io:" + port,
		"localhost:1" + port,
		"127.0.0.1", // port 80
		"localhost", // port 80
		"[::1]:1" + port,
		"192.168.1.10:" + port,
		"0.0.0.0:" + port,
		"xn--lcalhost-9of:" + port,
		"lоcalhost:" + port,
		"localhost:" + port + ":" + port,
		"localhost:abc",
		"[::1",
	}
	for _, host := range hosts {
		t.Run(host, func(t *testing.T) {
			before := h.calls.Load()
			r := h.get("/mcp", "Host", host, "Authorization", "Bearer "+h.token)
			if r.status == http.StatusBadRequest {
				return // net/http itself refused the malformed Host: also before us
			}
			if r.status != http.StatusForbidden {
				t.Fatalf("status %d, want 403", r.status)
			}
			if m := r.json(t); m["error_description"] != "host not allowed" {
				t.Errorf("body %v", m)
			}
			if h.calls.Load() != before {
				t.Error("the wrapped handler ran")
			}
		})
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "[::1]:" + port, "127.1.2.3:" + port} {
		t.Run("ok "+host, func(t *testing.T) {
			if r := h.get("/mcp", "Host", host, "Authorization", "Bearer "+h.token); r.status != 200 {
				t.Fatalf("status %d, want 200", r.status)
			}
		})
	}
}

// TestHostNonLoopback: a wildcard listener accepts configured names, the
// resource URL's host and IP literals, and still refuses other names.
func TestHostNonLoopback(t *testing.T) {
	h := newHarness(t, func(h *harness, c *auth.Config) {
		_, port, _ := net.SplitHostPort(h.addr)
		c.Listener = "0.0.0.0:" + port
		c.ResourceURL = "https://rigout.example.com/mcp"
		c.AllowedHosts = []string{"tunnel.example.net", "proxy.example.org:8443"}
	})
	tests := []struct {
		host string
		want int
	}{
		{"rigout.example.com", 200},
		{"rigout.example.com:443", 200},
		{"tunnel.example.net:9999", 200},
		{"proxy.example.org:8443", 200},
		{"proxy.example.org:8444", 403},
		{"10.1.2.3:8765", 200},
		{"[2001:db8::1]:8765", 200},
		{"evil.example", 403},
		{"rigout.example.com.", 403},
		{"rigout.example.com.evil.example", 403},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if r := h.get("/mcp", "Host", tt.host, "Authorization", "Bearer "+h.token); r.status != tt.want {
				t.Fatalf("status %d, want %d", r.status, tt.want)
			}
		})
	}
}

// TestCORS: configured CORS echoes only allowed origins, never "*", never
// with credentials, and answers preflights.
func TestCORS(t *testing.T) {
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		c.CORS = true
		c.AllowedOrigins = []string{"https://app.example.com"}
	})
	pre := h.newRequest(http.MethodOptions, "/mcp", nil,
		"Origin", "https://app.example.com", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization")
	r := h.do(pre)
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") || r.header.Get("Vary") != "Origin" {
		t.Fatalf("preflight: %d %v", r.status, r.header)
	}
	r = h.get("/mcp", "Origin", "https://app.example.com")
	if r.status != http.StatusUnauthorized || r.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Fatalf("401 with CORS: %d %v", r.status, r.header)
	}
	for _, rr := range []response{r, h.get("/mcp", "Origin", "https://evil.example"), h.do(h.newRequest(http.MethodOptions, "/mcp", nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "POST"))} {
		if rr.header.Get("Access-Control-Allow-Origin") == "*" || rr.header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("ACAO %q, credentials %q", rr.header.Get("Access-Control-Allow-Origin"), rr.header.Get("Access-Control-Allow-Credentials"))
		}
	}
	if r := h.get("/mcp", "Origin", "https://evil.example"); r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("evil origin: %d %v", r.status, r.header)
	}
}
