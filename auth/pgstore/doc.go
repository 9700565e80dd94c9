// Package pgstore keeps the OAuth authorization server's state in
// PostgreSQL (github.com/jackc/pgx/v5), so that several gateways share
// one set of grants: a token issued through one gateway is accepted by
// every other, and a reused refresh token or code revokes its grant on all
// of them at once.
//
// [Store] implements [auth.OAuthStore]. It stores registered clients,
// pending authorization codes and consent pages, grants, and access and
// refresh tokens by a keyed digest only (HMAC-SHA256 under
// [Config.Secret] of the token's SHA-256 digest): the database never holds
// a token, code or client secret, and a token row inserted by hand, by
// someone without the secret, matches no token. Every grant carries a MAC
// of its client, scopes and resource under the same secret; a grant
// inserted or changed by hand authenticates nothing.
//
// Everything that is consumed is consumed in one statement or one
// transaction, so it happens exactly once across gateways: a code is
// redeemed by DELETE … RETURNING (the loser of a race finds nothing), a
// refresh token is rotated by UPDATE … WHERE NOT used AND expires_ns > now
// (the loser finds it used and revokes the grant), a consent is taken by
// DELETE … RETURNING. Expiry is compared in the queries against the
// gateway's clock, passed in by the caller.
//
// Access tokens are checked with one indexed query per request and no
// cache, so a revocation (reuse detection, RevokeClient) takes effect on
// every gateway on the next request. A database that cannot be reached
// makes every check fail (closed): the Front answers 503.
//
// A dynamic registration that obtains no grant within the Front's
// UnusedClientTTL lapses as in the memory store: the client is unknown
// from then on and its row is deleted (when a registration needs the slot,
// and by the periodic sweep), so a flood of registrations does not fill
// the table forever.
//
// The schema is created and migrated on [Open] under the same advisory
// lock as the audit ledger of package audit/postgres, whose rigout_meta
// table it shares (key oauth_schema_version).
package pgstore
