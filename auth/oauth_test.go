package auth_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/auth"
)

// pkce is a verifier and its S256 challenge.
type pkce struct{ verifier, challenge string }

func newPKCE(t testing.TB) pkce {
	v := newToken(t) // 43 base64url characters: a valid verifier
	sum := sha256.Sum256([]byte(v))
	return pkce{verifier: v, challenge: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// oauthHarness: a server with an auto-approving authorization server, a
// public client with a loopback redirect and a confidential client.
func oauthHarness(t *testing.T, st storeKind, mutate func(h *harness, c *auth.Config)) (*harness, string) {
	secret := newToken(t)
	h := newHarness(t, func(h *harness, c *auth.Config) {
		c.OAuth = &auth.OAuthConfig{
			InsecureAutoApprove: true,
			Clients: []auth.Client{
				{ID: "cli", RedirectURIs: []string{"http://127.0.0.1/callback"}, Scopes: auth.Scopes{Tools: []string{"read_*"}, Hosts: []string{"*"}, ReadOnly: true}},
				{ID: "web", Name: "Web App", Secret: auth.NewSecret(secret), RedirectURIs: []string{"https://app.example.com/oauth/cb"}, Scopes: auth.FullScopes()},
			},
			Store: st.open(t),
		}
		if mutate != nil {
			mutate(h, c)
		}
	})
	return h, secret
}

// authorize runs the authorization request and returns the redirect.
func (h *harness) authorize(params url.Values) (response, *url.URL) {
	h.t.Helper()
	r := h.get("/oauth/authorize?" + params.Encode())
	if r.status != http.StatusFound && r.status != http.StatusSeeOther {
		return r, nil
	}
	loc, err := url.Parse(r.header.Get("Location"))
	if err != nil {
		h.t.Fatal(err)
	}
	if c := loc.Query().Get("code"); c != "" {
		leaks.secret(c)
	}
	return r, loc
}

func authzParams(client, redirect string, p pkce) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {client},
		"redirect_uri":          {redirect},
		"code_challenge":        {p.challenge},
		"code_challenge_method": {"S256"},
		"state":                 {"xyz-state"},
	}
}

// tokenReply decodes a token endpoint answer and registers its tokens.
type tokenReply struct {
	status int
	Error  string `json:"error"`
	Access string `json:"access_token"`
	Type   string `json:"token_type"`
	Expiry int64  `json:"expires_in"`
	Fresh  string `json:"refresh_token"`
	Scope  string `json:"scope"`
	header http.Header
}

func (h *harness) tokenCall(form url.Values, hdr ...string) tokenReply {
	h.t.Helper()
	r := h.postForm("/oauth/token", form, hdr...)
	var tr tokenReply
	if err := json.Unmarshal(r.body, &tr); err != nil {
		h.t.Fatalf("token endpoint: %d %q", r.status, r.body)
	}
	tr.status, tr.header = r.status, r.header
	leaks.secret(tr.Access)
	leaks.secret(tr.Fresh)
	if r.status == 200 && (r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache") {
		h.t.Errorf("token response cache headers %v", r.header)
	}
	return tr
}

// mcpStatus calls the protected endpoint with a token.
func (h *harness) mcpStatus(tok string) int {
	h.t.Helper()
	return h.do(h.newRequest(http.MethodPost, "/mcp", strings.NewReader("{}"), "Authorization", "Bearer "+tok)).status
}

func TestOAuthMetadata(t *testing.T) { testOAuthMetadata(t, memoryStore) }

