package auth

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Front is the HTTP trust boundary: Host and Origin checks, bearer tokens
// with scopes, failure throttling, the setup token and /connection.json,
// the RFC 9728 and RFC 8414 metadata, and the OAuth 2.1 authorization
// server.
//
// Compose it, in this order, before any JSON is parsed:
//
//	[Front.Guard] → [Front.RequireBearer] → body cap → MCP handler
//
// (the bearer check needs only the headers, so no stranger's body is read)
// and mount [Front.Routes] behind a smaller body cap and [Front.Guard].
// [Front.Handler] does both for a single MCP handler.
//
// A Front is safe for concurrent use. It starts no goroutines and needs no
// Close: expired entries are swept on the write path.
type Front struct {
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	rand   io.Reader
	noAuth bool

	loopback   bool   // the listener is loopback
	listenPort string // "" when unknown
	resource   string // canonical ResourceURL
	mcpPath    string // path of ResourceURL, "/" when empty
	origin     string // scheme://host[:port] of ResourceURL, the OAuth issuer
	prmPath    string // path of the protected-resource metadata for ResourceURL
	prmURL     string // absolute URL of that document

	hosts   []hostRule
	origins map[string]bool

	tokens   []staticToken
	throttle *throttle
	oauth    *oauthServer // nil without OAuth

	// mu protects the following.
	mu       sync.Mutex
	revoked  map[string]bool // static token names
	setup    Digest
	setupEnd time.Time
	setupOn  bool
}

// staticToken is a configured token, hashed.
type staticToken struct {
	name    string
	digest  Digest
	scopes  Scopes
	expires time.Time
}

// Reserved principal names.
const (
	anonymousName = "anonymous"
	oauthPrefix   = "oauth:"
)

// New validates cfg and returns a Front. Missing security configuration is
// an error: no credential at all ([ErrNoCredentials]), InsecureNoAuth off
// loopback ([ErrNoAuthNotLoopback]), no Listener, no ResourceURL, OAuth
// without an approval mode. Other problems are [*ConfigError]s.
func New(cfg Config) (*Front, error) {
	c := cfg
	c.setDefaults()
	f := &Front{
		cfg:     c,
		log:     c.Logger,
		now:     c.Now,
		rand:    c.Rand,
		noAuth:  c.InsecureNoAuth,
		revoked: make(map[string]bool),
	}
	if err := f.initListener(); err != nil {
		return nil, err
	}
	if err := f.initResource(); err != nil {
		return nil, err
	}
	if err := f.initTokens(); err != nil {
		return nil, err
	}
	if err := f.initHostsAndOrigins(); err != nil {
		return nil, err
	}
	f.throttle = newThrottle(c.Throttle)
	if c.OAuth != nil {
		o, err := newOAuthServer(f, *c.OAuth)
		if err != nil {
			return nil, err
		}
		f.oauth = o
	}
	if _, clash := f.Routes()[f.mcpPath]; clash {
		return nil, &ConfigError{Field: "ResourceURL", Reason: "its path " + f.mcpPath + " is one of the routes this package serves"}
	}
	switch {
	case f.noAuth && (len(f.tokens) > 0 || f.oauth != nil):
		return nil, &ConfigError{Field: "InsecureNoAuth", Reason: "set together with tokens or OAuth"}
	case f.noAuth && !f.loopback:
		return nil, fmt.Errorf("listener %s: %w", c.Listener, ErrNoAuthNotLoopback)
	case !f.noAuth && len(f.tokens) == 0 && f.oauth == nil:
		return nil, ErrNoCredentials
	}
	if !c.SetupToken.IsZero() {
		if c.ConnectionData == nil {
			return nil, &ConfigError{Field: "SetupToken", Reason: "set without ConnectionData: it would protect nothing"}
		}
		f.setup = c.SetupToken.Digest()
		f.setupEnd = f.now().Add(c.SetupTokenTTL)
		f.setupOn = true
	}
	f.cfg.SetupToken = Secret{} // keep only the digest
	for i := range f.cfg.Tokens {
		f.cfg.Tokens[i] = Token{}
	}
	f.cfg.Tokens = nil
	if f.noAuth {
		f.log.LogAttrs(context.Background(), slog.LevelWarn, "auth: bearer authentication is off (InsecureNoAuth)",
			slog.String("listener", c.Listener))
	}
	return f, nil
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	if c.SetupTokenTTL <= 0 {
		c.SetupTokenTTL = DefaultSetupTokenTTL
	}
	if c.Name == "" {
		c.Name = "rigout"
	}
	if c.Version == "" {
		c.Version = "devel"
	}
	if c.Throttle.Failures <= 0 {
		c.Throttle.Failures = DefaultFailureLimit
	}
	if c.Throttle.Window <= 0 {
		c.Throttle.Window = DefaultFailureWindow
	}
	if c.Throttle.MaxAddresses <= 0 {
		c.Throttle.MaxAddresses = DefaultThrottleEntries
	}
	// Copy slices the Front keeps, so the caller cannot change them later.
	c.Tokens = append([]Token(nil), c.Tokens...)
	c.AllowedHosts = append([]string(nil), c.AllowedHosts...)
	c.AllowedOrigins = append([]string(nil), c.AllowedOrigins...)
	if c.OAuth != nil {
		o := *c.OAuth
		o.Clients = append([]Client(nil), o.Clients...)
		c.OAuth = &o
	}
}

