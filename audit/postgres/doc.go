// Package postgres is an audit ledger on PostgreSQL, for several gateways
// that must answer "who ran what, where, and was it allowed" in one place.
// It implements [audit.Recorder] and [audit.Querier] like the SQLite ledger
// (package audit/sqlite), with the same events, the same intent-before-
// execute and fail-closed contract and the same [audit.RowHash] row hashes,
// and needs no cgo (it uses github.com/jackc/pgx/v5).
//
// # One chain, serialised by an advisory lock
//
// Every gateway appends to one chain. A commit takes a transaction-scoped
// advisory lock, reads the tail, appends its rows and commits; the lock is
// released with the transaction. One chain, rather than one per gateway,
// keeps Seq a single total order in commit order across all gateways, so
// `rigout audit tail --follow`, [audit.Filter.AfterSeq], exports and
// [Ledger.Verify] mean what they mean on SQLite, and a row removed anywhere
// breaks the one chain. The cost, one lock holder at a time, is paid per
// batch, not per row: concurrent callers in one process share a commit
// (group commit), as on SQLite.
//
// Each row names the gateway instance that wrote it ([Config.Gateway]). The
// row hashes are exactly [audit.RowHash], so an export's hashes verify
// offline; a second chained hash, the link, covers the gateway names too
// and is keyed: HMAC-SHA256 under [Config.ChainKey], which every gateway
// shares and commands cannot read, so someone who can write the database
// but not read the key cannot rewrite the chain undetected. Each gateway's
// last committed row is kept in a heads table with a MAC under the same
// key, and a gateway that finds its own rows gone from the end, or a tail
// not linked under the key, records an [audit.TypeHeadMismatch] event, so
// Verify finds both. A ledger written before keying is keyed from an
// [audit.TypeChainKey] row.
//
// # Fail closed
//
// Record returns nil only once the row is committed (with PostgreSQL's
// default synchronous_commit, durably). A database that is down or does
// not answer within [Config.WriteTimeout] makes Record return a
// [*WriteError] naming the database and what failed, so the gateway refuses
// the call (or runs it unaudited under its unsafe best-effort flag); the
// connection pool reconnects, and the next Record after the server returns
// succeeds.
//
// Tests start their own server with package audit/postgres/pgtest.
package postgres
