// Package auth is rigout's HTTP trust boundary: the checks that run before
// any JSON is parsed, and the identity every tool call is authorised and
// audited against.
//
// # Overview
//
// One credential separates a stranger from a shell on every machine the
// gateway reaches, so this package is strict where it can be:
//
//   - [Front.Guard] refuses, with 403 and before anything else runs, a Host
//     header this server does not answer to (DNS rebinding: a loopback
//     listener accepts only loopback names on its own port) and an Origin
//     header that is present and not allowed. No CORS header is sent unless
//     [Config].CORS is set, and never "*".
//   - [Front.RequireBearer] accepts one "Authorization: Bearer TOKEN"
//     header (the scheme in any case, RFC 9110 §11.1), never a token in the
//     query string. Tokens are stored as SHA-256
//     [Digest]s and compared in constant time. Failure is a 401 with
//     WWW-Authenticate (error="invalid_token" when a credential was sent,
//     and resource_metadata), Cache-Control: no-store and a body that does
//     not say what was wrong. An address that keeps failing gets 429 with
//     Retry-After, while other addresses are not slowed; a valid token is
//     accepted even from that address (every local process shares
//     127.0.0.1, and none may lock the real client out).
//   - A token has a name and [Scopes]: tool globs, host globs, file roots,
//     read-only, may bypass the command policy, may open terminals. The
//     [Principal] (the token's name, never its value) travels on the request
//     context to the tool middleware, which checks [Scopes.RequireTool] and
//     friends and turns a [*ScopeError] into an error result naming the
//     missing scope; [Front.WriteInsufficientScope] is the HTTP-level 403.
//   - GET /connection.json hands an agent its connection data for a
//     full-scope bearer token or a setup token ([Front.NewSetupToken]) that
//     works once and expires after 15 minutes on the monotonic clock.
//   - An OAuth 2.1 authorization server for clients that need the handshake:
//     RFC 9728 and RFC 8414 metadata, authorization code with PKCE S256 only,
//     single-use codes, RFC 8707 resource checks, iss in the authorization
//     response (RFC 9207), opaque per-grant access tokens stored as digests,
//     refresh tokens that rotate and whose reuse revokes the grant, an
//     optional consent page, and dynamic registration behind a switch. Its
//     state is behind [OAuthStore]: in memory by default ([NewMemoryStore]),
//     or shared by several gateways (package auth/pgstore, PostgreSQL);
//     a store that cannot answer makes token checks fail closed (503).
//   - Credentials are [Secret] values that print, log and marshal as
//     "[REDACTED]"; [RedactURL] hides them in access-log URLs.
//
// Missing security configuration is an error from [New], never an open
// door: no credential, no listener, no resource URL, or OAuth without a
// chosen approval mode.
//
// # Usage
//
// Build a [Front] from a [Config] and compose it in front of the MCP
// handler: body cap, then Guard, then RequireBearer, then MCP; the
// [Front.Routes] handlers are mounted behind the body cap and Guard.
// [Front.Handler] does the composition for one handler (this runs as
// Example_usage):
//
//	front, err := auth.New(auth.Config{
//		Tokens:      []auth.Token{{Name: "default", Secret: auth.NewSecret(tok), Scopes: auth.FullScopes()}},
//		Listener:    "127.0.0.1:8765",
//		ResourceURL: "http://127.0.0.1:8765/mcp",
//		Logger:      logger,
//	})
//	if err != nil {
//		return err
//	}
//	srv := &http.Server{Handler: http.MaxBytesHandler(front.Handler(mcpHandler), 4<<20)}
//
// A tool handler denies a call without a [Principal] and checks the call
// against its [Scopes]; a refusal is a [*ScopeError] naming the missing
// scope, which the handler returns as an error result (this runs as
// ExampleFromContext):
//
//	func allowTool(ctx context.Context, name string) error {
//		p, ok := auth.FromContext(ctx)
//		if !ok {
//			return errors.New("no principal: deny")
//		}
//		return p.Scopes.RequireTool(name) // "auth: missing scope tools:NAME: …"
//	}
//
// A Front holds all its state; several can live in one process. It is safe
// for concurrent use and starts no goroutines.
//
// # Connecting clients
//
// With a static token (Claude Code):
//
//	claude mcp add --transport http rigout https://HOST/mcp \
//	    --header "Authorization: Bearer $TOKEN"
//
// With OAuth, register the client in [OAuthConfig].Clients with its exact
// redirect URI: https://claude.ai/api/mcp/auth_callback for Claude's
// connectors, http://localhost/callback for Claude Code (any port matches a
// loopback redirect), then give the client its ID and secret:
//
//	claude mcp add --transport http --client-id rigout-cli --client-secret \
//	    --callback-port 8080 rigout https://HOST/mcp
//
// The client discovers the rest from the 401 challenge's resource_metadata,
// the protected-resource metadata and the authorization server metadata.
// With [OAuthConfig].Consent the operator approves each authorization in
// the browser by entering a full-scope token.
package auth