func (f *Front) initListener() error {
	l := f.cfg.Listener
	if l == "" {
		return &ConfigError{Field: "Listener", Reason: "required: the bind address decides which Host values are safe"}
	}
	h, p, err := net.SplitHostPort(l)
	if err != nil || !validPort(p) {
		return &ConfigError{Field: "Listener", Reason: "not host:port", Err: err}
	}
	f.loopback = isLoopbackHost(strings.ToLower(h))
	if p != "0" {
		f.listenPort = p
	}
	return nil
}

func (f *Front) initResource() error {
	raw := f.cfg.ResourceURL
	if raw == "" {
		return &ConfigError{Field: "ResourceURL", Reason: "required: the canonical URL of the MCP endpoint"}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return &ConfigError{Field: "ResourceURL", Reason: "not a URL", Err: err}
	}
	canon, ok := canonicalResource(u)
	if !ok {
		return &ConfigError{Field: "ResourceURL", Reason: "must be an absolute http or https URL without query, fragment or user info, with a plain path"}
	}
	if u.Scheme != "https" && !IsLoopback(u.Host) && f.cfg.OAuth != nil {
		return &ConfigError{Field: "ResourceURL", Reason: "OAuth needs https unless the host is loopback"}
	}
	f.resource = canon
	cu, _ := url.Parse(canon)
	f.origin = cu.Scheme + "://" + cu.Host
	f.mcpPath = cu.Path
	if f.mcpPath == "" {
		f.mcpPath = "/"
	}
	f.prmPath = "/.well-known/oauth-protected-resource"
	if cu.Path != "" && cu.Path != "/" {
		f.prmPath += cu.Path
	}
	f.prmURL = f.origin + f.prmPath
	return nil
}

// canonicalResource returns the canonical form of a resource URL: scheme and
// host in lower case, default port dropped, no trailing slash, nothing after
// the path. ok is false for anything that cannot be a resource identifier.
func canonicalResource(u *url.URL) (string, bool) {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" ||
		u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "" {
		return "", false
	}
	host, port, ok := splitHostPort(u.Host)
	if !ok || !validHostname(host) {
		return "", false
	}
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	p := u.EscapedPath()
	if strings.IndexFunc(p, func(r rune) bool {
		return !(r == '/' || r == '-' || r == '.' || r == '_' || r == '~' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) >= 0 || strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
		strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") {
		return "", false
	}
	p = strings.TrimSuffix(p, "/")
	return u.Scheme + "://" + joinHostPort(host, port) + p, true
}

// joinHostPort brackets IPv6 literals; port may be empty.
func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" {
		return host
	}
	return host + ":" + port
}

