package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/auth/pgstore"
)

// loopbackPort returns a free TCP port on 127.0.0.1.
func loopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Two real `rigout serve` processes behind a load balancer (a reverse
// proxy on loopback whose backend the test switches) share the OAuth
// state in the PostgreSQL database of their ledger: a grant made through
// gateway A is accepted by gateway B over HTTP, a refresh token reused on
// B revokes the grant on A, and the database holds digests, not tokens.
func TestTwoGatewaysShareOAuthOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL end-to-end test skipped in -short mode")
	}
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("oauth")
	const token = "pg-test-token-0123456789abcdef012"

	var backend atomic.Pointer[url.URL]
	lb := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(backend.Load())
		r.Out.Host = r.In.Host // the public host, which both gateways accept
	}})
	defer lb.Close()
	public := lb.URL + "/mcp"

	gateways := map[string]*url.URL{}
	var cfg, dir string
	for _, gw := range []string{"gw-a", "gw-b"} {
		dir = t.TempDir()
		cfg = filepath.Join(dir, "rigout.json")
		body := fmt.Sprintf(`{"audit": {"postgres": %q, "gateway": %q, "key_env": %q},
			"oauth": {"insecure_auto_approve": true, "clients": [{"id": "cli", "redirect_uris": ["http://127.0.0.1/callback"],
				"scopes": {"tools": ["*"], "hosts": ["*"]}}]}}`, dsn, gw, testChainKeyEnv)
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", loopbackPort(t))
		startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_STATE_DIR=" + dir},
			"--config", cfg, "--no-ssh", "--addr", addr, "--public-url", public)
		gateways[gw] = &url.URL{Scheme: "http", Host: addr}
	}
	via := func(gw string) { backend.Store(gateways[gw]) }
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token2 := func(form url.Values) (int, map[string]any) {
		t.Helper()
		resp, err := http.PostForm(lb.URL+"/oauth/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("token endpoint: %d %s", resp.StatusCode, b)
		}
		return resp.StatusCode, m
	}
	mcpInit := func(access string) int {
		t.Helper()
		status, _, _ := post(t, public, access, "", initReq())
		return status
	}

	// Authorize and exchange through A.
	via("gw-a")
	verifier := strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	redirect := "http://127.0.0.1:45678/callback"
	q := url.Values{"response_type": {"code"}, "client_id": {"cli"}, "redirect_uri": {redirect},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "state": {"s"}}
	resp, err := noRedirect.Get(lb.URL + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize on gw-a: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	status, first := token2(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "client_id": {"cli"}})
	access, refresh := first["access_token"].(string), first["refresh_token"].(string)
	if status != 200 || access == "" || refresh == "" {
		t.Fatalf("exchange on gw-a: %d %v", status, first)
	}
	if s := mcpInit(access); s != 200 {
		t.Fatalf("gw-a refused its own token: %d", s)
	}
	// The database holds the tokens' keyed digests (under the secret
	// derived from the chain key), never the tokens nor their plain
	// SHA-256 digests, which anyone could compute and insert.
	stored := srv.Psql("oauth", `SELECT string_agg(encode(digest, 'hex'), ' ') FROM rigout_oauth_tokens`)
	chainKey, _ := hex.DecodeString(os.Getenv(testChainKeyEnv))
	sm := hmac.New(sha256.New, chainKey)
	sm.Write([]byte("rigout.oauth.store-secret.v1"))
	secret := sm.Sum(nil)
	for _, tok := range []string{access, refresh} {
		d := sha256.Sum256([]byte(tok))
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("rigout.oauth.digest.v1\x00"))
		m.Write(d[:])
		if !strings.Contains(stored, fmt.Sprintf("%x", m.Sum(nil))) || strings.Contains(stored, fmt.Sprintf("%x", d)) || strings.Contains(stored, tok) {
			t.Fatalf("tokens table %q: want the keyed digest of each token, never the token or its plain digest", stored)
		}
	}
	if got := srv.Psql("oauth", `SELECT gateway FROM rigout_oauth_grants`); got != "gw-a" {
		t.Errorf("grant made on %q, want gw-a", got)
	}

	// B accepts A's token.
	via("gw-b")
	if s := mcpInit(access); s != 200 {
		t.Fatalf("gw-b refused gw-a's access token: %d", s)
	}
	// A rotates; reusing the old refresh token on B revokes the grant on A.
	via("gw-a")
	status, second := token2(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"cli"}})
	if status != 200 {
		t.Fatalf("refresh on gw-a: %d %v", status, second)
	}
	via("gw-b")
	if status, m := token2(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"cli"}}); status != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("refresh token reuse on gw-b: %d %v", status, m)
	}
	via("gw-a")
	for name, tok := range map[string]string{"first": access, "rotated": second["access_token"].(string)} {
		if s := mcpInit(tok); s != 401 {
			t.Errorf("gw-a still accepts the %s access token after the reuse on gw-b: %d", name, s)
		}
	}
	if s := mcpInit(token); s != 200 {
		t.Errorf("the static token stopped working: %d", s)
	}

	if got := srv.Psql("oauth", `SELECT count(*) FROM rigout_oauth_grants`); got != "0" {
		t.Errorf("grants left after the revocation: %s", got)
	}

	var doc strings.Builder
	runDoctor(context.Background(), []string{"--config", cfg, "--state-dir", dir}, &doc, &doc)
	if !strings.Contains(doc.String(), fmt.Sprintf("OAuth schema version %d, shared by the gateways", pgstore.SchemaVersion)) {
		t.Errorf("doctor does not report the OAuth state:\n%s", doc.String())
	}
}