func testOAuthMetadata(t *testing.T, st storeKind) {
	h, _ := oauthHarness(t, st, nil)
	m := h.get("/.well-known/oauth-authorization-server").json(t)
	want := map[string]any{
		"issuer":                 h.base,
		"authorization_endpoint": h.base + "/oauth/authorize",
		"token_endpoint":         h.base + "/oauth/token",
		"authorization_response_iss_parameter_supported": true,
		"code_challenge_methods_supported":               []any{"S256"},
		"response_types_supported":                       []any{"code"},
		"grant_types_supported":                          []any{"authorization_code", "refresh_token"},
	}
	for k, v := range want {
		got, _ := json.Marshal(m[k])
		exp, _ := json.Marshal(v)
		if string(got) != string(exp) {
			t.Errorf("%s = %s, want %s", k, got, exp)
		}
	}
	if _, ok := m["registration_endpoint"]; ok {
		t.Error("registration_endpoint advertised with registration off")
	}
	prm := h.get("/.well-known/oauth-protected-resource/mcp").json(t)
	if prm["resource"] != h.base+"/mcp" || strings.HasSuffix(prm["resource"].(string), "/") {
		t.Errorf("PRM resource %v", prm["resource"])
	}
}

func TestOAuthCodeFlow(t *testing.T) { testOAuthCodeFlow(t, memoryStore) }

func testOAuthCodeFlow(t *testing.T, st storeKind) {
	h, _ := oauthHarness(t, st, nil)
	p := newPKCE(t)
	redirect := "http://127.0.0.1:49152/callback" // any port on a loopback redirect
	params := authzParams("cli", redirect, p)
	params.Set("resource", h.base+"/mcp")
	_, loc := h.authorize(params)
	if loc == nil {
		t.Fatal("no redirect")
	}
	q := loc.Query()
	if loc.Host != "127.0.0.1:49152" || loc.Path != "/callback" || q.Get("state") != "xyz-state" || q.Get("iss") != h.base || len(q.Get("code")) != 43 {
		t.Fatalf("redirect %s", loc)
	}
	code := q.Get("code")
	tr := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"code_verifier": {p.verifier}, "client_id": {"cli"}, "resource": {h.base + "/mcp"}})
	if tr.status != 200 || tr.Type != "Bearer" || tr.Expiry != 3600 || tr.Access == "" || tr.Fresh == "" || tr.Access == h.token {
		t.Fatalf("token: %+v", tr)
	}
	if tr.Scope != "tools:read_* hosts:* read_only" {
		t.Errorf("scope %q", tr.Scope)
	}
	if s := h.mcpStatus(tr.Access); s != 200 {
		t.Fatalf("MCP with the access token: %d", s)
	}
	pr := h.principal.Load()
	if !h.front.Valid(*pr) {
		t.Error("Valid reports a live grant as dead")
	}
	if pr.Name != "oauth:cli/"+pr.GrantID || pr.ClientID != "cli" || pr.GrantID == "" || !pr.Scopes.ReadOnly || pr.Scopes.AllowTool("exec") || !pr.Scopes.AllowTool("read_file") {
		t.Fatalf("principal %+v", *pr)
	}
	// Opaque per-grant tokens: a second grant gets different tokens.
	p2 := newPKCE(t)
	_, loc2 := h.authorize(authzParams("cli", redirect, p2))
	tr2 := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {loc2.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {p2.verifier}, "client_id": {"cli"}})
	if tr2.status != 200 || tr2.Access == tr.Access {
		t.Fatalf("second grant: %+v", tr2)
	}

	t.Run("code reuse fails and revokes the first grant", func(t *testing.T) {
		tr3 := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}, "client_id": {"cli"}})
		if tr3.status != 400 || tr3.Error != "invalid_grant" {
			t.Fatalf("reuse: %+v", tr3)
		}
		if s := h.mcpStatus(tr.Access); s != 401 {
			t.Errorf("access token of the reused code still works: %d", s)
		}
		if r := h.tokenCall(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tr.Fresh}, "client_id": {"cli"}}); r.Error != "invalid_grant" {
			t.Errorf("refresh token of the reused code still works: %+v", r)
		}
		if s := h.mcpStatus(tr2.Access); s != 200 {
			t.Errorf("an unrelated grant was revoked: %d", s)
		}
		if !slices.Contains(h.eventTypes(), auth.EventRevoke) {
			t.Error("no oauth.revoke event")
		}
		if h.front.Valid(*pr) {
			t.Error("Valid reports a revoked grant as live")
		}
	})

	t.Run("access token expires", func(t *testing.T) {
		h.clock.Advance(time.Hour)
		if s := h.mcpStatus(tr2.Access); s != 401 {
			t.Errorf("expired access token: %d", s)
		}
	})
}

