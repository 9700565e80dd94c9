package auth_test

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/rigout/rigout/auth"
)

func validConfig(tok string) auth.Config {
	return auth.Config{
		Tokens:      []auth.Token{{Name: "default", Secret: auth.NewSecret(tok), Scopes: auth.FullScopes()}},
		Listener:    "127.0.0.1:8765",
		ResourceURL: "http://127.0.0.1:8765/mcp",
		Logger:      testLogger(),
	}
}

func TestNewRefusesUnsafeConfig(t *testing.T) {
	tok := newToken(t)
	client := auth.Client{ID: "c", RedirectURIs: []string{"https://app.example.com/cb"}}
	tests := []struct {
		name    string
		mutate  func(c *auth.Config)
		wantIs  error
		wantMsg string
	}{
		{"no credentials", func(c *auth.Config) { c.Tokens = nil }, auth.ErrNoCredentials, ""},
		{"no listener", func(c *auth.Config) { c.Listener = "" }, nil, "Listener"},
		{"bad listener", func(c *auth.Config) { c.Listener = "localhost" }, nil, "Listener"},
		{"no resource", func(c *auth.Config) { c.ResourceURL = "" }, nil, "ResourceURL"},
		{"resource with query", func(c *auth.Config) { c.ResourceURL = "http://127.0.0.1:8765/mcp?x=1" }, nil, "ResourceURL"},
		{"resource with fragment", func(c *auth.Config) { c.ResourceURL = "http://127.0.0.1:8765/mcp#x" }, nil, "ResourceURL"},
		{"resource relative", func(c *auth.Config) { c.ResourceURL = "/mcp" }, nil, "ResourceURL"},
		{"resource odd path", func(c *auth.Config) { c.ResourceURL = "http://127.0.0.1:8765/{mcp}" }, nil, "ResourceURL"},
		{"resource path clashes with a route", func(c *auth.Config) { c.ResourceURL = "http://127.0.0.1:8765/.well-known/registry-card" }, nil, "ResourceURL"},
		{"no-auth off loopback", func(c *auth.Config) { c.Tokens = nil; c.InsecureNoAuth = true; c.Listener = "0.0.0.0:8765" }, auth.ErrNoAuthNotLoopback, ""},
		{"no-auth on empty host", func(c *auth.Config) { c.Tokens = nil; c.InsecureNoAuth = true; c.Listener = ":8765" }, auth.ErrNoAuthNotLoopback, ""},
		{"no-auth with tokens", func(c *auth.Config) { c.InsecureNoAuth = true }, nil, "InsecureNoAuth"},
		{"token without name", func(c *auth.Config) { c.Tokens[0].Name = "" }, nil, "Tokens[0].Name"},
		{"reserved name", func(c *auth.Config) { c.Tokens[0].Name = "oauth:x" }, nil, "reserved"},
		{"duplicate name", func(c *auth.Config) { c.Tokens = append(c.Tokens, c.Tokens[0]) }, nil, "duplicate"},
		{"secret and digest", func(c *auth.Config) { c.Tokens[0].Digest = auth.DigestOf("x") }, nil, "exactly one"},
		{"neither secret nor digest", func(c *auth.Config) { c.Tokens[0].Secret = auth.Secret{} }, nil, "exactly one"},
		{"short token", func(c *auth.Config) { c.Tokens[0].Secret = auth.NewSecret("s3cr3t-token") }, nil, "too short: 12 bytes"},
		{"bad glob", func(c *auth.Config) { c.Tokens[0].Scopes.Tools = []string{"a b"} }, nil, "Scopes"},
		{"relative root", func(c *auth.Config) { c.Tokens[0].Scopes.Roots = []string{"srv"} }, nil, "Scopes"},
		{"star origin", func(c *auth.Config) { c.AllowedOrigins = []string{"*"} }, nil, "AllowedOrigins"},
		{"null origin", func(c *auth.Config) { c.AllowedOrigins = []string{"null"} }, nil, "AllowedOrigins"},
		{"origin with path", func(c *auth.Config) { c.AllowedOrigins = []string{"https://a.example/x"} }, nil, "AllowedOrigins"},
		{"bad host", func(c *auth.Config) { c.AllowedHosts = []string{"*"} }, nil, "AllowedHosts"},
		{"setup token without data", func(c *auth.Config) { c.SetupToken = auth.NewSecret("s") }, nil, "SetupToken"},
		{"oauth without approval mode", func(c *auth.Config) { c.OAuth = &auth.OAuthConfig{Clients: []auth.Client{client}} }, nil, "Consent"},
		{"oauth with both modes", func(c *auth.Config) {
			c.OAuth = &auth.OAuthConfig{Consent: true, InsecureAutoApprove: true, Clients: []auth.Client{client}}
		}, nil, "Consent"},
		{"registration without consent", func(c *auth.Config) {
			c.OAuth = &auth.OAuthConfig{InsecureAutoApprove: true, AllowRegistration: true}
		}, nil, "AllowRegistration"},
		{"consent without operator token", func(c *auth.Config) {
			c.Tokens[0].Scopes = auth.Scopes{Tools: []string{"*"}}
			c.OAuth = &auth.OAuthConfig{Consent: true, Clients: []auth.Client{client}}
		}, nil, "operator"},
		{"oauth over http off loopback", func(c *auth.Config) {
			c.ResourceURL = "http://rigout.example.com/mcp"
			c.OAuth = &auth.OAuthConfig{Consent: true, Clients: []auth.Client{client}}
		}, nil, "https"},
		{"oauth without clients", func(c *auth.Config) { c.OAuth = &auth.OAuthConfig{Consent: true} }, nil, "Clients"},
		{"http redirect off loopback", func(c *auth.Config) {
			c.OAuth = &auth.OAuthConfig{Consent: true, Clients: []auth.Client{{ID: "c", RedirectURIs: []string{"http://app.example.com/cb"}}}}
		}, nil, "RedirectURIs"},
		{"custom scheme redirect", func(c *auth.Config) {
			c.OAuth = &auth.OAuthConfig{Consent: true, Clients: []auth.Client{{ID: "c", RedirectURIs: []string{"myapp:/cb"}}}}
		}, nil, "RedirectURIs"},
		{"client without redirect", func(c *auth.Config) {
			c.OAuth = &auth.OAuthConfig{Consent: true, Clients: []auth.Client{{ID: "c"}}}
		}, nil, "RedirectURIs"},
		{"duplicate client", func(c *auth.Config) {
			c.OAuth = &auth.OAuthConfig{Consent: true, Clients: []auth.Client{client, client}}
		}, nil, "duplicate"},
		{"long code TTL", func(c *auth.Config) {
			c.OAuth = &auth.OAuthConfig{Consent: true, Clients: []auth.Client{client}, CodeTTL: 11 * 60e9}
		}, nil, "CodeTTL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig(tok)
			tt.mutate(&cfg)
			f, err := auth.New(cfg)
			recordErr(err)
			if err == nil || f != nil {
				t.Fatal("accepted")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v, want %v", err, tt.wantIs)
			}
			if tt.wantMsg != "" {
				var ce *auth.ConfigError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("error %v, want a ConfigError mentioning %q", err, tt.wantMsg)
				}
			}
		})
	}
}

