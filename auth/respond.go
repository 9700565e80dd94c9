package auth

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// errorBody is the JSON body of every error this package writes.
type errorBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
	Scope       string `json:"scope,omitempty"`
}

// writeJSON writes v as JSON with headers that keep it out of caches.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONCache(w, status, v, "no-store")
}

// writeJSONCache writes v as JSON with the given Cache-Control.
func writeJSONCache(w http.ResponseWriter, status int, v any, cache string) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"server_error"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", cache)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// quoteParam renders s as an RFC 9110 quoted-string for an auth parameter.
// Control characters, which cannot be escaped, are dropped.
func quoteParam(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// unauthorizedBody is the one 401 body: it does not say what was wrong.
var unauthorizedBody = errorBody{Error: "unauthorized", Description: "a valid bearer token is required in the Authorization header"}

// unauthorized writes the 401 challenge. sent reports whether the client
// sent a credential, which adds error="invalid_token" (RFC 6750 §3).
func (f *Front) unauthorized(w http.ResponseWriter, sent bool) {
	ch := "Bearer "
	if sent {
		ch += `error="invalid_token", `
	}
	ch += "resource_metadata=" + quoteParam(f.prmURL)
	w.Header().Set("WWW-Authenticate", ch)
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusUnauthorized, unauthorizedBody)
}

// tooManyRequests writes 429 with Retry-After in whole seconds.
func (f *Front) tooManyRequests(w http.ResponseWriter, r *http.Request, retry time.Duration) {
	secs := int((retry + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	f.event(r.Context(), Event{Type: EventThrottled, RemoteAddr: r.RemoteAddr, Path: r.URL.Path, Reason: "too many failed attempts"})
	writeJSON(w, http.StatusTooManyRequests, errorBody{Error: "too_many_requests", Description: "too many failed attempts from this address; retry later"})
}

// rateLimit writes 429 with Retry-After for an address that sent too many
// requests to an endpoint that does not need a credential.
func (f *Front) rateLimit(w http.ResponseWriter, r *http.Request, retry time.Duration) {
	secs := int((retry + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	f.event(r.Context(), Event{Type: EventThrottled, RemoteAddr: r.RemoteAddr, Path: r.URL.Path, Reason: "rate limit"})
	writeJSON(w, http.StatusTooManyRequests, errorBody{Error: "too_many_requests", Description: "too many requests to " + r.URL.Path + " from this address; retry later"})
}

// InsufficientScopeChallenge returns the WWW-Authenticate value for a
// request whose token lacks scope (RFC 6750 §3.1, MCP authorization):
// Bearer error="insufficient_scope", scope="…", resource_metadata="…".
func (f *Front) InsufficientScopeChallenge(scope string) string {
	return `Bearer error="insufficient_scope", scope=` + quoteParam(scope) +
		", resource_metadata=" + quoteParam(f.prmURL)
}

// WriteInsufficientScope answers an HTTP-level refusal of a call outside
// the token's scopes: 403 with [Front.InsufficientScopeChallenge], no-store,
// and a JSON body naming the missing scope. Pass the Scope of a
// [*ScopeError]. (Inside MCP, a scope refusal is a tool error result
// instead; see [ScopeError].)
func (f *Front) WriteInsufficientScope(w http.ResponseWriter, scope string) {
	w.Header().Set("WWW-Authenticate", f.InsufficientScopeChallenge(scope))
	writeJSON(w, http.StatusForbidden, errorBody{Error: "insufficient_scope", Description: "the token lacks the scope this request needs", Scope: scope})
}

// methodNotAllowed answers 405 with the Allow header.
func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "method_not_allowed", Description: "use " + allow})
}
