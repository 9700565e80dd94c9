package auth_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/auth"
)

// TestRoutesCredentialMatrix sends every credential variant to every route
// and checks status, headers and body.
func TestRoutesCredentialMatrix(t *testing.T) {
	var expired, revoked string
	h := newHarness(t, func(h *harness, c *auth.Config) {
		expired, revoked = newToken(t), newToken(t)
		c.Tokens = append(c.Tokens,
			auth.Token{Name: "old", Secret: auth.NewSecret(expired), Scopes: auth.FullScopes(), Expires: h.clock.Now().Add(-time.Second)},
			auth.Token{Name: "gone", Secret: auth.NewSecret(revoked), Scopes: auth.FullScopes()},
		)
		c.Throttle.Failures = 10000 // this test is about answers, not throttling
		c.OAuth = &auth.OAuthConfig{
			Consent:           true,
			AllowRegistration: true,
			Clients:           []auth.Client{{ID: "app", RedirectURIs: []string{"http://127.0.0.1/cb"}, Scopes: auth.FullScopes()}},
		}
	})
	if !h.front.Valid(auth.Principal{Name: "gone"}) {
		t.Fatal("Valid: a live token reported dead")
	}
	if !h.front.RevokeToken("gone") || h.front.RevokeToken("nosuch") {
		t.Fatal("RevokeToken: wrong answer")
	}
	if h.front.Valid(auth.Principal{Name: "gone"}) || h.front.Valid(auth.Principal{Name: "old"}) || h.front.Valid(auth.Principal{Name: "nosuch"}) {
		t.Fatal("Valid: a revoked, expired or unknown token reported live")
	}
	wrong := newToken(t)

	variants := []variant{
		{name: "no header"},
		{name: "lower-case scheme", hdr: []string{"Authorization", "bearer " + h.token}, good: true},
		{name: "upper-case scheme", hdr: []string{"Authorization", "BEARER " + h.token}, good: true},
		{name: "extra spaces", hdr: []string{"Authorization", "Bearer   " + h.token}, good: true},
		{name: "tab", hdr: []string{"Authorization", "Bearer\t" + h.token}, good: true},
		{name: "scheme only", hdr: []string{"Authorization", "Bearer"}, sent: true},
		{name: "scheme and spaces", hdr: []string{"Authorization", "Bearer   "}, sent: true},
		{name: "no separator", hdr: []string{"Authorization", "Bearer" + h.token}, sent: true},
		{name: "token and parameter", hdr: []string{"Authorization", "Bearer " + h.token + ", realm=x"}, sent: true},
		{name: "wrong token", hdr: []string{"Authorization", "Bearer " + wrong}, sent: true},
		{name: "token in query", query: "access_token=" + url.QueryEscape(h.token), sent: true},
		{name: "right token", hdr: []string{"Authorization", "Bearer " + h.token}, good: true},
		{name: "expired token", hdr: []string{"Authorization", "Bearer " + expired}, sent: true},
		{name: "revoked token", hdr: []string{"Authorization", "Bearer " + revoked}, sent: true},
		{name: "right header and query token", hdr: []string{"Authorization", "Bearer " + h.token}, query: "access_token=" + url.QueryEscape(h.token), sent: true},
		{name: "two headers", hdr: []string{"Authorization", "Bearer " + h.token, "Authorization", "Bearer " + h.token}, sent: true},
		{name: "basic scheme", hdr: []string{"Authorization", "Basic " + h.token}, sent: true},
	}
	prm := h.front.ResourceMetadataURL()
	want401 := func(t *testing.T, r response, v variant) {
		t.Helper()
		if r.status != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401; body %s", r.status, r.body)
		}
		wantCh := `Bearer resource_metadata="` + prm + `"`
		if v.sent {
			wantCh = `Bearer error="invalid_token", resource_metadata="` + prm + `"`
		}
		if got := r.header.Get("WWW-Authenticate"); got != wantCh {
			t.Errorf("WWW-Authenticate %q, want %q", got, wantCh)
		}
		if got := r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control %q, want no-store", got)
		}
		// One body for every failure: it does not say which part was wrong.
		const body = `{"error":"unauthorized","error_description":"a valid bearer token is required in the Authorization header"}`
		if got := string(bytes.TrimSpace(r.body)); got != body {
			t.Errorf("body %s, want %s", got, body)
		}
	}

	type route struct {
		method, path, body, ctype string
		check                     func(t *testing.T, v variant, r response, ranBefore int32)
	}
	routes := []route{
		{method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, ctype: "application/json",
			check: func(t *testing.T, v variant, r response, ran int32) {
				if !v.good {
					want401(t, r, v)
					if h.calls.Load() != ran {
						t.Error("the MCP handler ran for a refused request")
					}
					return
				}
				if r.status != 200 || h.calls.Load() != ran+1 {
					t.Fatalf("status %d (handler calls %d→%d), want 200 and one call", r.status, ran, h.calls.Load())
				}
				if p := h.principal.Load(); p.Name != "default" || p.Transport != auth.TransportHTTP || !p.Scopes.IsFull() || p.RemoteAddr == "" {
					t.Errorf("principal %+v", *p)
				}
				if h.sawAuthHdr.Load() {
					t.Error("the Authorization header reached the MCP handler")
				}
			}},
		{method: "GET", path: "/connection.json",
			check: func(t *testing.T, v variant, r response, _ int32) {
				if !v.good {
					want401(t, r, v)
					return
				}
				if r.status != 200 || !strings.Contains(string(r.body), "Bearer "+h.token) || r.header.Get("Cache-Control") != "no-store" {
					t.Fatalf("status %d, Cache-Control %q", r.status, r.header.Get("Cache-Control"))
				}
			}},
		{method: "GET", path: "/.well-known/oauth-protected-resource", check: checkPRM(h)},
		{method: "GET", path: "/.well-known/oauth-protected-resource/mcp", check: checkPRM(h)},
		{method: "GET", path: "/.well-known/oauth-authorization-server",
			check: func(t *testing.T, _ variant, r response, _ int32) {
				m := r.json(t)
				if r.status != 200 || m["issuer"] != h.base || m["registration_endpoint"] != h.base+"/oauth/register" {
					t.Fatalf("status %d, metadata %v", r.status, m)
				}
			}},
		{method: "GET", path: "/.well-known/registry-card",
			check: func(t *testing.T, _ variant, r response, _ int32) {
				m := r.json(t)
				a, _ := m["auth"].(map[string]any)
				if r.status != 200 || m["endpoint"] != h.base+"/mcp" || m["transport"] != "streamable-http" || m["name"] != "rigout" || a["type"] != "oauth2" {
					t.Fatalf("status %d, card %v", r.status, m)
				}
				if strings.Contains(string(r.body), h.token) {
					t.Fatal("registry card holds the token")
				}
			}},
		{method: "GET", path: "/oauth/authorize",
			check: func(t *testing.T, _ variant, r response, _ int32) {
				// No parameters: an unknown client is shown an error, never redirected.
				if m := r.json(t); r.status != 400 || m["error"] != "invalid_client" || r.header.Get("Location") != "" {
					t.Fatalf("status %d, body %v", r.status, m)
				}
			}},
		{method: "POST", path: "/oauth/token", body: "grant_type=authorization_code", ctype: "application/x-www-form-urlencoded",
			check: func(t *testing.T, v variant, r response, _ int32) {
				m := r.json(t)
				if v.query != "" { // parameters in the URL are refused outright
					if r.status != 400 || m["error"] != "invalid_request" {
						t.Fatalf("status %d, body %v", r.status, m)
					}
					return
				}
				// A bearer header is no client authentication; neither is nothing.
				if r.status != 401 || m["error"] != "invalid_client" || r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
					t.Fatalf("status %d, headers %v, body %v", r.status, r.header, m)
				}
			}},
		{method: "POST", path: "/oauth/register", body: `{}`, ctype: "application/json",
			check: func(t *testing.T, _ variant, r response, _ int32) {
				if m := r.json(t); r.status != 400 || m["error"] != "invalid_redirect_uri" {
					t.Fatalf("status %d, body %v", r.status, m)
				}
			}},
	}
	for _, rt := range routes {
		for _, v := range variants {
			t.Run(rt.path+"/"+v.name, func(t *testing.T) {
				path := rt.path
				if v.query != "" {
					path += "?" + v.query
				}
				var body *strings.Reader
				if rt.body != "" {
					body = strings.NewReader(rt.body)
				} else {
					body = strings.NewReader("")
				}
				req := h.newRequest(rt.method, path, body, v.hdr...)
				if rt.ctype != "" {
					req.Header.Set("Content-Type", rt.ctype)
				}
				ran := h.calls.Load()
				rt.check(t, v, h.do(req), ran)
			})
		}
	}
	// Every route of Routes() is covered by the matrix.
	covered := map[string]bool{}
	for _, rt := range routes {
		covered[rt.path] = true
	}
	for p := range h.front.Routes() {
		if !covered[p] {
			t.Errorf("route %s is not in the matrix", p)
		}
	}
}