func TestOAuthCodeExchangeFailures(t *testing.T) { testOAuthCodeExchangeFailures(t, memoryStore) }

func testOAuthCodeExchangeFailures(t *testing.T, st storeKind) {
	h, secret := oauthHarness(t, st, func(_ *harness, c *auth.Config) { c.Throttle.Failures = 1000 })
	redirect := "http://127.0.0.1:50000/callback"
	start := func(t *testing.T) (pkce, string) {
		p := newPKCE(t)
		_, loc := h.authorize(authzParams("cli", redirect, p))
		if loc == nil || loc.Query().Get("code") == "" {
			t.Fatal("no code")
		}
		return p, loc.Query().Get("code")
	}
	exchange := func(code, verifier, redir string, extra ...string) tokenReply {
		f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redir}, "code_verifier": {verifier}, "client_id": {"cli"}}
		for i := 0; i+1 < len(extra); i += 2 {
			f.Set(extra[i], extra[i+1])
		}
		return h.tokenCall(f)
	}
	tests := []struct {
		name    string
		run     func(t *testing.T, p pkce, code string) tokenReply
		wantErr string
	}{
		{"wrong verifier", func(t *testing.T, _ pkce, code string) tokenReply {
			return exchange(code, newPKCE(t).verifier, redirect)
		}, "invalid_grant"},
		{"short verifier", func(t *testing.T, p pkce, code string) tokenReply {
			return exchange(code, p.verifier[:42], redirect)
		}, "invalid_grant"},
		{"challenge as verifier", func(t *testing.T, p pkce, code string) tokenReply {
			return exchange(code, p.challenge, redirect)
		}, "invalid_grant"},
		{"wrong redirect", func(t *testing.T, p pkce, code string) tokenReply {
			return exchange(code, p.verifier, "http://127.0.0.1:50001/callback")
		}, "invalid_grant"},
		{"wrong resource", func(t *testing.T, p pkce, code string) tokenReply {
			return exchange(code, p.verifier, redirect, "resource", "https://other.example/mcp")
		}, "invalid_target"},
		{"other client", func(t *testing.T, p pkce, code string) tokenReply {
			return h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}},
				"Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("web:"+secret)))
		}, "invalid_grant"},
		{"expired code", func(t *testing.T, p pkce, code string) tokenReply {
			h.clock.Advance(61 * time.Second)
			return exchange(code, p.verifier, redirect)
		}, "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, code := start(t)
			if r := tt.run(t, p, code); r.status != 400 || r.Error != tt.wantErr {
				t.Fatalf("got %d %q, want 400 %q", r.status, r.Error, tt.wantErr)
			}
			// The failed exchange spent the code: the right request fails too.
			if r := exchange(code, p.verifier, redirect); r.status != 400 || r.Error != "invalid_grant" {
				t.Fatalf("code usable after a failed exchange: %+v", r)
			}
		})
	}
}

func TestOAuthAuthorizeErrors(t *testing.T) { testOAuthAuthorizeErrors(t, memoryStore) }