// validHostname accepts an IP literal or a DNS name of letters, digits,
// hyphens and inner dots. It refuses a trailing dot, which makes
// "localhost." a different origin from "localhost".
func validHostname(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return !strings.Contains(h, "%")
	}
	if h == "" || len(h) > 253 || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return false
	}
	for _, r := range h {
		if !(r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

func (f *Front) initTokens() error {
	seen := map[string]bool{}
	for i, t := range f.cfg.Tokens {
		field := fmt.Sprintf("Tokens[%d]", i)
		switch {
		case t.Name == "":
			return &ConfigError{Field: field + ".Name", Reason: "required"}
		case t.Name == anonymousName || strings.HasPrefix(t.Name, oauthPrefix):
			return &ConfigError{Field: field + ".Name", Reason: "reserved name " + t.Name}
		case seen[t.Name]:
			return &ConfigError{Field: field + ".Name", Reason: "duplicate name " + t.Name}
		case t.Secret.IsZero() == t.Digest.IsZero():
			return &ConfigError{Field: field, Reason: "set exactly one of Secret and Digest"}
		case !t.Secret.IsZero() && len(t.Secret.Reveal()) < MinTokenLen:
			return &ConfigError{Field: field + ".Secret", Reason: fmt.Sprintf("too short: %d bytes, a token needs at least %d (for example `openssl rand -hex 32`)", len(t.Secret.Reveal()), MinTokenLen)}
		}
		if err := t.Scopes.validate(); err != nil {
			return &ConfigError{Field: field + ".Scopes", Reason: "invalid", Err: err}
		}
		seen[t.Name] = true
		d := t.Digest
		if !t.Secret.IsZero() {
			d = t.Secret.Digest()
		}
		f.tokens = append(f.tokens, staticToken{name: t.Name, digest: d, scopes: t.Scopes.clone(), expires: t.Expires})
	}
	return nil
}

// ResourceURL returns the canonical resource URL (the audience of tokens).
func (f *Front) ResourceURL() string { return f.resource }

// ResourceMetadataURL returns the URL of the RFC 9728 protected-resource
// metadata document, the value of resource_metadata in challenges.
func (f *Front) ResourceMetadataURL() string { return f.prmURL }

// Handler composes the whole front for one MCP handler: [Front.Guard]
// around a mux holding [Front.Routes] and, at ResourceURL's path,
// [Front.RequireBearer] around mcp. It does not cap request bodies: wrap it
// in your body limit (the transport answers 413).
func (f *Front) Handler(mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	for p, h := range f.Routes() {
		mux.Handle(p, h)
	}
	mux.Handle(f.mcpPath, f.RequireBearer(mcp))
	return f.Guard(mux)
}

// RevokeToken makes the static token name stop working at once, and reports
// whether such a token exists. Revocation lasts for the life of the Front.
func (f *Front) RevokeToken(name string) bool {
	found := false
	for _, t := range f.tokens {
		if t.name == name {
			found = true
		}
	}
	if !found {
		return false
	}
	f.mu.Lock()
	f.revoked[name] = true
	f.mu.Unlock()
	f.log.LogAttrs(context.Background(), slog.LevelInfo, "auth: token revoked", slog.String("token", name))
	return true
}

// Valid reports whether the credential behind p still works: the static
// token exists, is not revoked and has not expired, or the OAuth grant has
// not been revoked and still holds a live token. Long-lived work started by
// p (a terminal session) can poll it and stop when it turns false.
func (f *Front) Valid(p Principal) bool {
	now := f.now()
	if p.GrantID != "" {
		return f.oauth != nil && f.oauth.grantLive(p.GrantID, now)
	}
	if f.noAuth {
		return p.Name == anonymousName
	}
	for _, t := range f.tokens {
		if t.name != p.Name {
			continue
		}
		f.mu.Lock()
		revoked := f.revoked[t.name]
		f.mu.Unlock()
		return !revoked && (t.expires.IsZero() || now.Before(t.expires))
	}
	return false
}

// event reports a security decision to OnEvent.
func (f *Front) event(ctx context.Context, e Event) {
	if f.cfg.OnEvent != nil {
		f.cfg.OnEvent(ctx, e)
	}
}

// clientKey is the address failures are counted against.
func (f *Front) clientKey(r *http.Request) string {
	if f.cfg.ClientAddr != nil {
		return f.cfg.ClientAddr(r)
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		if a, err2 := netip.ParseAddr(r.RemoteAddr); err2 == nil {
			ap = netip.AddrPortFrom(a, 0)
		} else {
			return r.RemoteAddr
		}
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		// One host usually owns a whole /64; count it as one address.
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// RequireBearer wraps next so it runs only for a request with a valid bearer
// token in its one Authorization header: "Bearer" in any case, spaces or
// tabs, then the token (RFC 9110 §11.4, RFC 6750 §2.1). The Principal goes
// on the request context ([FromContext]) and the Authorization header is
// removed from the request next sees, so the token cannot be passed on by
// accident.
//
// The credential is checked first, and a valid one is always accepted,
// whatever the throttle says: every local process shares 127.0.0.1, so
// counting failures per address must not let one of them lock the real
// client out. Otherwise it answers, without calling next:
//   - 429 with Retry-After when the client address has failed too often
//     (a request without any credential does not count as a failure, but
//     is refused like a wrong one from a throttled address);
//   - 401 with WWW-Authenticate: Bearer (error="invalid_token" when a
//     credential was sent) and resource_metadata, Cache-Control: no-store,
//     and a JSON body that does not say what was wrong.
//
// A token in the query string (access_token=…) is refused even when it is
// valid, and so is a request carrying one beside a valid header.
func (f *Front) RequireBearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.noAuth {
			p := Principal{Name: anonymousName, Transport: TransportHTTP, RemoteAddr: r.RemoteAddr, Scopes: FullScopes()}
			next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), p)))
			return
		}
		key := f.clientKey(r)
		now := f.now()
		p, reason, sent, err := f.authenticateRequest(r, now)
		if err != nil {
			f.cannotCheck(w, r, err)
			return
		}
		if reason != "" {
			if f.refuseThrottled(w, r, key, now) {
				return
			}
			if sent {
				f.fail(r, key, now, reason, p.Name)
			} else {
				f.noCredentials(r)
			}
			f.unauthorized(w, sent)
			return
		}
		r2 := r.WithContext(NewContext(r.Context(), p))
		r2.Header = r.Header.Clone()
		r2.Header.Del("Authorization")
		next.ServeHTTP(w, r2)
	})
}

