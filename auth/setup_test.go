package auth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/auth"
)

func TestSetupToken(t *testing.T) {
	var setup string
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		setup = newToken(t)
		c.SetupToken = auth.NewSecret(setup)
	})
	t.Run("header, once", func(t *testing.T) {
		r := h.get("/connection.json", auth.SetupTokenHeader, setup)
		if r.status != 200 || !strings.Contains(string(r.body), "Bearer "+h.token) || r.header.Get("Cache-Control") != "no-store" || r.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("%d %v", r.status, r.header)
		}
		if countType(h.eventTypes(), auth.EventSetupUsed) != 1 {
			t.Error("no setup.used event")
		}
		if r := h.get("/connection.json", auth.SetupTokenHeader, setup); r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
			t.Fatalf("second use: %d", r.status)
		}
	})
	t.Run("query, once", func(t *testing.T) {
		s, err := h.front.NewSetupToken()
		if err != nil {
			t.Fatal(err)
		}
		leaks.secret(s.Reveal())
		if r := h.get("/connection.json?setup_token=" + url.QueryEscape(s.Reveal())); r.status != 200 {
			t.Fatalf("%d", r.status)
		}
		if r := h.get("/connection.json?setup_token=" + url.QueryEscape(s.Reveal())); r.status != 401 {
			t.Fatalf("second use: %d", r.status)
		}
	})
	t.Run("expires after 15 minutes", func(t *testing.T) {
		s, _ := h.front.NewSetupToken()
		leaks.secret(s.Reveal())
		h.clock.Advance(15 * time.Minute)
		if r := h.get("/connection.json", auth.SetupTokenHeader, s.Reveal()); r.status != 401 {
			t.Fatalf("expired: %d", r.status)
		}
	})
	t.Run("wrong does not spend", func(t *testing.T) {
		s, _ := h.front.NewSetupToken()
		leaks.secret(s.Reveal())
		if r := h.get("/connection.json", auth.SetupTokenHeader, newToken(t)); r.status != 401 {
			t.Fatalf("wrong: %d", r.status)
		}
		if r := h.get("/connection.json", auth.SetupTokenHeader, s.Reveal(), "X-Unrelated", "1"); r.status != 200 {
			t.Fatalf("right after wrong: %d", r.status)
		}
	})
	t.Run("never grants /mcp", func(t *testing.T) {
		s, _ := h.front.NewSetupToken()
		leaks.secret(s.Reveal())
		if r := h.do(h.newRequest(http.MethodPost, "/mcp", nil, "Authorization", "Bearer "+s.Reveal())); r.status != 401 {
			t.Fatalf("setup token on /mcp: %d", r.status)
		}
	})
}

func TestConnectionNeedsFullScope(t *testing.T) {
	var narrow string
	h := newHarness(t, func(_ *harness, c *auth.Config) {
		narrow = newToken(t)
		c.Tokens = append(c.Tokens, auth.Token{Name: "reader", Secret: auth.NewSecret(narrow), Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}})
	})
	r := h.get("/connection.json", "Authorization", "Bearer "+narrow)
	if r.status != http.StatusForbidden || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) || strings.Contains(string(r.body), h.token) {
		t.Fatalf("narrow token: %d %v", r.status, r.header)
	}
	// The narrow token works on /mcp, with its own scopes.
	if r := h.do(h.newRequest(http.MethodPost, "/mcp", nil, "Authorization", "Bearer "+narrow)); r.status != 200 || h.principal.Load().Name != "reader" || !h.principal.Load().Scopes.ReadOnly {
		t.Fatalf("narrow token on /mcp: %d", r.status)
	}
}

func TestRedactURL(t *testing.T) {
	u, _ := url.Parse("http://u:p@h/connection.json?a=1&setup_token=SECRETVALUE&Code=abc&access_token=x%20y&state=keep")
	got := auth.RedactURL(u)
	for _, bad := range []string{"SECRETVALUE", "abc", "x%20y", "u:p"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q in %s", bad, got)
		}
	}
	if !strings.Contains(got, "state=keep") || !strings.Contains(got, "a=1") {
		t.Errorf("%s", got)
	}
	if auth.RedactURL(nil) != "" {
		t.Error("nil")
	}
}
