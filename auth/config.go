package auth

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Defaults, each stated again on the field it applies to.
const (
	DefaultSetupTokenTTL   = 15 * time.Minute
	DefaultFailureLimit    = 10
	DefaultFailureWindow   = time.Minute
	DefaultThrottleEntries = 10000
	DefaultCodeTTL         = 60 * time.Second
	DefaultAccessTTL       = time.Hour
	DefaultRefreshTTL      = 30 * 24 * time.Hour
	DefaultMaxGrants       = 10000
	DefaultMaxClients      = 100
	// DefaultRegistrationsPerAddr is how many dynamic registrations one
	// client address may make per hour.
	DefaultRegistrationsPerAddr = 10
	// DefaultAuthorizationsPerAddr is how many requests to
	// /oauth/authorize one client address may make per minute.
	DefaultAuthorizationsPerAddr = 30
	// DefaultMaxPendingConsents is how many consent pages may be open at
	// once for one client.
	DefaultMaxPendingConsents = 8
	// DefaultUnusedClientTTL is how long a dynamic registration lives
	// without obtaining a grant.
	DefaultUnusedClientTTL = time.Hour
)

// MinTokenLen is the shortest static token [New] accepts, in bytes. A
// shorter one can be guessed, and output masking (package redact) cannot
// tell it from ordinary text. Tokens given as a Digest are not checked:
// their length is unknown.
const MinTokenLen = 16

// Config configures a [Front]. New copies it and fills in defaults; the
// caller's value is never modified. Security settings have no defaults: a
// Config that names no credential, no listener or no resource URL is an
// error, never an open door.
type Config struct {
	// Tokens are the static bearer tokens. At least one token, an OAuth
	// server, or InsecureNoAuth is required.
	Tokens []Token

	// InsecureNoAuth turns bearer authentication off: RequireBearer lets
	// every request through as the principal "anonymous" with full scopes.
	// New refuses it unless Listener is a loopback address, and refuses it
	// together with Tokens or OAuth. The Host and Origin checks still run.
	InsecureNoAuth bool

	// Listener is the address the server is bound to ("127.0.0.1:8765").
	// Required. It decides which Host values are accepted and whether
	// InsecureNoAuth is allowed. A wildcard ("0.0.0.0:8765", ":8765") counts
	// as non-loopback. If its port is 0 (not yet bound), loopback Host
	// values are accepted on any port; pass the bound address when known.
	Listener string

	// AllowedOrigins are extra browser origins ("https://app.example.com")
	// accepted besides this server's own origins (that of ResourceURL and,
	// with a known listener port, http://localhost:PORT, http://127.0.0.1:PORT
	// and http://[::1]:PORT). "*" and "null" are refused.
	AllowedOrigins []string

	// AllowedHosts are extra Host header values accepted besides the
	// loopback names (on the listener's port), ResourceURL's host (on its
	// port if the URL names one, else on any port) and, on a non-loopback
	// listener, IP literals. An entry "name" accepts any port, "name:port"
	// only that port. Put a tunnel or reverse-proxy hostname here.
	AllowedHosts []string

	// CORS, when true, answers browser preflights and sets
	// Access-Control-Allow-Origin to the request's Origin when that Origin
	// is allowed. Off by default: no CORS header is ever sent. "*" is never
	// sent, and credentials are never allowed (bearer tokens travel in a
	// header, not a cookie).
	CORS bool

	// ResourceURL is the canonical URL of the MCP endpoint
	// ("https://rigout.example.com/mcp"). Required. It is the audience of
	// OAuth tokens (RFC 8707), the "resource" of the protected-resource
	// metadata (RFC 9728), and its origin is the OAuth issuer. It must be
	// https unless its host is loopback.
	ResourceURL string

	// OAuth configures the built-in authorization server. Nil means none:
	// the OAuth routes are not served.
	OAuth *OAuthConfig

	// SetupToken, if set, is a one-shot credential for GET /connection.json:
	// it works once and expires SetupTokenTTL after New (or after
	// [Front.NewSetupToken]), on the monotonic clock. Requires
	// ConnectionData.
	SetupToken Secret

	// SetupTokenTTL is the setup token's lifetime. If zero, 15 minutes.
	SetupTokenTTL time.Duration

	// ConnectionData returns what GET /connection.json serves (the MCP URL
	// and the Authorization header, typically), encoded as JSON. Nil means
	// the route is not served.
	ConnectionData func() any

	// Name and Version describe the service in the registry card. If
	// empty, "rigout" and "devel".
	Name, Version string

	// Throttle limits failed credential attempts per client address.
	Throttle ThrottleConfig

	// ClientAddr returns the address failures are counted against. If nil,
	// the IP of the request's RemoteAddr is used (the /64 prefix for IPv6).
	// Behind a trusted reverse proxy, return the address the proxy vouches
	// for; never trust a client-supplied header without one.
	ClientAddr func(r *http.Request) string

	// OnEvent, if set, is called for every security decision worth an audit
	// row (see [Event]): refusals and approvals alike, told apart by
	// [Event.Refused]. It is called synchronously on the request path and
	// must not block; it must not retain the request.
	OnEvent func(ctx context.Context, e Event)

	// Logger receives operator logs. If nil, logs are discarded. Secrets
	// never reach it.
	Logger *slog.Logger

	// Now returns the current time. If nil, time.Now. Deadlines are
	// computed with Time.Sub and Time.Before, which use the monotonic clock
	// when the times carry one (time.Now's do).
	Now func() time.Time

	// Rand is the source of every token, code and identifier. If nil,
	// crypto/rand.Reader.
	Rand io.Reader
}