// cannotCheck refuses a request whose token could not be checked because
// the OAuth store is unavailable: 503 with Retry-After, logged. It fails
// closed and does not count against the client: its token may be fine.
func (f *Front) cannotCheck(w http.ResponseWriter, r *http.Request, err error) {
	f.log.LogAttrs(r.Context(), slog.LevelError, "auth: token not checked, request refused", slog.String("error", err.Error()),
		slog.String("remote", r.RemoteAddr), slog.String("path", r.URL.Path))
	w.Header().Set("Retry-After", "5")
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "temporarily_unavailable", Description: "the OAuth state store is unavailable, so the token cannot be checked; try again shortly"})
}

// authenticateRequest checks the request's bearer credential. reason is ""
// on success; otherwise it says why, for the log only. sent reports whether
// the client sent any credential. On failure p may carry the token name
// (expired or revoked tokens), never its value.
func (f *Front) authenticateRequest(r *http.Request, now time.Time) (p Principal, reason string, sent bool, err error) {
	vals := r.Header.Values("Authorization")
	queryToken := r.URL.Query().Has("access_token")
	sent = len(vals) > 0 || queryToken
	if queryToken {
		return Principal{}, "token in query string", sent, nil
	}
	tok, ok := parseBearer(vals)
	if !ok {
		if len(vals) == 0 {
			return Principal{}, "no credentials", sent, nil
		}
		return Principal{}, "malformed Authorization header", sent, nil
	}
	p, reason, err = f.lookupToken(r.Context(), tok, now)
	if err != nil || reason != "" {
		return p, reason, sent, err
	}
	p.Transport = TransportHTTP
	p.RemoteAddr = r.RemoteAddr
	return p, "", sent, nil
}