func testOAuthAuthorizeErrors(t *testing.T, st storeKind) {
	h, _ := oauthHarness(t, st, nil)
	good := "http://127.0.0.1:40000/callback"
	tests := []struct {
		name     string
		mutate   func(v url.Values)
		redirect bool   // error goes back to the client (else shown, 400)
		wantErr  string // OAuth error code
	}{
		{"unknown client", func(v url.Values) { v.Set("client_id", "nobody") }, false, "invalid_client"},
		{"wrong redirect", func(v url.Values) { v.Set("redirect_uri", "https://evil.example/callback") }, false, "invalid_request"},
		{"redirect other path", func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:40000/other") }, false, "invalid_request"},
		{"redirect localhost for 127.0.0.1", func(v url.Values) { v.Set("redirect_uri", "http://localhost:40000/callback") }, false, "invalid_request"},
		{"redirect https loopback", func(v url.Values) { v.Set("redirect_uri", "https://127.0.0.1:40000/callback") }, false, "invalid_request"},
		{"redirect with fragment", func(v url.Values) { v.Set("redirect_uri", good+"#x") }, false, "invalid_request"},
		{"missing redirect", func(v url.Values) { v.Del("redirect_uri") }, false, "invalid_request"},
		{"repeated client_id", func(v url.Values) { v.Add("client_id", "cli") }, false, "invalid_request"},
		{"plain PKCE", func(v url.Values) { v.Set("code_challenge_method", "plain") }, true, "invalid_request"},
		{"missing method", func(v url.Values) { v.Del("code_challenge_method") }, true, "invalid_request"},
		{"missing PKCE", func(v url.Values) { v.Del("code_challenge"); v.Del("code_challenge_method") }, true, "invalid_request"},
		{"bad challenge", func(v url.Values) { v.Set("code_challenge", "short") }, true, "invalid_request"},
		{"token response type", func(v url.Values) { v.Set("response_type", "token") }, true, "unsupported_response_type"},
		{"wrong resource", func(v url.Values) { v.Set("resource", "https://other.example/mcp") }, true, "invalid_target"},
		{"resource with fragment", func(v url.Values) { v.Set("resource", "http://x/mcp#f") }, true, "invalid_target"},
		{"two resources", func(v url.Values) { v["resource"] = []string{"a", "b"} }, true, "invalid_target"},
		{"repeated state", func(v url.Values) { v.Add("state", "again") }, true, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := authzParams("cli", good, newPKCE(t))
			tt.mutate(v)
			r, loc := h.authorize(v)
			if !tt.redirect {
				if r.status != 400 || loc != nil || r.json(t)["error"] != tt.wantErr {
					t.Fatalf("got %d %s, want 400 %s shown, not redirected", r.status, r.body, tt.wantErr)
				}
				return
			}
			if loc == nil {
				t.Fatalf("got %d %s, want a redirect", r.status, r.body)
			}
			q := loc.Query()
			if q.Get("error") != tt.wantErr || q.Get("code") != "" || q.Get("iss") != h.base || loc.Host != "127.0.0.1:40000" {
				t.Fatalf("redirect %s, want error %s with iss", loc, tt.wantErr)
			}
		})
	}
	t.Run("resource with trailing slash or default port is canonical", func(t *testing.T) {
		v := authzParams("cli", good, newPKCE(t))
		v.Set("resource", strings.ToUpper("http://")+h.addr+"/mcp/")
		if _, loc := h.authorize(v); loc == nil || loc.Query().Get("code") == "" {
			t.Fatalf("canonical resource refused: %v", loc)
		}
	})
}

func TestOAuthRefreshRotation(t *testing.T) { testOAuthRefreshRotation(t, memoryStore) }

