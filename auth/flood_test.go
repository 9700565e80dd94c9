package auth_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/auth"
)

// stranger is an HTTP client whose connections come from the loopback
// address src, so the Front counts it apart from the harness's 127.0.0.1.
func stranger(src string) *http.Client {
	d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       5 * time.Second,
	}
}

// status sends req with c and returns the status, discarding the body.
func status(t *testing.T, c *http.Client, req *http.Request) int {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

var consentField = regexp.MustCompile(`name="consent" value="([^"]+)"`)

// legitimateAuthorization runs the whole consent flow for client from
// 127.0.0.1 and reports the status of an MCP call with the token it got.
func (h *harness) legitimateAuthorization(t *testing.T, client, redirect string) int {
	t.Helper()
	p := newPKCE(t)
	r := h.get("/oauth/authorize?" + authzParams(client, redirect, p).Encode())
	m := consentField.FindSubmatch(r.body)
	if r.status != 200 || m == nil {
		t.Fatalf("consent page for the legitimate client: %d %s", r.status, r.body)
	}
	leaks.secret(string(m[1]))
	_, port, _ := strings.Cut(h.addr, ":")
	r = h.postForm("/oauth/authorize", url.Values{"consent": {string(m[1])}, "decision": {"approve"}, "operator_token": {h.token}},
		"Origin", "http://127.0.0.1:"+port)
	loc, _ := url.Parse(r.header.Get("Location"))
	if r.status != http.StatusSeeOther || loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("operator approval: %d %s", r.status, r.header.Get("Location"))
	}
	leaks.secret(loc.Query().Get("code"))
	tr := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect},
		"code_verifier": {p.verifier}, "client_id": {client}})
	if tr.status != 200 {
		t.Fatalf("token exchange: %+v", tr)
	}
	return h.mcpStatus(tr.Access)
}

// TestOAuthAuthorizeFlood floods /oauth/authorize for the legitimate
// client's own client_id: 10,000 requests from one address and 30 from
// each of 20 others. Pending authorizations are capped at 50 in all, so
// without the per-address and per-client limits the flood fills the table
// and the real user's consent page is refused; with them the real user,
// from 127.0.0.1, completes an authorization.
func TestOAuthAuthorizeFlood(t *testing.T) {
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		c.OAuth = &auth.OAuthConfig{Consent: true, MaxGrants: 50,
			Clients: []auth.Client{{ID: "cli", RedirectURIs: []string{"http://127.0.0.1/callback"}, Scopes: auth.FullScopes()}}}
	})
	redirect := "http://127.0.0.1:41000/callback"
	path := "/oauth/authorize?" + authzParams("cli", redirect, newPKCE(t)).Encode()

	counts := map[int]int{}
	c := stranger("127.0.0.2")
	defer c.CloseIdleConnections()
	for range 10000 {
		counts[status(t, c, h.newRequest(http.MethodGet, path, nil))]++
	}
	if counts[200] != auth.DefaultAuthorizationsPerAddr || counts[429] != 10000-auth.DefaultAuthorizationsPerAddr {
		t.Errorf("one address, 10,000 requests: statuses %v, want %d pages and the rest 429", counts, auth.DefaultAuthorizationsPerAddr)
	}
	for i := range 20 {
		c := stranger(fmt.Sprintf("127.0.1.%d", i+1))
		for range 30 {
			if s := status(t, c, h.newRequest(http.MethodGet, path, nil)); s != 200 {
				t.Fatalf("address %d: status %d, want a consent page", i, s)
			}
		}
		c.CloseIdleConnections()
	}
	if s := h.legitimateAuthorization(t, "cli", redirect); s != 200 {
		t.Errorf("MCP call with the token of the authorization made after the flood: %d", s)
	}
}

// TestOAuthRegistrationFlood floods /oauth/register from several
// addresses: each gets DefaultRegistrationsPerAddr registrations, then 429;
// the slots they fill come free once the registrations lapse unused, and a
// client that obtained a grant is kept. It runs against PostgreSQL too
// (oauthSuite), where the lapsed rows must be deleted from the database.
func TestOAuthRegistrationFlood(t *testing.T) { testOAuthRegistrationFlood(t, memoryStore) }

func testOAuthRegistrationFlood(t *testing.T, st storeKind) {
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		c.OAuth = &auth.OAuthConfig{Consent: true, AllowRegistration: true, MaxRegisteredClients: 25,
			RegistrationScopes: auth.FullScopes(), Store: st.open(t)}
	})
	register := func(c *http.Client) (int, string) {
		req := h.newRequest(http.MethodPost, "/oauth/register", strings.NewReader(`{"redirect_uris":["http://127.0.0.1/callback"],"token_endpoint_auth_method":"none"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		id := ""
		if m := regexp.MustCompile(`"client_id":"([^"]+)"`).FindSubmatch(b); m != nil {
			id = string(m[1])
		}
		return resp.StatusCode, id
	}
	var flooded []string
	for i := range 3 {
		c := stranger(fmt.Sprintf("127.0.2.%d", i+1))
		counts := map[int]int{}
		for range 100 {
			s, id := register(c)
			counts[s]++
			if id != "" {
				flooded = append(flooded, id)
			}
		}
		c.CloseIdleConnections()
		wantMade := min(auth.DefaultRegistrationsPerAddr, 25-i*auth.DefaultRegistrationsPerAddr)
		if counts[201] != wantMade {
			t.Errorf("address %d: %v, want %d registrations", i, counts, wantMade)
		}
	}
	if s, _ := register(h.client); s != http.StatusServiceUnavailable {
		t.Fatalf("registration with every slot taken: %d, want 503", s)
	}
	h.clock.Advance(auth.DefaultUnusedClientTTL + time.Second)
	s, id := register(h.client)
	if s != http.StatusCreated {
		t.Fatalf("registration after the flood's registrations lapsed: %d", s)
	}
	if r := h.get("/oauth/authorize?" + authzParams(flooded[0], "http://127.0.0.1:5/callback", newPKCE(t)).Encode()); r.status != 400 {
		t.Errorf("a lapsed registration still authorizes: %d", r.status)
	}
	if s := h.legitimateAuthorization(t, id, "http://127.0.0.1:41000/callback"); s != 200 {
		t.Fatalf("MCP call of the client registered after the flood: %d", s)
	}
	h.clock.Advance(2 * auth.DefaultUnusedClientTTL)
	if r := h.get("/oauth/authorize?" + authzParams(id, "http://127.0.0.1:5/callback", newPKCE(t)).Encode()); r.status != 200 {
		t.Errorf("a client that obtained a grant lapsed: %d", r.status)
	}
}