// lookupToken finds the principal for a bearer token value. Static tokens
// are compared digest against digest in constant time, every one of them,
// with no early exit. OAuth access tokens are found by digest.
func (f *Front) lookupToken(ctx context.Context, tok string, now time.Time) (Principal, string, error) {
	d := DigestOf(tok)
	match := -1
	for i := range f.tokens {
		if f.tokens[i].digest.Equal(d) {
			match = i
		}
	}
	if match >= 0 {
		t := f.tokens[match]
		p := Principal{Name: t.name}
		f.mu.Lock()
		revoked := f.revoked[t.name]
		f.mu.Unlock()
		if revoked {
			return p, "token revoked", nil
		}
		if !t.expires.IsZero() && !now.Before(t.expires) {
			return p, "token expired", nil
		}
		p.Scopes = t.scopes.clone()
		return p, "", nil
	}
	if f.oauth != nil {
		return f.oauth.lookupAccess(ctx, d, now)
	}
	return Principal{}, "unknown token", nil
}

// refuseThrottled answers 429 and reports true if key has failed too often.
// Call it only once the request's credential has been found missing or
// wrong: a valid credential is never throttled.
func (f *Front) refuseThrottled(w http.ResponseWriter, r *http.Request, key string, now time.Time) bool {
	retry, blocked := f.throttle.blocked(key, now)
	if blocked {
		f.tooManyRequests(w, r, retry)
	}
	return blocked
}

// fail records a failed credential attempt: it counts against key in the
// throttle, is logged, and is reported as an [EventDenied].
func (f *Front) fail(r *http.Request, key string, now time.Time, reason, principal string) {
	f.throttle.fail(key, now)
	f.log.LogAttrs(r.Context(), slog.LevelWarn, "auth: credential refused",
		slog.String("reason", reason),
		slog.String("principal", principal),
		slog.String("remote", r.RemoteAddr),
		slog.String("path", r.URL.Path))
	f.event(r.Context(), Event{Type: EventDenied, Principal: principal, RemoteAddr: r.RemoteAddr, Path: r.URL.Path, Reason: reason})
}

// noCredentials notes a request that sent no credential at all. It guesses
// nothing, so it is not counted against the address (MCP clients probe
// without a token to discover the authorization server), and it is not an
// audit event.
func (f *Front) noCredentials(r *http.Request) {
	f.log.LogAttrs(r.Context(), slog.LevelDebug, "auth: no credentials",
		slog.String("remote", r.RemoteAddr), slog.String("path", r.URL.Path))
}

// maxTokenLen bounds the token accepted from a header; ours are 43 bytes.
const maxTokenLen = 1024

// parseBearer extracts the token from the Authorization header values. It
// accepts exactly one header holding the scheme "Bearer" in any case (auth
// schemes are case-insensitive, RFC 9110 §11.1), one or more spaces or
// tabs, and a token68 (RFC 9110 §11.2; RFC 6750 §2.1 calls it b64token):
// letters, digits and -._~+/ with optional trailing '='. RFC 9110 §11.4
// separates scheme and token with 1*SP; tabs are tolerated as well, and
// whitespace around the whole value is not part of it (RFC 9110 §5.5).
// Anything else is refused: no token, a second token or parameter, a
// comma-separated list, another scheme, a token over maxTokenLen.
func parseBearer(vals []string) (string, bool) {
	if len(vals) != 1 {
		return "", false
	}
	v := strings.Trim(vals[0], " \t")
	const scheme = "bearer"
	if len(v) <= len(scheme) || !equalFoldASCII(v[:len(scheme)], scheme) {
		return "", false
	}
	rest := v[len(scheme):]
	tok := strings.TrimLeft(rest, " \t")
	if len(tok) == len(rest) {
		return "", false // no separator: "Bearerabc" is another scheme
	}
	if !validToken68(tok) {
		return "", false
	}
	return tok, true
}

// equalFoldASCII reports whether s and lower are equal, ignoring the case
// of ASCII letters. lower must be lower case. Unlike strings.EqualFold it
// folds nothing else, so no non-ASCII rune can stand in for a letter.
func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// validToken68 reports whether tok is a non-empty token68 of at most
// maxTokenLen bytes: letters, digits and -._~+/, then optional '='
// padding, which cannot be all of it.
func validToken68(tok string) bool {
	if tok == "" || len(tok) > maxTokenLen || tok[0] == '=' {
		return false
	}
	eq := false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c == '=':
			eq = true
		case eq:
			return false // '=' only as trailing padding
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