func testOAuthRefreshRotation(t *testing.T, st storeKind) {
	h, secret := oauthHarness(t, st, nil)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("web:"+secret))
	redirect := "https://app.example.com/oauth/cb"
	p := newPKCE(t)
	_, loc := h.authorize(authzParams("web", redirect, p))
	first := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}}, "Authorization", basic)
	if first.status != 200 {
		t.Fatalf("exchange: %+v", first)
	}
	refresh := func(rt string, hdr ...string) tokenReply {
		return h.tokenCall(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, hdr...)
	}
	second := refresh(first.Fresh, "Authorization", basic)
	if second.status != 200 || second.Fresh == first.Fresh || second.Access == first.Access {
		t.Fatalf("rotation: %+v", second)
	}
	// client_secret_post works as well.
	third := h.tokenCall(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second.Fresh}, "client_id": {"web"}, "client_secret": {secret}})
	if third.status != 200 {
		t.Fatalf("client_secret_post: %+v", third)
	}
	if h.mcpStatus(third.Access) != 200 || h.mcpStatus(second.Access) != 200 {
		t.Fatal("live access tokens refused")
	}
	// Reusing a rotated refresh token revokes the family.
	if r := refresh(first.Fresh, "Authorization", basic); r.status != 400 || r.Error != "invalid_grant" {
		t.Fatalf("reuse: %+v", r)
	}
	for i, tok := range []string{first.Access, second.Access, third.Access} {
		if s := h.mcpStatus(tok); s != 401 {
			t.Errorf("access token %d works after refresh reuse: %d", i, s)
		}
	}
	if r := refresh(third.Fresh, "Authorization", basic); r.Error != "invalid_grant" {
		t.Errorf("newest refresh token works after reuse: %+v", r)
	}

	t.Run("client authentication", func(t *testing.T) {
		for name, hdr := range map[string][]string{
			"wrong secret":  {"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("web:"+newToken(t)))},
			"no secret":     nil,
			"bearer scheme": {"Authorization", "Bearer " + secret},
		} {
			f := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}
			if hdr == nil {
				f.Set("client_id", "web")
			}
			r := h.tokenCall(f, hdr...)
			if r.status != 401 || r.Error != "invalid_client" {
				t.Errorf("%s: %+v", name, r)
			}
			if name == "wrong secret" && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
				t.Errorf("%s: WWW-Authenticate %q", name, r.header.Get("WWW-Authenticate"))
			}
		}
		if r := h.tokenCall(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {"cli"}, "client_secret": {"s"}}); r.status != 401 {
			t.Errorf("public client with a secret: %+v", r)
		}
		if r := h.tokenCall(url.Values{"grant_type": {"password"}, "client_id": {"cli"}}); r.Error != "unsupported_grant_type" {
			t.Errorf("password grant: %+v", r)
		}
	})

	t.Run("refresh token expires", func(t *testing.T) {
		p := newPKCE(t)
		_, loc := h.authorize(authzParams("web", redirect, p))
		tr := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}}, "Authorization", basic)
		h.clock.Advance(auth.DefaultRefreshTTL)
		if r := refresh(tr.Fresh, "Authorization", basic); r.Error != "invalid_grant" {
			t.Errorf("expired refresh token: %+v", r)
		}
	})
}

func TestOAuthConsent(t *testing.T) { testOAuthConsent(t, memoryStore) }

