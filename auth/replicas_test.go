package auth_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/auth"
)

// replicas is two Fronts, gateways A and B, serving one resource URL
// behind an imagined load balancer, sharing one PostgreSQL store.
type replicas struct {
	a, b *harness
	srv  *pgtest.Server
}

func newReplicas(t *testing.T, srv *pgtest.Server, db string) replicas {
	dsn := srv.CreateDB(db)
	st := storeKind{name: "postgres", open: func(t *testing.T) auth.OAuthStore { return openPG(t, dsn) }}
	// Losing races counts as a failed exchange; the throttle must not
	// answer 429 for that.
	a, _ := oauthHarness(t, st, func(_ *harness, c *auth.Config) { c.Throttle.Failures = 1000 })
	b, _ := oauthHarness(t, st, func(_ *harness, c *auth.Config) {
		c.ResourceURL = a.base + "/mcp"
		c.Throttle.Failures = 1000
	})
	return replicas{a: a, b: b, srv: srv}
}

const replicaRedirect = "http://127.0.0.1:41234/callback"

// code runs the authorization request for the public client on h.
func (h *harness) code(t *testing.T) (string, pkce) {
	t.Helper()
	p := newPKCE(t)
	_, loc := h.authorize(authzParams("cli", replicaRedirect, p))
	if loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("no code from %s: %v", h.base, loc)
	}
	return loc.Query().Get("code"), p
}

func (h *harness) exchange(code string, p pkce) tokenReply {
	h.t.Helper()
	return h.tokenCall(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {replicaRedirect},
		"code_verifier": {p.verifier}, "client_id": {"cli"}})
}

func (h *harness) refreshWith(rt string) tokenReply {
	h.t.Helper()
	return h.tokenCall(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {"cli"}})
}