func checkPRM(h *harness) func(t *testing.T, _ variant, r response, _ int32) {
	return func(t *testing.T, _ variant, r response, _ int32) {
		t.Helper()
		m := r.json(t)
		as, _ := m["authorization_servers"].([]any)
		bm, _ := m["bearer_methods_supported"].([]any)
		if r.status != 200 || m["resource"] != h.base+"/mcp" || len(as) != 1 || as[0] != h.base || len(bm) != 1 || bm[0] != "header" {
			t.Fatalf("status %d, metadata %v", r.status, m)
		}
	}
}

// variant is one way of presenting a credential.
type variant struct {
	name  string
	hdr   []string
	query string
	sent  bool // a credential was sent: error="invalid_token"
	good  bool
}

func TestMethodsNotAllowed(t *testing.T) {
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		c.OAuth = &auth.OAuthConfig{InsecureAutoApprove: true, Clients: []auth.Client{{ID: "app", RedirectURIs: []string{"http://127.0.0.1/cb"}}}}
	})
	tests := []struct {
		method, path, allow string
	}{
		{"POST", "/.well-known/oauth-protected-resource", "GET, HEAD"},
		{"DELETE", "/.well-known/oauth-authorization-server", "GET, HEAD"},
		{"PUT", "/.well-known/registry-card", "GET, HEAD"},
		{"POST", "/connection.json", "GET, HEAD"},
		{"GET", "/oauth/token", "POST"},
		{"POST", "/oauth/authorize", "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := h.do(h.newRequest(tt.method, tt.path, nil))
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != tt.allow {
				t.Fatalf("status %d Allow %q, want 405 %q", r.status, r.header.Get("Allow"), tt.allow)
			}
		})
	}
	if r := h.get("/oauth/register"); r.status != http.StatusNotFound {
		t.Errorf("registration is off, /oauth/register answered %d", r.status)
	}
}