// Token is a static bearer token and what it may do.
type Token struct {
	// Name identifies the token in the audit ledger and logs. Required and
	// unique; "anonymous" and names starting "oauth:" are reserved.
	Name string
	// Secret is the token value, at least MinTokenLen bytes. Set either
	// Secret or Digest, not both. The value is hashed by New and not kept.
	Secret Secret
	// Digest is the token's SHA-256 digest, for configuration files that
	// must not hold the token itself.
	Digest Digest
	// Scopes is what the token may do.
	Scopes Scopes
	// Expires, if non-zero, is when the token stops working.
	Expires time.Time
}

// ThrottleConfig limits failed credential attempts. An address that fails
// Failures times within Window is answered 429 with Retry-After until the
// window ends for every request to the bearer endpoint or /connection.json
// whose credential is missing or wrong; other addresses are not affected.
//
// A valid credential is accepted even from a throttled address: every local
// process shares 127.0.0.1, and a throttle that refused valid tokens would
// let any of them lock the real client out. The throttle therefore does
// not stop an address from trying guesses: it tells a failing client to
// back off and marks the address in the audit trail ([EventThrottled]).
// What keeps brute force out is the tokens themselves: use
// [GenerateToken]'s 256-bit tokens, not short ones. (The OAuth consent
// form and token endpoint still refuse a throttled address before looking
// at what it sent.)
type ThrottleConfig struct {
	// Failures allowed per window. If zero, 10.
	Failures int
	// Window is the counting window. If zero, one minute.
	Window time.Duration
	// MaxAddresses bounds the table of addresses. When it is full, the
	// address that failed least recently is forgotten. If zero, 10000.
	MaxAddresses int
}

// OAuthConfig configures the OAuth 2.1 authorization server: authorization
// code grant with PKCE S256 only, refresh tokens that rotate, opaque access
// tokens stored as digests.
//
// Authorizing a client hands out machine access, so exactly one of Consent
// and InsecureAutoApprove must be set: New will not guess.
type OAuthConfig struct {
	// Clients are the pre-registered clients.
	Clients []Client

	// Consent shows a consent page at /oauth/authorize. Approving requires
	// the operator to enter a static token with full scopes, so a stranger
	// who can reach the server cannot grant themselves access. The page is
	// served with frame-ancestors 'none' and names the redirect host.
	Consent bool

	// InsecureAutoApprove issues a code to every valid authorization
	// request without asking anyone. Anyone who can drive a registered
	// client against this server then obtains that client's scopes: use it
	// only where reaching the server is itself the proof (loopback), or
	// where every registered redirect URI is controlled by the operator.
	InsecureAutoApprove bool

	// AllowRegistration enables dynamic client registration (RFC 7591) at
	// /oauth/register. Registered clients get RegistrationScopes. Requires
	// Consent.
	AllowRegistration bool

	// RegistrationScopes are the scopes of dynamically registered clients.
	RegistrationScopes Scopes

	// MaxRegisteredClients bounds dynamic registrations. If zero, 100.
	MaxRegisteredClients int

	// RegistrationsPerAddr is how many dynamic registrations one client
	// address (Config.ClientAddr) may make per hour; more get 429. If
	// zero, 10.
	RegistrationsPerAddr int

	// UnusedClientTTL is how long a dynamic registration lives without
	// obtaining a grant: after it, the client is unknown and its slot is
	// free again. A client that obtained a grant is kept. If zero, one
	// hour. (The in-memory store and auth/pgstore free the slot; a store
	// that does not keep StoredClient.Expires keeps registrations forever.)
	UnusedClientTTL time.Duration

	// AuthorizationsPerAddr is how many requests to /oauth/authorize (the
	// consent page and its form) one client address may make per minute;
	// more get 429. If zero, 30.
	AuthorizationsPerAddr int

	// MaxPendingConsents is how many consent pages may be open at once for
	// one client; a new one withdraws the oldest, so a flood of
	// authorization requests cannot fill the pending table for everyone.
	// If zero, 8.
	MaxPendingConsents int

	// CodeTTL is the authorization code lifetime. If zero, 60 seconds;
	// at most 10 minutes.
	CodeTTL time.Duration

	// AccessTTL is the access token lifetime. If zero, one hour.
	AccessTTL time.Duration

	// RefreshTTL is the refresh token lifetime. If zero, 30 days.
	RefreshTTL time.Duration

	// MaxGrants bounds live grants (and pending codes). When full, new
	// grants are refused with 503 until old ones expire. If zero, 10000.
	MaxGrants int

	// Store holds registered clients, pending codes, grants and tokens
	// (as digests). If nil, [NewMemoryStore]: state is per process. Give
	// several gateways one shared store (package auth/pgstore) and a token
	// issued by one is accepted by all, and a reused refresh token revokes
	// its grant everywhere. The configured Clients are not stored: give
	// every gateway the same list.
	Store OAuthStore
}

// Client is a pre-registered OAuth client.
type Client struct {
	// ID is the client_id. Required and unique.
	ID string
	// Name is shown on the consent page. If empty, ID.
	Name string
	// Secret makes the client confidential (client_secret_basic or
	// client_secret_post). Set Secret or SecretDigest, or neither for a
	// public client, which authenticates with PKCE alone.
	Secret Secret
	// SecretDigest is the SHA-256 digest of the client secret.
	SecretDigest Digest
	// RedirectURIs are matched exactly, except that for an http loopback
	// redirect (127.0.0.1, [::1] or localhost) any port is accepted
	// (RFC 8252 §7.3). Each must be https or http on loopback.
	RedirectURIs []string
	// Scopes are what tokens issued to this client may do.
	Scopes Scopes
}
