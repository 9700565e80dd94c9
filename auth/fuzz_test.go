package auth_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rigout/rigout/auth"
)

// bearerGrammar is the accepted form of an Authorization value, written
// independently of the parser: optional surrounding whitespace, the scheme
// in any ASCII case, one or more spaces or tabs, a token68.
var bearerGrammar = regexp.MustCompile(`^[ \t]*[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+([A-Za-z0-9._~+/-]+=*)[ \t]*$`)

// FuzzBearer feeds arbitrary Authorization values to the header parser and
// to RequireBearer itself. Properties: no panic; the decision is
// deterministic; the parser accepts exactly what bearerGrammar matches
// (one header, token at most 1024 bytes) and returns its token; the
// canonical "Bearer TOKEN" of an accepted token parses to the same token;
// the handler admits exactly the configured token, in any accepted form.
func FuzzBearer(f *testing.F) {
	const tok = "dGhpcyBpcyBhIHRlc3QgdG9rZW4gZm9yIGZ1enppbmc" // fixed: the corpus must be reproducible
	for _, s := range []string{
		"", "Bearer", "Bearer ", "Bearer  " + tok, "bearer " + tok, "BEARER " + tok, "Bearer " + tok,
		"Bearer " + tok + " ", "Bearer\t" + tok, "Basic " + tok, "Bearer " + tok + "=", "Bearer =" + tok,
		"Bearer a=b", "Bearer " + strings.Repeat("a", 2000), "Bearer tok\x00en", "Bearer tökén", "Bearer " + tok + "," + tok,
		"bEaReR \t " + tok, " Bearer " + tok + "\t", "Bearer" + tok, "Bearer\n" + tok, "Bearer\r\n " + tok,
		"Bearer \u00a0" + tok, "Bearer " + tok + " x", "Bearer realm=\"x\"",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	for _, tt := range bearerTests {
		if len(tt.vals) > 0 {
			f.Add(tt.vals[0], len(tt.vals) > 1)
		}
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
		want := ""
		if m := bearerGrammar.FindStringSubmatch(v); m != nil && !twice && len(m[1]) <= 1024 {
			want = m[1]
		}
		if got != want || ok != (want != "") {
			t.Fatalf("ParseBearer(%q) = %q, %v; the grammar says %q", vals, got, ok, want)
		}
		if ok {
			if strings.ContainsAny(got, " \t\r\n\x00,\"") {
				t.Fatalf("accepted %q as %q", v, got)
			}
			if c, cok := auth.ParseBearer([]string{"Bearer " + got}); c != got || !cok {
				t.Fatalf("canonical form of %q parses as %q, %v", got, c, cok)
			}
		}
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8765/mcp", nil)
		req.Header["Authorization"] = vals
		for range 2 {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			want := http.StatusUnauthorized
			if ok && got == tok {
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
