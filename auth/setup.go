package auth

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// SetupTokenHeader is the header that carries a setup token. The query
// parameter setup_token is accepted too (it is how a setup URL is pasted),
// but the header keeps the token out of URLs, proxies and access logs.
const SetupTokenHeader = "X-Setup-Token"

// NewSetupToken mints a fresh setup token for GET /connection.json,
// replacing any earlier one. It works once, until Config.SetupTokenTTL has
// passed on the monotonic clock. It needs Config.ConnectionData.
func (f *Front) NewSetupToken() (Secret, error) {
	if f.cfg.ConnectionData == nil {
		return Secret{}, &ConfigError{Field: "ConnectionData", Reason: "not set: a setup token would protect nothing"}
	}
	s, err := newSecret(f.rand)
	if err != nil {
		return Secret{}, err
	}
	f.mu.Lock()
	f.setup = s.Digest()
	f.setupEnd = f.now().Add(f.cfg.SetupTokenTTL)
	f.setupOn = true
	f.mu.Unlock()
	return s, nil
}

// useSetupToken checks a presented setup token in constant time and spends
// it on success.
func (f *Front) useSetupToken(v string) (ok bool, reason string) {
	d := DigestOf(v)
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	match := f.setup.Equal(d)
	switch {
	case !f.setupOn:
		return false, "no setup token active (used or never issued)"
	case !match:
		return false, "wrong setup token"
	case !now.Before(f.setupEnd):
		f.setupOn = false
		return false, "setup token expired"
	}
	f.setupOn = false
	return true, ""
}

// serveConnection is GET /connection.json: the connection data for a
// caller holding a full-scope bearer token or the setup token.
func (f *Front) serveConnection(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	if !f.noAuth {
		// As in RequireBearer, the credential is checked before the
		// throttle, so a valid one is never refused with 429.
		key := f.clientKey(r)
		now := f.now()
		if len(r.Header.Values("Authorization")) > 0 || r.URL.Query().Has("access_token") {
			p, reason, sent, err := f.authenticateRequest(r, now)
			if err != nil {
				f.cannotCheck(w, r, err)
				return
			}
			if reason != "" {
				if f.refuseThrottled(w, r, key, now) {
					return
				}
				f.fail(r, key, now, reason, p.Name)
				f.unauthorized(w, sent)
				return
			}
			if !p.Scopes.IsFull() {
				// The connection data holds a full-scope credential; a
				// narrower token must not be able to trade up.
				f.WriteInsufficientScope(w, FullScopes().String())
				return
			}
		} else {
			st, present := setupTokenFrom(r)
			if !present {
				if f.refuseThrottled(w, r, key, now) {
					return
				}
				f.noCredentials(r)
				f.unauthorized(w, false)
				return
			}
			if ok, reason := f.useSetupToken(st); !ok {
				if f.refuseThrottled(w, r, key, now) {
					return
				}
				f.fail(r, key, now, reason, "setup")
				f.unauthorized(w, true)
				return
			}
			f.log.LogAttrs(r.Context(), slog.LevelInfo, "auth: setup token used", slog.String("remote", r.RemoteAddr))
			f.event(r.Context(), Event{Type: EventSetupUsed, Principal: "setup", RemoteAddr: r.RemoteAddr, Path: r.URL.Path})
		}
	}
	b, err := json.Marshal(f.cfg.ConnectionData())
	if err != nil {
		f.log.LogAttrs(context.Background(), slog.LevelError, "auth: connection data does not encode", slog.String("error", err.Error()))
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "server_error"})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(append(b, '\n'))
	}
}

// setupTokenFrom returns the setup token from the header (preferred) or the
// query. A repeated header or parameter counts as present but wrong.
func setupTokenFrom(r *http.Request) (string, bool) {
	if v := r.Header.Values(SetupTokenHeader); len(v) > 0 {
		if len(v) != 1 {
			return "", true
		}
		return v[0], true
	}
	if v, ok := r.URL.Query()["setup_token"]; ok {
		if len(v) != 1 {
			return "", true
		}
		return v[0], true
	}
	return "", false
}

// sensitiveParams are query parameters whose values RedactURL hides.
var sensitiveParams = []string{"setup_token", "access_token", "refresh_token", "code", "code_verifier", "client_secret", "operator_token"}

// RedactURL returns u as a string for an access log, with the values of
// credential-bearing query parameters (setup_token, access_token, code, …)
// replaced by "[REDACTED]". Use it wherever a request URL is logged: the
// setup token is accepted from the query, and must not reach a log line.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			k, _, _ := strings.Cut(p, "=")
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			for _, s := range sensitiveParams {
				if strings.EqualFold(name, s) {
					parts[i] = k + "=" + redacted
				}
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}
