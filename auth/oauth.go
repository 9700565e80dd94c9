package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Limits of the authorization server that are not worth a knob.
const (
	maxFormBytes    = 64 << 10
	maxStateLen     = 1024
	consentTTL      = 10 * time.Minute
	maxCodeTTL      = 10 * time.Minute
	spentCodeMemory = 10 * time.Minute // how long a spent code is remembered for reuse detection
	maxRedirectURIs = 10
)

// oauthServer is the OAuth 2.1 authorization server of a Front.
type oauthServer struct {
	f       *Front
	cfg     OAuthConfig
	consent *template.Template

	store   OAuthStore
	clients map[string]*oauthClient // the configured clients; read-only after newOAuthServer

	registrations  *throttle // per client address, per hour
	authorizations *throttle // per client address, per minute

	// mu protects the following.
	mu       sync.Mutex
	consents map[string][]openConsent // client ID → its open consent pages, oldest first
}

// openConsent is a consent page this Front showed and that may still be
// answered.
type openConsent struct {
	d       Digest
	expires time.Time
}

type oauthClient struct {
	id, name     string
	secret       Digest
	confidential bool
	redirects    []string
	scopes       Scopes
}

// authzRequest is a validated authorization request.
type authzRequest struct {
	clientID, redirectURI, state, challenge, resource string
}

func (q authzRequest) pending(expires time.Time) Pending {
	return Pending{ClientID: q.clientID, RedirectURI: q.redirectURI, State: q.state, Challenge: q.challenge, Resource: q.resource, Expires: expires}
}

func requestOf(p Pending) authzRequest {
	return authzRequest{clientID: p.ClientID, redirectURI: p.RedirectURI, state: p.State, challenge: p.Challenge, resource: p.Resource}
}

func newOAuthServer(f *Front, c OAuthConfig) (*oauthServer, error) {
	switch {
	case c.Consent == c.InsecureAutoApprove:
		return nil, &ConfigError{Field: "OAuth", Reason: "set exactly one of Consent and InsecureAutoApprove: authorizing a client hands out machine access"}
	case c.AllowRegistration && !c.Consent:
		return nil, &ConfigError{Field: "OAuth.AllowRegistration", Reason: "needs Consent: anyone may register a client"}
	}
	if c.Consent && !f.hasOperatorToken() {
		return nil, &ConfigError{Field: "OAuth.Consent", Reason: "needs a static token with full scopes for the operator to approve with"}
	}
	if c.CodeTTL <= 0 {
		c.CodeTTL = DefaultCodeTTL
	}
	if c.CodeTTL > maxCodeTTL {
		return nil, &ConfigError{Field: "OAuth.CodeTTL", Reason: "at most 10 minutes"}
	}
	if c.AccessTTL <= 0 {
		c.AccessTTL = DefaultAccessTTL
	}
	if c.RefreshTTL <= 0 {
		c.RefreshTTL = DefaultRefreshTTL
	}
	if c.MaxGrants <= 0 {
		c.MaxGrants = DefaultMaxGrants
	}
	if c.MaxRegisteredClients <= 0 {
		c.MaxRegisteredClients = DefaultMaxClients
	}
	if c.RegistrationsPerAddr <= 0 {
		c.RegistrationsPerAddr = DefaultRegistrationsPerAddr
	}
	if c.UnusedClientTTL <= 0 {
		c.UnusedClientTTL = DefaultUnusedClientTTL
	}
	if c.AuthorizationsPerAddr <= 0 {
		c.AuthorizationsPerAddr = DefaultAuthorizationsPerAddr
	}
	if c.MaxPendingConsents <= 0 {
		c.MaxPendingConsents = DefaultMaxPendingConsents
	}
	if err := c.RegistrationScopes.validate(); err != nil {
		return nil, &ConfigError{Field: "OAuth.RegistrationScopes", Reason: "invalid", Err: err}
	}
	c.RegistrationScopes = c.RegistrationScopes.clone()
	o := &oauthServer{f: f, cfg: c, store: c.Store, clients: make(map[string]*oauthClient),
		registrations:  newThrottle(ThrottleConfig{Failures: c.RegistrationsPerAddr, Window: time.Hour, MaxAddresses: f.cfg.Throttle.MaxAddresses}),
		authorizations: newThrottle(ThrottleConfig{Failures: c.AuthorizationsPerAddr, Window: time.Minute, MaxAddresses: f.cfg.Throttle.MaxAddresses}),
		consents:       make(map[string][]openConsent),
	}
	if o.store == nil {
		o.store = NewMemoryStore()
	}
	o.cfg.Store = nil
	for i, cl := range c.Clients {
		field := fmt.Sprintf("OAuth.Clients[%d]", i)
		switch {
		case cl.ID == "" || strings.IndexFunc(cl.ID, badScopeRune) >= 0:
			return nil, &ConfigError{Field: field + ".ID", Reason: "required, printable ASCII without spaces"}
		case o.clients[cl.ID] != nil:
			return nil, &ConfigError{Field: field + ".ID", Reason: "duplicate client " + cl.ID}
		case !cl.Secret.IsZero() && !cl.SecretDigest.IsZero():
			return nil, &ConfigError{Field: field, Reason: "set Secret or SecretDigest, not both"}
		case len(cl.RedirectURIs) == 0:
			return nil, &ConfigError{Field: field + ".RedirectURIs", Reason: "at least one is required"}
		}
		for _, ru := range cl.RedirectURIs {
			if !validRedirectURI(ru) {
				return nil, &ConfigError{Field: field + ".RedirectURIs", Reason: fmt.Sprintf("%q must be https, or http on a loopback host, without fragment", ru)}
			}
		}
		if err := cl.Scopes.validate(); err != nil {
			return nil, &ConfigError{Field: field + ".Scopes", Reason: "invalid", Err: err}
		}
		oc := &oauthClient{id: cl.ID, name: cl.Name, redirects: append([]string(nil), cl.RedirectURIs...), scopes: cl.Scopes.clone()}
		if oc.name == "" {
			oc.name = cl.ID
		}
		switch {
		case !cl.Secret.IsZero():
			oc.secret, oc.confidential = cl.Secret.Digest(), true
		case !cl.SecretDigest.IsZero():
			oc.secret, oc.confidential = cl.SecretDigest, true
		}
		o.clients[cl.ID] = oc
	}
	if len(o.clients) == 0 && !c.AllowRegistration {
		return nil, &ConfigError{Field: "OAuth.Clients", Reason: "no client and no dynamic registration: nobody could use the server"}
	}
	o.cfg.Clients = nil
	t, err := template.New("consent").Parse(consentHTML)
	if err != nil {
		return nil, fmt.Errorf("auth: consent template: %w", err)
	}
	o.consent = t
	return o, nil
}

