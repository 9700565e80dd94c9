package auth_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rigout/rigout/auth"
)

// FuzzBearer feeds arbitrary Authorization values to the header parser and
// to RequireBearer itself. Properties: no panic; the decision is
// deterministic; a value is accepted only if it is exactly "Bearer " and a
// well-formed token; the handler admits exactly the configured token.
func FuzzBearer(f *testing.F) {
	const tok = "dGhpcyBpcyBhIHRlc3QgdG9rZW4gZm9yIGZ1enppbmc" // fixed: the corpus must be reproducible
	for _, s := range []string{
		"", "Bearer", "Bearer ", "Bearer  " + tok, "bearer " + tok, "BEARER " + tok, "Bearer " + tok,
		"Bearer " + tok + " ", "Bearer\t" + tok, "Basic " + tok, "Bearer " + tok + "=", "Bearer =" + tok,
		"Bearer a=b", "Bearer " + strings.Repeat("a", 2000), "Bearer tok\x00en", "Bearer tökén", "Bearer " + tok + "," + tok,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	var n atomic.Int64
	front, err := auth.New(auth.Config{
		Tokens:      []auth.Token{{Name: "default", Secret: auth.NewSecret(tok), Scopes: auth.FullScopes()}},
		Listener:    "127.0.0.1:8765",
		ResourceURL: "http://127.0.0.1:8765/mcp",
		// A fresh address per call: the throttle must not make the
		// decision depend on history.
		ClientAddr: func(*http.Request) string { return strconv.FormatInt(n.Add(1), 10) },
	})
	if err != nil {
		f.Fatal(err)
	}
	h := front.RequireBearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			panic("Authorization header passed on")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	f.Fuzz(func(t *testing.T, v string, twice bool) {
		vals := []string{v}
		if twice {
			vals = append(vals, v)
		}
		got, ok := auth.ParseBearer(vals)
		got2, ok2 := auth.ParseBearer(vals)
		if got != got2 || ok != ok2 {
			t.Fatalf("nondeterministic: %q %v / %q %v", got, ok, got2, ok2)
		}
		if ok {
			if twice || v != "Bearer "+got || got == "" || strings.ContainsAny(got, " \t\r\n\x00,\"") {
				t.Fatalf("accepted %q as %q", v, got)
			}
		}
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8765/mcp", nil)
		req.Header["Authorization"] = vals
		for range 2 {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			want := http.StatusUnauthorized
			if !twice && v == "Bearer "+tok {
				want = http.StatusNoContent
			}
			if rec.Code != want {
				t.Fatalf("%q: status %d, want %d", v, rec.Code, want)
			}
			if want == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer ") {
				t.Fatalf("no challenge")
			}
		}
	})
}
