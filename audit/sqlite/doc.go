// Package sqlite is rigout's tamper-evident audit ledger: an append-only
// SQLite table of [audit.Event] rows, each chained to the previous one by a
// keyed hash ([audit.KeyedRowHash], HMAC-SHA256 under a chain key), written
// so that an acknowledged record survives a crash. With cgo it uses
// github.com/mattn/go-sqlite3; built with CGO_ENABLED=0 (cross builds, the
// release archives) it uses github.com/ncruces/go-sqlite3, the same SQLite
// as pure Go, and [Driver] says which. The events and interfaces it
// implements are in package audit, which needs neither.
//
// # Overview
//
// [Ledger] implements the write side, [audit.Recorder], which the gateway's
// middleware holds, and the read side, [audit.Querier]; it adds
// [Ledger.Stats], [Ledger.Verify], [Ledger.Export] and [Ledger.Prune].
//
// Durability. The database runs in WAL mode with synchronous=FULL, so a
// commit is fsynced before [Ledger.Record] returns. Writes are group
// committed: the first caller to find no commit in progress commits, in
// its own goroutine, its row and every row queued behind it (up to
// [Config.MaxBatch] rows, waiting at most half a millisecond for callers
// it expects) in one transaction, so concurrent callers share an fsync and
// a lone caller pays no hand-off to another goroutine. Record returns only when
// its own transaction has committed, and returns that commit's error: a
// caller that gets an error must treat the action as unaudited and refuse
// it. [Ledger.Healthy] reports the last write's outcome for a health
// endpoint. Writes ignore the caller's context cancellation.
//
// Tamper evidence. Every row stores prev_hash, the row_hash of the row
// before it (zero for seq 1), and row_hash, [audit.KeyedRowHash] of all its
// fields and prev_hash under the chain key ([Config.ChainKey], or derived
// from the per-install secret). A head file beside the database records the
// seq and hash of the last committed row with a MAC under the same key; it
// is rewritten after every commit and fsynced at most once a second.
// Rows a ledger held before it was keyed keep their unkeyed [audit.RowHash]
// hashes: the chain is keyed from an [audit.TypeChainKey] row, which a
// writer also appends when it is given another key. [Ledger.Verify] recomputes the chain
// and names the first row that was edited, deleted, moved to another seq,
// or cut from the end (the head names a row that is gone). A writer
// compares the head with the database when it opens it and whenever the
// tail is not the one it left; if rows the head records are missing or
// different, it appends an [audit.TypeHeadMismatch] event before anything
// else, so the damage stays on record after the head moves on.
//
// Someone who can write the database and the head but cannot read the key
// cannot produce a row or a head that verifies: a rewrite fails
// [Ledger.Verify] at its first forged row ([TamperUnkeyed]), and a writer
// that finds a tail or head not keyed under its key records an
// [audit.TypeHeadMismatch] event rather than adopting it. What the chain
// does not prove: someone who can read the key can rewrite history;
// deleting the database with its head goes unseen without
// [Config.AnchorPath], a second head kept elsewhere. The head may lag the
// database by the last batch after a crash, and by up to a second of
// commits after a power loss; truncating those rows goes unseen. See
// docs/LEDGER.md in the repository.
//
// Retention. The ledger never deletes rows on its own. [Ledger.Prune]
// removes the oldest rows and [Ledger.Export] copies rows out; each records
// itself as an event, and a prune event anchors the shortened chain.
//
// Queries. [Ledger.Query] with a limit chooses the seqs first and reads
// only the rows it returns. Seq and time are not ordered together (clocks
// go backwards; two gateways may share a file), so the writer also keeps,
// per tool and hour of the rows' own times, the smallest and largest seq of
// the rows of that hour (the seq_hour table): exact seq bounds for any time
// window. A limited query over a window that holds many rows scans in seq
// order between those bounds, through the (tool, seq, time) index or the
// table itself, and stops at its limit; a narrow window, or bounds that
// span far more rows than the window holds, reads the window from the
// (tool, time) or (time) index and sorts it. [Ledger.Stats] adds up the
// per-hour statistics the writer keeps (stats_hour). [Import] builds a
// new ledger from many events at once.
//
// Privacy. Arguments are stored as [Ledger.DigestArgs], a keyed hash
// (HMAC-SHA256 under a per-install secret, first 16 hex digits), so
// identical calls correlate without a short secret among the arguments being
// guessable from the digest. With [Config.StoreArgs], caller-redacted
// argument values are kept as well.
//
// Files. Beside the database (audit.db and its -wal and -shm files) the
// ledger keeps audit.db.key, the HMAC secret (from which the chain key is
// derived unless one is given), and audit.db.head, the head.
// All are created owner-only. Deleting the database without its head file
// makes the next writer record a mismatch.
//
// # Usage
//
// Open the ledger once per process and hand it to the gateway as an
// [audit.Recorder]; if it cannot be opened, do not serve tools that cannot
// be audited. For a command, commit an intent row before it starts and a
// done row after it ends, sharing a CallID; if the intent cannot be
// recorded, do not run the command:
//
//	l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(stateDir, "audit.db")})
//	if err != nil {
//		return err // fail closed
//	}
//	defer l.Close()
//	intent := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: "c1",
//		Principal: "ci-bot", Tool: "execute_command", Host: "local", Status: audit.StatusStarted,
//		ArgsDigest: l.DigestArgs([]byte(`{"command":"uptime"}`))}
//	if err := l.Record(ctx, intent); err != nil {
//		return fmt.Errorf("not run: %w", err)
//	}
//
// The package example runs this in full. Operators read the ledger with
// [Ledger.Query], [Ledger.Stats] and [Ledger.Verify], or with the rigout
// audit command. Tools that only read open it with [Config.ReadOnly].
package sqlite