// hasOperatorToken reports whether a static token with full scopes exists.
func (f *Front) hasOperatorToken() bool {
	for _, t := range f.tokens {
		if t.scopes.IsFull() {
			return true
		}
	}
	return false
}

// validRedirectURI reports whether a redirect URI may be registered: https,
// or http on a loopback host (OAuth 2.1, RFC 8252 §7.3), absolute, without
// fragment or user info.
func validRedirectURI(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" || u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
		return false
	}
	host, _, ok := splitHostPort(u.Host)
	if !ok || !validHostname(host) {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		return isLoopbackHost(host)
	}
	return false
}

// matchRedirect reports whether requested is one of the registered
// redirect URIs: the same string, or for an http loopback URI the same
// except for the port (RFC 8252 §7.3: the client picks an ephemeral port).
func matchRedirect(registered []string, requested string) bool {
	for _, r := range registered {
		if r == requested {
			return true
		}
	}
	q, err := url.Parse(requested)
	if err != nil || q.Scheme != "http" || q.User != nil || q.Fragment != "" || strings.Contains(requested, "#") {
		return false
	}
	qh, _, ok := splitHostPort(q.Host)
	if !ok || !isLoopbackHost(qh) {
		return false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" {
			continue
		}
		uh, _, ok := splitHostPort(u.Host)
		if ok && uh == qh && u.EscapedPath() == q.EscapedPath() && u.RawQuery == q.RawQuery {
			return true
		}
	}
	return false
}

// client finds a configured or registered client; nil if there is none.
func (o *oauthServer) client(ctx context.Context, id string) (*oauthClient, error) {
	if cl := o.clients[id]; cl != nil {
		return cl, nil
	}
	sc, ok, err := o.store.Client(ctx, id)
	if err != nil || !ok {
		return nil, storeErr("look up client", err)
	}
	if !sc.Expires.IsZero() && !o.f.now().Before(sc.Expires) {
		return nil, nil // a registration that lapsed unused
	}
	return &oauthClient{id: sc.ID, name: sc.Name, secret: sc.Secret, confidential: sc.Confidential, redirects: sc.RedirectURIs, scopes: sc.Scopes}, nil
}

// storeErr wraps an error of the store; nil stays nil.
func storeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	return &StoreError{Op: op, Err: err}
}

// storeDown answers a request the store could not serve: 503, logged, in
// the OAuth error format. Nothing is granted.
func (o *oauthServer) storeDown(w http.ResponseWriter, r *http.Request, err error) {
	o.f.log.LogAttrs(r.Context(), slog.LevelError, "auth: OAuth store unavailable", slog.String("error", err.Error()))
	w.Header().Set("Retry-After", "5")
	tokenError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the OAuth state store is unavailable; try again shortly")
}

// ---- metadata ----

// asMetadata is the RFC 8414 document.
type asMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
}

func (o *oauthServer) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if !getOrHead(w, r) {
		return
	}
	iss := o.f.origin
	md := asMetadata{
		Issuer:                            iss,
		AuthorizationEndpoint:             iss + authorizePath,
		TokenEndpoint:                     iss + tokenPath,
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post", "none"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		IssParameterSupported:             true,
	}
	if o.cfg.AllowRegistration {
		md.RegistrationEndpoint = iss + registerPath
	}
	writePublicJSON(w, r, md)
}

// ---- authorization endpoint ----

func (o *oauthServer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if o.rateLimited(w, r, o.authorizations) {
		return
	}
	switch {
	case r.Method == http.MethodGet:
		o.authorizeRequest(w, r)
	case r.Method == http.MethodPost && o.cfg.Consent:
		o.consentDecision(w, r)
	case o.cfg.Consent:
		methodNotAllowed(w, "GET, POST")
	default:
		methodNotAllowed(w, "GET")
	}
}