func testOAuthConsent(t *testing.T, st storeKind) {
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		c.OAuth = &auth.OAuthConfig{
			Consent: true,
			Clients: []auth.Client{{ID: "cli", Name: "Claude <Code>", RedirectURIs: []string{"http://127.0.0.1/callback"}, Scopes: auth.FullScopes()}},
			Store:   st.open(t),
		}
	})
	redirect := "http://127.0.0.1:41000/callback"
	consentID := regexp.MustCompile(`name="consent" value="([^"]+)"`)
	page := func(t *testing.T) (response, string) {
		r := h.get("/oauth/authorize?" + authzParams("cli", redirect, newPKCE(t)).Encode())
		if r.status != 200 {
			t.Fatalf("consent page: %d %s", r.status, r.body)
		}
		m := consentID.FindSubmatch(r.body)
		if m == nil {
			t.Fatalf("no consent id in %s", r.body)
		}
		leaks.secret(string(m[1]))
		return r, string(m[1])
	}
	decide := func(id, decision, tok string) response {
		_, port, _ := strings.Cut(h.addr, ":")
		return h.postForm("/oauth/authorize", url.Values{"consent": {id}, "decision": {decision}, "operator_token": {tok}},
			"Origin", "http://127.0.0.1:"+port) // a browser form post carries our own origin
	}

	r, id := page(t)
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'none'") || r.header.Get("X-Frame-Options") != "DENY" || r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("consent headers: %v", r.header)
	}
	body := string(r.body)
	if !strings.Contains(body, "127.0.0.1:41000") || !strings.Contains(body, "Claude &lt;Code&gt;") || strings.Contains(body, "<Code>") {
		t.Errorf("consent page does not show the redirect host or does not escape: %s", body)
	}

	t.Run("wrong operator token", func(t *testing.T) {
		r := decide(id, "approve", newToken(t))
		if r.status != http.StatusForbidden || r.header.Get("Location") != "" || !strings.Contains(string(r.body), "not accepted") {
			t.Fatalf("%d %s", r.status, r.body)
		}
		// The consent id was spent; the page carries a new one.
		if r := decide(id, "approve", h.token); r.status != 400 {
			t.Fatalf("spent consent id: %d", r.status)
		}
		id = string(consentID.FindSubmatch(r.body)[1])
		leaks.secret(id)
	})
	t.Run("approve", func(t *testing.T) {
		r := decide(id, "approve", h.token)
		loc, _ := url.Parse(r.header.Get("Location"))
		if r.status != http.StatusSeeOther || loc.Query().Get("code") == "" || loc.Query().Get("iss") != h.base || loc.Query().Get("state") != "xyz-state" {
			t.Fatalf("%d %s", r.status, r.header.Get("Location"))
		}
		leaks.secret(loc.Query().Get("code"))
		if r := decide(id, "approve", h.token); r.status != 400 {
			t.Fatalf("consent id reused: %d", r.status)
		}
	})
	t.Run("deny", func(t *testing.T) {
		_, id := page(t)
		r := decide(id, "deny", "")
		loc, _ := url.Parse(r.header.Get("Location"))
		if r.status != http.StatusSeeOther || loc.Query().Get("error") != "access_denied" || loc.Query().Get("code") != "" {
			t.Fatalf("%d %s", r.status, r.header.Get("Location"))
		}
	})
	t.Run("expired", func(t *testing.T) {
		_, id := page(t)
		h.clock.Advance(11 * time.Minute)
		if r := decide(id, "approve", h.token); r.status != 400 {
			t.Fatalf("expired consent: %d", r.status)
		}
	})
	t.Run("cross-origin post", func(t *testing.T) {
		_, id := page(t)
		r := h.postForm("/oauth/authorize", url.Values{"consent": {id}, "decision": {"approve"}, "operator_token": {h.token}}, "Origin", "https://evil.example")
		if r.status != http.StatusForbidden || r.header.Get("Location") != "" {
			t.Fatalf("%d", r.status)
		}
	})
}

func TestOAuthDynamicRegistration(t *testing.T) { testOAuthDynamicRegistration(t, memoryStore) }

func testOAuthDynamicRegistration(t *testing.T, st storeKind) {
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		c.OAuth = &auth.OAuthConfig{Consent: true, AllowRegistration: true, MaxRegisteredClients: 2,
			RegistrationScopes: auth.Scopes{Tools: []string{"search_files"}, Hosts: []string{"local"}}, Store: st.open(t)}
	})
	register := func(body string) response {
		req := h.newRequest(http.MethodPost, "/oauth/register", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return h.do(req)
	}
	r := register(`{"redirect_uris":["http://localhost:33418/callback"],"client_name":"Claude Code","token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"scope":"ignored"}`)
	m := r.json(t)
	if r.status != http.StatusCreated || m["client_id"] == "" || m["client_secret"] != nil || m["token_endpoint_auth_method"] != "none" {
		t.Fatalf("register public: %d %v", r.status, m)
	}
	r = register(`{"redirect_uris":["https://app.example.com/cb"]}`)
	m2 := r.json(t)
	sec, _ := m2["client_secret"].(string)
	leaks.secret(sec)
	if r.status != http.StatusCreated || len(sec) != 43 || m2["token_endpoint_auth_method"] != "client_secret_basic" {
		t.Fatalf("register confidential: %d %v", r.status, m2)
	}
	for _, bad := range []string{
		`{"redirect_uris":["http://evil.example/cb"]}`,
		`{"redirect_uris":["javascript:alert(1)"]}`,
		`{"redirect_uris":[]}`,
		`{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`,
		`{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"private_key_jwt"}`,
		`not json`,
	} {
		if r := register(bad); r.status != 400 {
			t.Errorf("%s: %d", bad, r.status)
		}
	}
	if r := register(`{"redirect_uris":["https://b.example/cb"]}`); r.status != http.StatusServiceUnavailable {
		t.Errorf("over the limit: %d", r.status)
	}
	// The registered public client can start a flow (consent page).
	id := m["client_id"].(string)
	if r := h.get("/oauth/authorize?" + authzParams(id, "http://localhost:5555/callback", newPKCE(t)).Encode()); r.status != 200 || !strings.Contains(string(r.body), "Claude Code") {
		t.Fatalf("authorize registered client: %d", r.status)
	}
}