// TestOAuthReplicasPostgres: gateways sharing a pgstore share grants. A
// token issued by A works on B, a refresh token reused on B revokes the
// grant on A, a code raced on A and B is redeemed once, expiry holds on
// either, and a stopped database makes both refuse (503) until it returns.
func TestOAuthReplicasPostgres(t *testing.T) {
	srv := pgtest.Start(t)

	t.Run("token issued by A is accepted by B", func(t *testing.T) {
		r := newReplicas(t, srv, "replicas_accept")
		code, p := r.a.code(t)
		tr := r.a.exchange(code, p)
		if tr.status != 200 {
			t.Fatalf("exchange on A: %+v", tr)
		}
		if s := r.b.mcpStatus(tr.Access); s != 200 {
			t.Fatalf("B refused A's access token: %d", s)
		}
		if pr := r.b.principal.Load(); pr == nil || pr.Name != "oauth:cli/"+pr.GrantID || !r.b.front.Valid(*pr) || !r.a.front.Valid(*pr) {
			t.Fatalf("principal on B: %+v", pr)
		}
		// B rotates A's refresh token; A accepts the new access token.
		tr2 := r.b.refreshWith(tr.Fresh)
		if tr2.status != 200 || r.a.mcpStatus(tr2.Access) != 200 {
			t.Fatalf("refresh on B, use on A: %+v", tr2)
		}
	})

	t.Run("refresh reuse on B revokes the family on A", func(t *testing.T) {
		r := newReplicas(t, srv, "replicas_reuse")
		code, p := r.a.code(t)
		first := r.a.exchange(code, p)
		second := r.a.refreshWith(first.Fresh) // rotated on A
		if second.status != 200 || r.a.mcpStatus(second.Access) != 200 {
			t.Fatalf("rotation on A: %+v", second)
		}
		other, p2 := r.a.code(t) // an unrelated grant
		unrelated := r.a.exchange(other, p2)
		reuse := r.b.refreshWith(first.Fresh) // the old one, on B
		if reuse.status != 400 || reuse.Error != "invalid_grant" {
			t.Fatalf("reuse on B: %+v", reuse)
		}
		for name, tok := range map[string]string{"first": first.Access, "second": second.Access} {
			if s := r.a.mcpStatus(tok); s != 401 {
				t.Errorf("%s access token still works on A after reuse on B: %d", name, s)
			}
		}
		if again := r.a.refreshWith(second.Fresh); again.Error != "invalid_grant" {
			t.Errorf("the family's live refresh token still works on A: %+v", again)
		}
		if s := r.a.mcpStatus(unrelated.Access); s != 200 {
			t.Errorf("an unrelated grant was revoked: %d", s)
		}
		if !containsEvent(r.b, auth.EventRevoke) {
			t.Error("B reported no oauth.revoke event")
		}
	})

	t.Run("a code raced on A and B is redeemed exactly once", func(t *testing.T) {
		r := newReplicas(t, srv, "replicas_race")
		const rounds = 20
		for i := range rounds {
			code, p := r.a.code(t)
			var wg sync.WaitGroup
			replies := make([]tokenReply, 2)
			start := make(chan struct{})
			for j, h := range []*harness{r.a, r.b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					replies[j] = h.exchange(code, p)
				}()
			}
			close(start)
			wg.Wait()
			ok := 0
			for _, rep := range replies {
				switch {
				case rep.status == 200:
					ok++
				case rep.status != 400 || rep.Error != "invalid_grant":
					t.Fatalf("round %d: unexpected answer %+v", i, rep)
				}
			}
			if ok != 1 {
				t.Fatalf("round %d: the code was redeemed %d times", i, ok)
			}
		}
	})

	t.Run("expired codes and tokens are refused on the other gateway", func(t *testing.T) {
		r := newReplicas(t, srv, "replicas_expiry")
		code, p := r.a.code(t)
		r.b.clock.Advance(auth.DefaultCodeTTL + time.Second) // B's clock: the code has expired
		if tr := r.b.exchange(code, p); tr.status != 400 || tr.Error != "invalid_grant" {
			t.Fatalf("expired code on B: %+v", tr)
		}
		code, p = r.a.code(t)
		tr := r.a.exchange(code, p)
		if tr.status != 200 || r.b.mcpStatus(tr.Access) != 200 {
			t.Fatalf("fresh grant: %+v", tr)
		}
		r.b.clock.Advance(auth.DefaultAccessTTL)
		if s := r.b.mcpStatus(tr.Access); s != 401 {
			t.Errorf("expired access token on B: %d", s)
		}
		r.b.clock.Advance(auth.DefaultRefreshTTL)
		if rt := r.b.refreshWith(tr.Fresh); rt.status != 400 || rt.Error != "invalid_grant" {
			t.Errorf("expired refresh token on B: %+v", rt)
		}
		if s := r.a.mcpStatus(tr.Access); s != 200 {
			t.Errorf("A, whose clock has not moved, refused the token: %d", s)
		}
	})

	t.Run("a stopped database fails closed and recovers", func(t *testing.T) {
		r := newReplicas(t, srv, "replicas_down")
		code, p := r.a.code(t)
		tr := r.a.exchange(code, p)
		if tr.status != 200 || r.b.mcpStatus(tr.Access) != 200 {
			t.Fatalf("grant: %+v", tr)
		}
		calls := r.b.calls.Load()
		srv.Stop()
		restarted := false
		defer func() {
			if !restarted {
				srv.Restart()
			}
		}()
		resp := r.b.do(r.b.newRequest(http.MethodPost, "/mcp", strings.NewReader("{}"), "Authorization", "Bearer "+tr.Access))
		if resp.status != http.StatusServiceUnavailable || resp.header.Get("Retry-After") == "" ||
			!strings.Contains(string(resp.body), "OAuth state store is unavailable") {
			t.Fatalf("token check with the database down: %d %v %s", resp.status, resp.header, resp.body)
		}
		if r.b.calls.Load() != calls {
			t.Fatal("the MCP handler ran although the token could not be checked")
		}
		if rt := r.a.refreshWith(tr.Fresh); rt.status != http.StatusServiceUnavailable || rt.Error != "temporarily_unavailable" {
			t.Errorf("refresh with the database down: %+v", rt)
		}
		if pr := r.b.principal.Load(); pr == nil || r.b.front.Valid(*pr) {
			t.Error("Valid reports a grant live that it cannot check")
		}
		// The static token does not depend on the database.
		if s := r.b.mcpStatus(r.b.token); s != 200 {
			t.Errorf("static token with the database down: %d", s)
		}
		srv.Restart()
		restarted = true
		var s int
		for range 50 {
			if s = r.b.mcpStatus(tr.Access); s == 200 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if s != 200 {
			t.Fatalf("the token is still refused after the database returned: %d", s)
		}
		if rt := r.a.refreshWith(tr.Fresh); rt.status != 200 {
			t.Errorf("refresh after recovery: %+v", rt)
		}
	})
}

func containsEvent(h *harness, typ auth.EventType) bool {
	for _, e := range h.eventTypes() {
		if e == typ {
			return true
		}
	}
	return false
}