// authorizeRequest validates an authorization request (RFC 6749 §4.1.1,
// OAuth 2.1, RFC 7636, RFC 8707). Errors about the client or redirect URI
// are shown to the user, never redirected; later errors go back to the
// client with iss (RFC 9207).
func (o *oauthServer) authorizeRequest(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, k := range []string{"client_id", "redirect_uri"} {
		if len(q[k]) > 1 {
			authzErrorPage(w, "invalid_request", "repeated parameter "+k)
			return
		}
	}
	cl, err := o.client(r.Context(), q.Get("client_id"))
	if err != nil {
		o.storeDown(w, r, err)
		return
	}
	if cl == nil {
		authzErrorPage(w, "invalid_client", "unknown client_id")
		return
	}
	ru := q.Get("redirect_uri")
	if ru == "" || !matchRedirect(cl.redirects, ru) {
		authzErrorPage(w, "invalid_request", "redirect_uri is missing or not registered for this client")
		return
	}
	state := q.Get("state")
	fail := func(code, desc string) {
		o.redirectTo(w, ru, url.Values{"error": {code}, "error_description": {desc}}, state, http.StatusFound)
	}
	for _, k := range []string{"response_type", "state", "code_challenge", "code_challenge_method", "scope"} {
		if len(q[k]) > 1 {
			fail("invalid_request", "repeated parameter "+k)
			return
		}
	}
	switch {
	case len(q["resource"]) > 1:
		fail("invalid_target", "only one resource is served here")
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "response_type must be code")
	case q.Get("code_challenge") == "":
		fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256")
	case q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "code_challenge_method must be S256")
	case !validChallenge(q.Get("code_challenge")):
		fail("invalid_request", "code_challenge must be 43 base64url characters (S256)")
	case len(state) > maxStateLen:
		fail("invalid_request", "state is too long")
	case q.Has("resource") && !o.isResource(q.Get("resource")):
		fail("invalid_target", "resource is not this server")
	default:
		req := authzRequest{clientID: cl.id, redirectURI: ru, state: state, challenge: q.Get("code_challenge"), resource: o.f.resource}
		if o.cfg.Consent {
			o.showConsent(w, r, cl, req, "", http.StatusOK)
			return
		}
		o.issueCode(w, r, req, http.StatusFound)
	}
}

// isResource reports whether a resource parameter names this server.
func (o *oauthServer) isResource(v string) bool {
	u, err := url.Parse(v)
	if err != nil {
		return false
	}
	c, ok := canonicalResource(u)
	return ok && c == o.f.resource
}

// validChallenge: an S256 challenge is exactly 43 base64url characters.
func validChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	for i := 0; i < len(c); i++ {
		if !isB64URL(c[i]) {
			return false
		}
	}
	return true
}

// validVerifier: 43–128 unreserved characters (RFC 7636 §4.1).
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isB64URL(c) && c != '.' && c != '~' {
			return false
		}
	}
	return true
}

