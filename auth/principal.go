package auth

import "context"

// Transport names for [Principal.Transport]: the values of
// audit.TransportHTTP and audit.TransportStdio (auth imports nothing of
// the module, so they are not of that type).
const (
	TransportHTTP  = "http"
	TransportStdio = "stdio"
)

// Principal is who is calling: the identity [Front.RequireBearer] puts on
// the request context, and the one the root package checks scopes against
// and the audit ledger records.
type Principal struct {
	// Name is the token's name ("default" for the flag or variable token,
	// "oauth:CLIENT/GRANT" for an OAuth grant: one principal per grant,
	// "anonymous" with InsecureNoAuth), never its value.
	Name string
	// Transport is TransportHTTP or TransportStdio.
	Transport string
	// RemoteAddr is the peer address of the HTTP request, if any.
	RemoteAddr string
	// ClientID is the OAuth client the grant was issued to; empty for a
	// static token.
	ClientID string
	// GrantID identifies the OAuth grant (one authorization and all its
	// refreshes) without revealing any token; empty for a static token.
	GrantID string
	// Scopes is what the principal may do.
	Scopes Scopes
}

// contextKey is unexported so only this package can set or read the value.
type contextKey struct{}

// NewContext returns a copy of ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, contextKey{}, p)
}

// FromContext returns the Principal in ctx, if any. A missing Principal must
// be treated as "nobody": deny.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(contextKey{}).(Principal)
	return p, ok
}