func TestInsufficientScope(t *testing.T) {
	h := newHarness(t, nil)
	rec := newRecorder()
	err := auth.Scopes{Tools: []string{"read_*"}}.RequireTool("execute_command")
	var se *auth.ScopeError
	if !errorsAs(err, &se) {
		t.Fatalf("%T", err)
	}
	h.front.WriteInsufficientScope(rec, se.Scope)
	res := rec.Result()
	want := `Bearer error="insufficient_scope", scope="tools:execute_command", resource_metadata="` + h.front.ResourceMetadataURL() + `"`
	if res.StatusCode != 403 || res.Header.Get("WWW-Authenticate") != want || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %q", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	// A quote in a scope cannot break out of the parameter.
	if got := h.front.InsufficientScopeChallenge(`a"b\c` + "\n"); !strings.Contains(got, `scope="a\"b\\c"`) {
		t.Errorf("escaping: %s", got)
	}
}

func TestOAuthRevokeClient(t *testing.T) { testOAuthRevokeClient(t, memoryStore) }

func testOAuthRevokeClient(t *testing.T, st storeKind) {
	h, _ := oauthHarness(t, st, nil)
	redirect := "http://127.0.0.1:40001/callback"
	var access []string
	for range 2 {
		p := newPKCE(t)
		_, loc := h.authorize(authzParams("cli", redirect, p))
		tr := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}, "client_id": {"cli"}})
		access = append(access, tr.Access)
	}
	if n := h.front.RevokeClient("cli"); n != 2 {
		t.Fatalf("revoked %d grants, want 2", n)
	}
	for _, a := range access {
		if s := h.mcpStatus(a); s != 401 {
			t.Errorf("revoked client's token: %d", s)
		}
	}
	if n := h.front.RevokeClient("web"); n != 0 {
		t.Errorf("revoked %d grants of a client without any", n)
	}
	// The static token is untouched.
	if s := h.mcpStatus(h.token); s != 200 {
		t.Errorf("static token: %d", s)
	}
	// HEAD on the metadata answers without a body.
	if r := h.do(h.newRequest(http.MethodHead, "/.well-known/oauth-authorization-server", nil)); r.status != 200 || len(r.body) != 0 {
		t.Errorf("HEAD: %d %q", r.status, r.body)
	}
}

// TestOAuthThrottleSparesValidRequests: an address locked out by bad client
// secrets and codes (every local process shares 127.0.0.1) still exchanges
// a valid code, while its next bad request gets 429.
func TestOAuthThrottleSparesValidRequests(t *testing.T) {
	testOAuthThrottleSparesValidRequests(t, memoryStore)
}

func testOAuthThrottleSparesValidRequests(t *testing.T, st storeKind) {
	h, _ := oauthHarness(t, st, nil)
	redirect := "http://127.0.0.1:49152/callback"
	p := newPKCE(t)
	_, loc := h.authorize(authzParams("cli", redirect, p))
	if loc == nil {
		t.Fatal("no redirect")
	}
	var locked bool
	for range 30 {
		tr := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {"not-a-code"}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}, "client_id": {"cli"}})
		if tr.status == 429 {
			locked = true
			break
		}
	}
	if !locked {
		t.Fatal("bad codes never locked the address out")
	}
	tr := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}, "client_id": {"cli"}})
	if tr.status != 200 || tr.Access == "" {
		t.Fatalf("a valid code from a throttled address: %+v", tr)
	}
	if bad := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {"still-not-a-code"}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}, "client_id": {"cli"}}); bad.status != 429 {
		t.Errorf("a bad code from a throttled address: %+v", bad)
	}
}
