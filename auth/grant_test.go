package auth_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestOAuthGrantIsItsOwnPrincipal authorizes one client twice, as two
// users would: each grant is a principal of its own, so everything keyed
// by principal (processes, terminals, tasks, sessions, limits) keeps them
// apart; a refresh keeps the grant's principal.
func TestOAuthGrantIsItsOwnPrincipal(t *testing.T) {
	h, _ := oauthHarness(t, memoryStore, nil)
	redirect := "http://127.0.0.1:49152/callback"
	grant := func() (name, refresh string) {
		p := newPKCE(t)
		_, loc := h.authorize(authzParams("cli", redirect, p))
		tr := h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect},
			"code_verifier": {p.verifier}, "client_id": {"cli"}})
		if s := h.mcpStatus(tr.Access); s != 200 {
			t.Fatalf("MCP with the grant's token: %d", s)
		}
		return h.principal.Load().Name, tr.Fresh
	}
	a, refresh := grant()
	b, _ := grant()
	if a == b || !strings.HasPrefix(a, "oauth:cli/") || !strings.HasPrefix(b, "oauth:cli/") {
		t.Fatalf("two grants of one client are principals %q and %q, want two distinct oauth:cli/GRANT", a, b)
	}
	tr := h.tokenCall(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"cli"}})
	if s := h.mcpStatus(tr.Access); s != 200 || h.principal.Load().Name != a {
		t.Errorf("after a refresh: %d as %q, want the grant's principal %q", s, h.principal.Load().Name, a)
	}
}