func TestNewAcceptsDigestAndNoAuth(t *testing.T) {
	tok := newToken(t)
	cfg := validConfig(tok)
	cfg.Tokens[0].Secret, cfg.Tokens[0].Digest = auth.Secret{}, auth.DigestOf(tok)
	f, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	req, _ := http.NewRequest(http.MethodGet, "/mcp", nil)
	req.RemoteAddr = "127.0.0.1:1"
	req.Header.Set("Authorization", "Bearer "+tok)
	f.RequireBearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })).ServeHTTP(rec, req)
	if rec.Code != 204 {
		t.Fatalf("digest token: %d", rec.Code)
	}

	for _, l := range []string{"127.0.0.1:8765", "[::1]:8765", "localhost:8765", "127.9.9.9:0"} {
		f, err := auth.New(auth.Config{InsecureNoAuth: true, Listener: l, ResourceURL: "http://127.0.0.1:8765/mcp"})
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		var p auth.Principal
		rec := newRecorder()
		f.RequireBearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p, _ = auth.FromContext(r.Context()) })).ServeHTTP(rec, req)
		if p.Name != "anonymous" || !p.Scopes.IsFull() {
			t.Errorf("%s: principal %+v", l, p)
		}
	}
}

// TestConfigNotMutated: New copies the Config; later changes by the caller
// do not reach the Front.
func TestConfigNotMutated(t *testing.T) {
	tok := newToken(t)
	cfg := validConfig(tok)
	cfg.AllowedOrigins = []string{"https://a.example"}
	cfg.Tokens[0].Scopes = auth.Scopes{Tools: []string{"read_*"}, Hosts: []string{"*"}}
	snapshot := validConfig(tok)
	snapshot.AllowedOrigins = []string{"https://a.example"}
	snapshot.Tokens[0].Scopes = auth.Scopes{Tools: []string{"read_*"}, Hosts: []string{"*"}}
	snapshot.Logger = cfg.Logger
	f, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Tokens, snapshot.Tokens) || !reflect.DeepEqual(cfg.AllowedOrigins, snapshot.AllowedOrigins) ||
		cfg.Now != nil || cfg.Rand != nil || cfg.Name != "" {
		t.Fatal("New modified the caller's Config")
	}
	cfg.Tokens[0].Scopes.Tools[0] = "*" // the caller changes its slice afterwards
	var p auth.Principal
	req, _ := http.NewRequest(http.MethodGet, "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	f.RequireBearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p, _ = auth.FromContext(r.Context()) })).ServeHTTP(newRecorder(), req)
	if p.Scopes.AllowTool("execute_command") {
		t.Error("the caller's later change widened the token's scopes")
	}
	p.Scopes.Tools[0] = "*" // a consumer changes the principal's slice
	f.RequireBearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p, _ = auth.FromContext(r.Context()) })).ServeHTTP(newRecorder(), req)
	if p.Scopes.AllowTool("execute_command") {
		t.Error("a consumer's change widened the token's scopes")
	}
}

// TestTwoFronts: two Fronts with different configs in one process do not
// share tokens, revocations, throttles or setup tokens.
func TestTwoFronts(t *testing.T) {
	a := newHarness(t, func(_ *harness, c *auth.Config) { c.Throttle.Failures = 1 })
	b := newHarness(t, nil)
	if s := a.mcpStatus(b.token); s != 401 {
		t.Fatalf("B's token works on A: %d", s)
	}
	if s := a.mcpStatus(b.token); s != 429 {
		t.Fatalf("A should now throttle this address: %d", s)
	}
	if s := b.mcpStatus(a.token); s != 401 {
		t.Fatalf("A's token on B, from the address A throttles: %d, want 401", s)
	}
	if s := b.mcpStatus(b.token); s != 200 {
		t.Fatalf("A's throttle reached B: %d", s)
	}
	a.front.RevokeToken("default")
	if s := b.mcpStatus(b.token); s != 200 {
		t.Fatalf("A's revocation reached B: %d", s)
	}
}