func isB64URL(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// pkceMatches compares S256(verifier) with the challenge in constant time.
func pkceMatches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

// authzErrorPage shows an error that must not be redirected.
func authzErrorPage(w http.ResponseWriter, code, desc string) {
	writeJSON(w, http.StatusBadRequest, errorBody{Error: code, Description: desc})
}

// redirectTo sends the user agent back to the client with params, state
// and iss (RFC 9207).
func (o *oauthServer) redirectTo(w http.ResponseWriter, redirectURI string, params url.Values, state string, status int) {
	u, err := url.Parse(redirectURI)
	if err != nil { // validated before; cannot happen
		authzErrorPage(w, "server_error", "bad redirect_uri")
		return
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if state != "" {
		q.Set("state", state)
	}
	q.Set("iss", o.f.origin)
	u.RawQuery = q.Encode()
	h := w.Header()
	h.Set("Location", u.String())
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
}

// issueCode mints an authorization code for req and redirects with it.
func (o *oauthServer) issueCode(w http.ResponseWriter, r *http.Request, req authzRequest, status int) {
	code, err := newSecret(o.f.rand)
	if err != nil {
		o.redirectTo(w, req.redirectURI, url.Values{"error": {"server_error"}}, req.state, status)
		return
	}
	now := o.f.now()
	err = o.store.AddPending(r.Context(), PendingCode, code.Digest(), req.pending(now.Add(o.cfg.CodeTTL)), now, o.cfg.MaxGrants)
	if err != nil && !errors.Is(err, ErrStoreFull) {
		o.f.log.LogAttrs(r.Context(), slog.LevelError, "auth: OAuth store unavailable", slog.String("error", err.Error()))
		o.redirectTo(w, req.redirectURI, url.Values{"error": {"temporarily_unavailable"}, "error_description": {"the OAuth state store is unavailable"}}, req.state, status)
		return
	}
	if err != nil {
		o.redirectTo(w, req.redirectURI, url.Values{"error": {"temporarily_unavailable"}, "error_description": {"too many pending authorizations"}}, req.state, status)
		return
	}
	o.f.log.LogAttrs(r.Context(), slog.LevelInfo, "auth: authorization code issued",
		slog.String("client", req.clientID), slog.String("remote", r.RemoteAddr))
	o.redirectTo(w, req.redirectURI, url.Values{"code": {code.Reveal()}}, req.state, status)
}

// ---- consent ----

const consentHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allow {{.Client}}?</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:3em auto;padding:0 1em}code{word-break:break-all}.err{color:#a00}button{margin-right:1em}</style>
</head><body>
<h1>Allow {{.Client}} to use {{.Service}}?</h1>
<p><strong>{{.Client}}</strong> asks for access to <code>{{.Resource}}</code>, which can run commands and read and write files on the machines this server reaches.</p>
<p>Access it would get: <code>{{.Scopes}}</code></p>
<p>When you decide, your browser goes to <strong>{{.RedirectHost}}</strong>.{{if .Loopback}} That is a program on the computer running this browser, not a website: allow only if you just started it.{{end}}</p>
{{if .Error}}<p class="err" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="consent" value="{{.ConsentID}}">
<p><label>Operator token (from the connection file)<br><input type="password" name="operator_token" autocomplete="off" required size="48"></label></p>
<p><button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button></p>
</form>
</body></html>
`

type consentView struct {
	Client, Service, Resource, Scopes, RedirectHost, Error, Action, ConsentID string
	Loopback                                                                  bool
}

// consentCSP forbids framing (clickjacking) and everything the page does
// not need. form-action is left out on purpose: browsers apply it to the
// redirect that follows the form post, which goes to the client.
const consentCSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"

// showConsent renders the consent page for req with a fresh single-use
// consent ID.
func (o *oauthServer) showConsent(w http.ResponseWriter, r *http.Request, cl *oauthClient, req authzRequest, msg string, status int) {
	id, err := newSecret(o.f.rand)
	if err != nil {
		authzErrorPage(w, "server_error", "no randomness")
		return
	}
	now := o.f.now()
	for _, d := range o.openConsent(req.clientID, id.Digest(), now.Add(consentTTL), now) {
		// Withdrawn: the oldest consent pages of this client.
		if _, _, err := o.store.TakeConsent(r.Context(), d, now); err != nil {
			o.storeDown(w, r, storeErr("withdraw consent", err))
			return
		}
	}
	err = o.store.AddPending(r.Context(), PendingConsent, id.Digest(), req.pending(now.Add(consentTTL)), now, o.cfg.MaxGrants)
	if err != nil {
		o.closeConsent(req.clientID, id.Digest())
	}
	if err != nil && !errors.Is(err, ErrStoreFull) {
		o.storeDown(w, r, err)
		return
	}
	if err != nil {
		o.redirectTo(w, req.redirectURI, url.Values{"error": {"temporarily_unavailable"}, "error_description": {"too many pending authorizations"}}, req.state, http.StatusFound)
		return
	}
	ru, _ := url.Parse(req.redirectURI)
	host, _, _ := splitHostPort(ru.Host)
	v := consentView{
		Client:       cl.name,
		Service:      o.f.cfg.Name,
		Resource:     req.resource,
		Scopes:       cl.scopes.String(),
		RedirectHost: ru.Host,
		Loopback:     isLoopbackHost(host),
		Error:        msg,
		Action:       authorizePath,
		ConsentID:    id.Reveal(),
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", consentCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if err := o.consent.Execute(w, v); err != nil {
		o.f.log.LogAttrs(r.Context(), slog.LevelError, "auth: consent page", slog.String("error", err.Error()))
	}
}

// openConsent notes consent page d of clientID, open until expires, and
// returns the oldest open pages of that client beyond MaxPendingConsents,
// which the caller withdraws from the store.
func (o *oauthServer) openConsent(clientID string, d Digest, expires, now time.Time) []Digest {
	o.mu.Lock()
	defer o.mu.Unlock()
	open := o.consents[clientID][:0]
	for _, c := range o.consents[clientID] {
		if now.Before(c.expires) {
			open = append(open, c)
		}
	}
	var withdraw []Digest
	for len(open) >= o.cfg.MaxPendingConsents {
		withdraw = append(withdraw, open[0].d)
		open = open[1:]
	}
	o.consents[clientID] = append(open, openConsent{d: d, expires: expires})
	return withdraw
}

// closeConsent forgets consent page d of clientID: answered, or never
// stored.
func (o *oauthServer) closeConsent(clientID string, d Digest) {
	o.mu.Lock()
	defer o.mu.Unlock()
	open := o.consents[clientID]
	for i, c := range open {
		if c.d == d {
			open = append(open[:i:i], open[i+1:]...)
			break
		}
	}
	if len(open) == 0 {
		delete(o.consents, clientID)
		return
	}
	o.consents[clientID] = open
}

// rateLimited answers 429 and reports true when the client address of r
// has used up its requests to this endpoint in t's window; otherwise it
// counts r and reports false.
func (o *oauthServer) rateLimited(w http.ResponseWriter, r *http.Request, t *throttle) bool {
	key, now := o.f.clientKey(r), o.f.now()
	if retry, blocked := t.blocked(key, now); blocked {
		o.f.rateLimit(w, r, retry)
		return true
	}
	t.fail(key, now)
	return false
}

// consentDecision handles the consent form: the consent ID is single-use;
// approval needs a static token with full scopes.
func (o *oauthServer) consentDecision(w http.ResponseWriter, r *http.Request) {
	// The throttle answers only a failing request: a valid operator token
	// is never refused for its address's earlier failures.
	key := o.f.clientKey(r)
	now := o.f.now()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		authzErrorPage(w, "invalid_request", "unreadable form")
		return
	}
	d := DigestOf(r.PostForm.Get("consent"))
	pend, ok, err := o.store.TakeConsent(r.Context(), d, now)
	if err != nil {
		o.storeDown(w, r, storeErr("take consent", err))
		return
	}
	if !ok {
		authzErrorPage(w, "invalid_request", "this consent page has expired, was withdrawn by a newer one or was already used; start again from the client")
		return
	}
	o.closeConsent(pend.ClientID, d)
	p := struct{ req authzRequest }{requestOf(pend)}
	cl, err := o.client(r.Context(), p.req.clientID)
	if err != nil {
		o.storeDown(w, r, err)
		return
	}
	if cl == nil {
		authzErrorPage(w, "invalid_client", "client no longer exists")
		return
	}
	switch r.PostForm.Get("decision") {
	case "deny":
		o.redirectTo(w, p.req.redirectURI, url.Values{"error": {"access_denied"}, "error_description": {"the operator denied the request"}}, p.req.state, http.StatusSeeOther)
	case "approve":
		if !o.f.isOperatorToken(r.PostForm.Get("operator_token"), now) {
			if o.f.refuseThrottled(w, r, key, now) {
				return
			}
			o.f.fail(r, key, now, "consent: operator token refused", "")
			o.showConsent(w, r, cl, p.req, "That token was not accepted. Use a token with full access.", http.StatusForbidden)
			return
		}
		o.f.event(r.Context(), Event{Type: EventConsent, ClientID: cl.id, RemoteAddr: r.RemoteAddr, Path: r.URL.Path})
		o.issueCode(w, r, p.req, http.StatusSeeOther)
	default:
		authzErrorPage(w, "invalid_request", "decision must be approve or deny")
	}
}

// isOperatorToken reports whether tok is a live static token with full
// scopes.
func (f *Front) isOperatorToken(tok string, now time.Time) bool {
	if !validToken68(tok) {
		return false
	}
	p, reason, err := f.lookupToken(context.Background(), tok, now)
	return err == nil && reason == "" && p.GrantID == "" && p.Scopes.IsFull()
}

// ---- token endpoint ----

// tokenError writes an RFC 6749 §5.2 error.
func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, status, errorBody{Error: code, Description: desc})
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

func (o *oauthServer) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	// The throttle answers only failing requests: a client
	// with valid credentials is never refused for its address's failures.
	key := o.f.clientKey(r)
	now := o.f.now()
	if r.URL.RawQuery != "" {
		tokenError(w, http.StatusBadRequest, "invalid_request", "parameters belong in the form body, not the URL")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		tokenError(w, http.StatusBadRequest, "invalid_request", "Content-Type must be application/x-www-form-urlencoded")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "unreadable form")
		return
	}
	form := r.PostForm
	for k, v := range form {
		if len(v) > 1 {
			tokenError(w, http.StatusBadRequest, "invalid_request", "repeated parameter "+k)
			return
		}
	}
	cl, basic, code, reason, err := o.authenticateClient(r, form)
	if err != nil {
		o.storeDown(w, r, err)
		return
	}
	if code != "" {
		if code == "invalid_client" {
			if o.f.refuseThrottled(w, r, key, now) {
				return
			}
			o.f.fail(r, key, now, "token endpoint: "+reason, "")
			if basic {
				w.Header().Set("WWW-Authenticate", `Basic realm="oauth"`)
			}
			tokenError(w, http.StatusUnauthorized, code, "client authentication failed")
			return
		}
		tokenError(w, http.StatusBadRequest, code, reason)
		return
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		o.exchangeCode(w, r, key, now, cl, form)
	case "refresh_token":
		o.refreshGrant(w, r, key, now, cl, form)
	case "":
		tokenError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "use authorization_code or refresh_token")
	}
}

// authenticateClient authenticates the client at the token endpoint by
// client_secret_basic, client_secret_post or, for a public client, its
// client_id alone. code is an OAuth error code when it fails; basic reports
// whether HTTP Basic was used (the 401 must then challenge Basic).
func (o *oauthServer) authenticateClient(r *http.Request, form url.Values) (cl *oauthClient, basic bool, code, reason string, err error) {
	id, secret := form.Get("client_id"), form.Get("client_secret")
	hasSecret := form.Has("client_secret")
	if vals := r.Header.Values("Authorization"); len(vals) > 0 {
		user, pass, ok := r.BasicAuth()
		if len(vals) != 1 || !ok {
			return nil, false, "invalid_client", "unsupported Authorization header", nil
		}
		uid, err1 := url.QueryUnescape(user)
		pw, err2 := url.QueryUnescape(pass)
		switch {
		case err1 != nil || err2 != nil:
			return nil, true, "invalid_client", "malformed Basic credentials", nil
		case hasSecret:
			return nil, true, "invalid_request", "use one client authentication method", nil
		case id != "" && id != uid:
			return nil, true, "invalid_request", "client_id does not match the Authorization header", nil
		}
		id, secret, hasSecret, basic = uid, pw, true, true
	}
	if id == "" {
		return nil, basic, "invalid_client", "no client_id", nil
	}
	cl, err = o.client(r.Context(), id)
	if err != nil {
		return nil, basic, "", "", err
	}
	switch {
	case cl == nil:
		equalSecret(secret, Digest{}) // same work as a known client
		return nil, basic, "invalid_client", "unknown client", nil
	case cl.confidential && !hasSecret:
		return nil, basic, "invalid_client", "client secret required", nil
	case cl.confidential && !equalSecret(secret, cl.secret):
		return nil, basic, "invalid_client", "wrong client secret", nil
	case !cl.confidential && hasSecret:
		return nil, basic, "invalid_client", "public client sent a secret", nil
	}
	return cl, basic, "", "", nil
}

// exchangeCode is the authorization_code grant. The code is deleted when it
// is looked up, so a failed exchange spends it too; presenting a spent code
// revokes the grant it produced (RFC 6749 §4.1.2).
func (o *oauthServer) exchangeCode(w http.ResponseWriter, r *http.Request, key string, now time.Time, cl *oauthClient, form url.Values) {
	code, verifier, redirect := form.Get("code"), form.Get("code_verifier"), form.Get("redirect_uri")
	switch {
	case code == "":
		tokenError(w, http.StatusBadRequest, "invalid_request", "code is required")
		return
	case redirect == "":
		tokenError(w, http.StatusBadRequest, "invalid_request", "redirect_uri is required")
		return
	case verifier == "":
		tokenError(w, http.StatusBadRequest, "invalid_request", "code_verifier is required (PKCE)")
		return
	}
	d := DigestOf(code)
	pend, ok, revoked, err := o.store.SpendCode(r.Context(), d, now, now.Add(spentCodeMemory))
	if err != nil {
		o.storeDown(w, r, storeErr("redeem code", err))
		return
	}
	if !ok {
		if revoked != nil {
			o.revoked(r, *revoked, "authorization code reused")
		}
		if o.f.refuseThrottled(w, r, key, now) {
			return
		}
		o.f.fail(r, key, now, "token endpoint: unknown or spent code", "")
		tokenError(w, http.StatusBadRequest, "invalid_grant", "the code is invalid, expired or already used")
		return
	}
	reason, errCode := "", "invalid_grant"
	switch {
	case !now.Before(pend.Expires):
		reason = "code expired"
	case pend.ClientID != cl.id:
		reason = "code issued to another client"
	case pend.RedirectURI != redirect:
		reason = "redirect_uri differs from the authorization request"
	case !validVerifier(verifier) || !pkceMatches(verifier, pend.Challenge):
		reason = "code_verifier does not match the challenge"
	case form.Has("resource") && !o.isResource(form.Get("resource")):
		reason, errCode = "resource is not this server", "invalid_target"
	}
	if reason != "" {
		if errCode == "invalid_grant" {
			if o.f.refuseThrottled(w, r, key, now) {
				return
			}
			o.f.fail(r, key, now, "token endpoint: "+reason, "")
		}
		tokenError(w, http.StatusBadRequest, errCode, reason)
		return
	}
	g, resp, err := o.newGrant(r.Context(), cl, pend.Resource, d, now)
	if err != nil {
		o.unavailable(w, r, err)
		return
	}
	o.f.log.LogAttrs(r.Context(), slog.LevelInfo, "auth: oauth grant issued",
		slog.String("client", cl.id), slog.String("grant", g.ID), slog.String("remote", r.RemoteAddr))
	o.f.event(r.Context(), Event{Type: EventGrant, Principal: grantPrincipal(cl.id, g.ID), ClientID: cl.id, GrantID: g.ID, RemoteAddr: r.RemoteAddr, Path: r.URL.Path})
	writeToken(w, resp)
}

// refreshGrant is the refresh_token grant with rotation: each refresh token
// works once; presenting a rotated one revokes the whole grant.
func (o *oauthServer) refreshGrant(w http.ResponseWriter, r *http.Request, key string, now time.Time, cl *oauthClient, form url.Values) {
	rt := form.Get("refresh_token")
	if rt == "" {
		tokenError(w, http.StatusBadRequest, "invalid_request", "refresh_token is required")
		return
	}
	if form.Has("resource") && !o.isResource(form.Get("resource")) {
		tokenError(w, http.StatusBadRequest, "invalid_target", "resource is not this server")
		return
	}
	toks, resp, err := o.mint(now)
	if err != nil {
		o.unavailable(w, r, err)
		return
	}
	g, res, err := o.store.Rotate(r.Context(), DigestOf(rt), cl.id, now, toks)
	if err != nil {
		o.storeDown(w, r, storeErr("rotate refresh token", err))
		return
	}
	var reason string
	switch res {
	case RotateUnknown:
		reason = "unknown refresh token"
	case RotateReused:
		reason = "refresh token reused"
	case RotateOtherClient:
		reason = "refresh token of another client"
	case RotateExpired:
		reason = "refresh token expired"
	}
	if reason != "" {
		if res == RotateReused || res == RotateOtherClient {
			o.revoked(r, g, reason)
		}
		if o.f.refuseThrottled(w, r, key, now) {
			return
		}
		o.f.fail(r, key, now, "token endpoint: "+reason, "")
		tokenError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is invalid, expired or already used")
		return
	}
	resp.Scope = g.Scopes.String()
	o.f.event(r.Context(), Event{Type: EventRefresh, Principal: grantPrincipal(g.ClientID, g.ID), ClientID: g.ClientID, GrantID: g.ID, RemoteAddr: r.RemoteAddr, Path: r.URL.Path})
	writeToken(w, resp)
}

// revoked logs and reports a revoked grant.
func (o *oauthServer) revoked(r *http.Request, g Grant, reason string) {
	o.f.log.LogAttrs(r.Context(), slog.LevelWarn, "auth: oauth grant revoked",
		slog.String("reason", reason), slog.String("client", g.ClientID), slog.String("grant", g.ID),
		slog.String("remote", r.RemoteAddr))
	o.f.event(r.Context(), Event{Type: EventRevoke, Principal: grantPrincipal(g.ClientID, g.ID), ClientID: g.ClientID, GrantID: g.ID, RemoteAddr: r.RemoteAddr, Path: r.URL.Path, Reason: reason})
}

func (o *oauthServer) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	var se *StoreError
	if errors.As(err, &se) {
		o.storeDown(w, r, err)
		return
	}
	o.f.log.LogAttrs(r.Context(), slog.LevelError, "auth: cannot issue token", slog.String("error", err.Error()))
	if errors.Is(err, ErrStoreFull) {
		w.Header().Set("Retry-After", "60")
		tokenError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "too many live grants")
		return
	}
	tokenError(w, http.StatusInternalServerError, "server_error", "cannot issue a token")
}

func writeToken(w http.ResponseWriter, resp tokenResponse) {
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, resp)
}

// newGrant creates a grant for cl, produced by code, and its first tokens.
func (o *oauthServer) newGrant(ctx context.Context, cl *oauthClient, resource string, code Digest, now time.Time) (Grant, tokenResponse, error) {
	id, err := newID(o.f.rand, 12)
	if err != nil {
		return Grant{}, tokenResponse{}, err
	}
	g := Grant{ID: id, ClientID: cl.id, Scopes: cl.scopes.clone(), Resource: resource}
	toks, resp, err := o.mint(now)
	if err != nil {
		return Grant{}, tokenResponse{}, err
	}
	if err := o.store.CreateGrant(ctx, g, code, toks, now, o.cfg.MaxGrants); err != nil {
		if errors.Is(err, ErrStoreFull) {
			return Grant{}, tokenResponse{}, err
		}
		return Grant{}, tokenResponse{}, storeErr("create grant", err)
	}
	resp.Scope = g.Scopes.String()
	return g, resp, nil
}

// mint makes an access and a refresh token: their digests for the store,
// the tokens themselves for the client.
func (o *oauthServer) mint(now time.Time) (Tokens, tokenResponse, error) {
	at, err := newSecret(o.f.rand)
	if err != nil {
		return Tokens{}, tokenResponse{}, err
	}
	rt, err := newSecret(o.f.rand)
	if err != nil {
		return Tokens{}, tokenResponse{}, err
	}
	t := Tokens{Access: at.Digest(), Refresh: rt.Digest(), AccessExpires: now.Add(o.cfg.AccessTTL), RefreshExpires: now.Add(o.cfg.RefreshTTL)}
	return t, tokenResponse{
		AccessToken:  at.Reveal(),
		TokenType:    "Bearer",
		ExpiresIn:    int64(o.cfg.AccessTTL / time.Second),
		RefreshToken: rt.Reveal(),
	}, nil
}

// grantPrincipal names the principal of one OAuth grant:
// "oauth:CLIENT/GRANT". Each grant is a principal of its own, so the users
// of one client cannot see or drive each other's processes, terminals,
// tasks or sessions, nor use up each other's limits.
func grantPrincipal(clientID, grantID string) string {
	return oauthPrefix + clientID + "/" + grantID
}

// lookupAccess finds the principal of an OAuth access token by digest. A
// hash-table (or index) lookup on a SHA-256 digest tells a timing observer
// nothing about any stored token: the attacker cannot choose the digest's
// bytes. An error of the store is returned as err: the caller refuses the
// request (fails closed) without counting it against the client.
func (o *oauthServer) lookupAccess(ctx context.Context, d Digest, now time.Time) (Principal, string, error) {
	g, expires, ok, err := o.store.Access(ctx, d)
	if err != nil {
		return Principal{}, "OAuth store unavailable", storeErr("check token", err)
	}
	if !ok {
		return Principal{}, "unknown token", nil
	}
	p := Principal{Name: grantPrincipal(g.ClientID, g.ID), ClientID: g.ClientID, GrantID: g.ID}
	switch {
	case !now.Before(expires):
		return p, "oauth token expired", nil
	case g.Resource != o.f.resource:
		return p, "oauth token for another resource", nil
	}
	p.Scopes = g.Scopes.clone()
	return p, "", nil
}

// grantLive reports whether grant id exists and has a live access or
// refresh token. A store that cannot answer counts as "no": fail closed.
func (o *oauthServer) grantLive(id string, now time.Time) bool {
	live, err := o.store.GrantLive(context.Background(), id, now)
	if err != nil {
		o.f.log.LogAttrs(context.Background(), slog.LevelError, "auth: OAuth store unavailable; grant counted as revoked",
			slog.String("grant", id), slog.String("error", err.Error()))
		return false
	}
	return live
}

// RevokeClient revokes every OAuth grant issued to clientID and returns how
// many there were. Tokens stop working at once (on every gateway sharing
// the store). It returns 0 when the store cannot be reached; the error is
// logged.
func (f *Front) RevokeClient(clientID string) int {
	if f.oauth == nil {
		return 0
	}
	ids, err := f.oauth.store.RevokeClient(context.Background(), clientID)
	if err != nil {
		f.log.LogAttrs(context.Background(), slog.LevelError, "auth: cannot revoke client: OAuth store unavailable",
			slog.String("client", clientID), slog.String("error", err.Error()))
		return 0
	}
	for _, id := range ids {
		f.log.LogAttrs(context.Background(), slog.LevelInfo, "auth: oauth grant revoked",
			slog.String("reason", "revoked by operator"), slog.String("client", clientID), slog.String("grant", id))
	}
	return len(ids)
}

// ---- dynamic client registration (RFC 7591) ----

type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
}

type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
}

func (o *oauthServer) serveRegister(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	// Only registrations made count, but a spent address is refused first.
	if retry, blocked := o.registrations.blocked(o.f.clientKey(r), o.f.now()); blocked {
		o.f.rateLimit(w, r, retry)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		tokenError(w, http.StatusBadRequest, "invalid_client_metadata", "Content-Type must be application/json")
		return
	}
	var req registrationRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxFormBytes))
	if err := dec.Decode(&req); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_client_metadata", "body is not a JSON client metadata document")
		return
	}
	if req.TokenEndpointAuthMethod == "" {
		req.TokenEndpointAuthMethod = "client_secret_basic"
	}
	if len(req.GrantTypes) == 0 {
		req.GrantTypes = []string{"authorization_code"}
	}
	if len(req.ResponseTypes) == 0 {
		req.ResponseTypes = []string{"code"}
	}
	switch req.TokenEndpointAuthMethod {
	case "none", "client_secret_basic", "client_secret_post":
	default:
		tokenError(w, http.StatusBadRequest, "invalid_client_metadata", "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post")
		return
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			tokenError(w, http.StatusBadRequest, "invalid_client_metadata", "grant_types may hold authorization_code and refresh_token only")
			return
		}
	}
	for _, t := range req.ResponseTypes {
		if t != "code" {
			tokenError(w, http.StatusBadRequest, "invalid_client_metadata", "response_types must be code")
			return
		}
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > maxRedirectURIs {
		tokenError(w, http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("send 1 to %d redirect_uris", maxRedirectURIs))
		return
	}
	for _, ru := range req.RedirectURIs {
		if !validRedirectURI(ru) {
			tokenError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect URIs must be https, or http on a loopback host")
			return
		}
	}
	name := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, req.ClientName)
	if len(name) > 200 {
		name = name[:200]
	}
	id, err := newID(o.f.rand, 16)
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error", "no randomness")
		return
	}
	cl := &oauthClient{id: id, name: name, redirects: append([]string(nil), req.RedirectURIs...), scopes: o.cfg.RegistrationScopes.clone()}
	if cl.name == "" {
		cl.name = id
	}
	now := o.f.now()
	resp := registrationResponse{
		ClientID:                id,
		ClientIDIssuedAt:        now.Unix(),
		RedirectURIs:            cl.redirects,
		ClientName:              cl.name,
		TokenEndpointAuthMethod: req.TokenEndpointAuthMethod,
		GrantTypes:              req.GrantTypes,
		ResponseTypes:           req.ResponseTypes,
	}
	if req.TokenEndpointAuthMethod != "none" {
		s, err := newSecret(o.f.rand)
		if err != nil {
			tokenError(w, http.StatusInternalServerError, "server_error", "no randomness")
			return
		}
		cl.secret, cl.confidential = s.Digest(), true
		never := int64(0)
		resp.ClientSecret, resp.ClientSecretExpiresAt = s.Reveal(), &never
	}
	err = o.store.AddClient(r.Context(), StoredClient{ID: id, Name: cl.name, Secret: cl.secret, Confidential: cl.confidential,
		RedirectURIs: cl.redirects, Scopes: cl.scopes, Registered: now, Expires: now.Add(o.cfg.UnusedClientTTL)}, o.cfg.MaxRegisteredClients)
	if err != nil && !errors.Is(err, ErrStoreFull) {
		o.storeDown(w, r, storeErr("register client", err))
		return
	}
	if err != nil {
		w.Header().Set("Retry-After", "3600")
		tokenError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the registration limit is reached")
		return
	}
	o.registrations.fail(o.f.clientKey(r), now)
	o.f.log.LogAttrs(r.Context(), slog.LevelInfo, "auth: oauth client registered",
		slog.String("client", id), slog.String("name", cl.name), slog.String("remote", r.RemoteAddr))
	o.f.event(r.Context(), Event{Type: EventRegister, ClientID: id, RemoteAddr: r.RemoteAddr, Path: r.URL.Path})
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusCreated, resp)
}
