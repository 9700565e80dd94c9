package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/rigout/rigout/audit"
)

// migrations is the schema history: migrations[i] takes the database from
// PRAGMA user_version i to i+1. Append; never edit a released entry.
var migrations = [...]string{
	// 0 → 1: the events table. seq is the rowid, assigned by the ledger
	// (never AUTOINCREMENT's guess), so the chain order is the key order.
	// time_ns and duration_ns are nanoseconds; exit_code is NULL when the
	// command did not exit; prev_hash and row_hash are 32-byte SHA-256 sums.
	`CREATE TABLE events (
		seq          INTEGER PRIMARY KEY,
		time_ns      INTEGER NOT NULL,
		type         TEXT    NOT NULL,
		call_id      TEXT    NOT NULL DEFAULT '',
		phase        TEXT    NOT NULL DEFAULT '',
		principal    TEXT    NOT NULL DEFAULT '',
		transport    TEXT    NOT NULL DEFAULT '',
		remote_addr  TEXT    NOT NULL DEFAULT '',
		session      TEXT    NOT NULL DEFAULT '',
		tool         TEXT    NOT NULL DEFAULT '',
		host         TEXT    NOT NULL DEFAULT '',
		route        TEXT    NOT NULL DEFAULT '',
		decision     TEXT    NOT NULL DEFAULT '',
		rule         TEXT    NOT NULL DEFAULT '',
		bypassed     INTEGER NOT NULL DEFAULT 0,
		exit_code    INTEGER,
		signal       TEXT    NOT NULL DEFAULT '',
		duration_ns  INTEGER NOT NULL DEFAULT 0,
		stdout_bytes INTEGER NOT NULL DEFAULT 0,
		stderr_bytes INTEGER NOT NULL DEFAULT 0,
		truncated    INTEGER NOT NULL DEFAULT 0,
		status       TEXT    NOT NULL DEFAULT '',
		error        TEXT    NOT NULL DEFAULT '',
		args_digest  TEXT    NOT NULL DEFAULT '',
		args         TEXT    NOT NULL DEFAULT '',
		detail       TEXT    NOT NULL DEFAULT '',
		prev_hash    BLOB    NOT NULL,
		row_hash     BLOB    NOT NULL
	);
	CREATE INDEX events_time ON events(time_ns);
	CREATE INDEX events_tool ON events(tool);
	CREATE INDEX events_call ON events(call_id) WHERE call_id != '';`,

	// 1 → 2: indexes for the hot queries and the statistics the writer
	// keeps (see stats.go). events_tool_time serves a tool over a time
	// window (rigout audit query --tool X --since T, Stats' partial hours);
	// events_principal the newest rows of one principal (what
	// get_server_activity shows a token without full scopes). stats_hour
	// holds counters and a latency histogram per hour and tool; open_calls
	// the intent rows no done row has finished yet. Both are filled from
	// the existing rows after this script (postMigrate).
	`CREATE INDEX events_tool_time ON events(tool, time_ns);
	CREATE INDEX events_principal ON events(principal);
	CREATE TABLE stats_hour (
		hour    INTEGER NOT NULL,
		tool    TEXT    NOT NULL,
		calls   INTEGER NOT NULL,
		denials INTEGER NOT NULL,
		errors  INTEGER NOT NULL,
		hist    BLOB    NOT NULL,
		PRIMARY KEY (hour, tool)
	) WITHOUT ROWID;
	CREATE TABLE open_calls (
		seq     INTEGER PRIMARY KEY,
		call_id TEXT    NOT NULL,
		tool    TEXT    NOT NULL,
		time_ns INTEGER NOT NULL
	);
	CREATE INDEX open_calls_call ON open_calls(call_id);
	CREATE INDEX open_calls_tool_time ON open_calls(tool, time_ns);`,

	// 2 → 3: what a limited query over a time window needs to read rows
	// in seq order from an index alone and stop after its limit (see
	// query.go). events_tool_seq replaces events_tool (tool, seq): the same
	// order, with each row's time beside it, so a time condition is checked
	// in the index. seq_hour holds, for each tool ('' for rows without one)
	// and hour (time_ns / 1h, by the row's own time), the smallest and
	// largest seq of every row of that tool in that hour, intent and done
	// alike, and how many there are; the writer keeps it in the
	// transaction that inserts the rows, postMigrate fills it from the rows
	// already there, and Prune rebuilds it.
	`DROP INDEX events_tool;
	CREATE INDEX events_tool_seq ON events(tool, seq, time_ns);
	CREATE TABLE seq_hour (
		tool    TEXT    NOT NULL,
		hour    INTEGER NOT NULL,
		min_seq INTEGER NOT NULL,
		max_seq INTEGER NOT NULL,
		rows    INTEGER NOT NULL,
		PRIMARY KEY (tool, hour)
	) WITHOUT ROWID;
	CREATE INDEX seq_hour_hour ON seq_hour(hour);`,

	// 3 → 4: the keyed chain. No table changes: rows from here on are
	// hashed with audit.KeyedRowHash under the chain key and the head file
	// is keyed (version 2 slots). The writer that migrates appends an
	// audit.chain_key event, from which the chain is keyed; the rows
	// before it keep their unkeyed hashes and verify as before. The version
	// bump keeps older builds, which cannot check keyed rows, away.
	`-- keyed chain: see audit.KeyedRowHash and the audit.chain_key event`,
}

// postMigrate runs after migrations[i], in the same transaction, what SQL
// alone cannot do.
func postMigrate(ctx context.Context, tx *sql.Tx, i int) error {
	switch i {
	case 1: // 1 → 2: the statistics of the rows already there
		return rebuildStats(ctx, tx)
	case 2: // 2 → 3: the seq spans of the rows already there
		return rebuildSeqHours(ctx, tx)
	}
	return nil
}

// schemaVersion is the version this build writes.
const schemaVersion = len(migrations)

// SchemaVersion is the schema version (PRAGMA user_version) this build
// writes. Open migrates older files to it and refuses newer ones; a tool
// that caches a ledger file can key the cache by it.
const SchemaVersion = schemaVersion

// columns lists the stored fields in the order of scanEvent and insertSQL.
const columns = `seq, time_ns, type, call_id, phase, principal, transport, remote_addr, session,
	tool, host, route, decision, rule, bypassed, exit_code, signal, duration_ns,
	stdout_bytes, stderr_bytes, truncated, status, error, args_digest, args, detail,
	prev_hash, row_hash`

const tailSQL = `SELECT seq, row_hash FROM events ORDER BY seq DESC LIMIT 1`

const insertSQL = `INSERT INTO events (` + columns + `) VALUES
	(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// migrate brings the database to schemaVersion inside one write
// transaction and returns the version it found. A database newer than this
// build is refused untouched.
func migrate(ctx context.Context, db *sql.Conn, path string) (int, error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the writer pool sets _txlock
	if err != nil {
		return 0, &WriteError{Path: path, Op: "begin migration", Err: err}
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: read schema version of %s: %w", path, err)
	}
	if v > schemaVersion {
		return v, &SchemaVersionError{Path: path, Found: v, Max: schemaVersion}
	}
	if v == schemaVersion {
		return v, nil
	}
	for i := v; i < schemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return v, &WriteError{Path: path, Op: fmt.Sprintf("migrate schema %d→%d", i, i+1), Err: err}
		}
		if err := postMigrate(ctx, tx, i); err != nil {
			return v, &WriteError{Path: path, Op: fmt.Sprintf("migrate schema %d→%d", i, i+1), Err: err}
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return v, &WriteError{Path: path, Op: "set schema version", Err: err}
	}
	if err := tx.Commit(); err != nil {
		return v, &WriteError{Path: path, Op: "commit migration", Err: err}
	}
	return v, nil
}

// keyedSchema is the first schema version whose rows are keyed.
const keyedSchema = 4

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// storedRow is an event as read back, with its raw hashes.
type storedRow struct {
	audit.Event
	prev, hash []byte
}

func scanEvent(s scanner) (storedRow, error) {
	var (
		r        storedRow
		timeNS   int64
		exitCode sql.NullInt64
		durNS    int64
		bypassed int64
		trunc    int64
		decision string
		status   string
	)
	err := s.Scan(&r.Seq, &timeNS, &r.Type, &r.CallID, &r.Phase, &r.Principal, &r.Transport,
		&r.RemoteAddr, &r.Session, &r.Tool, &r.Host, &r.Route, &decision, &r.Rule, &bypassed,
		&exitCode, &r.Signal, &durNS, &r.StdoutBytes, &r.StderrBytes, &trunc, &status,
		&r.Error, &r.ArgsDigest, &r.Args, &r.Detail, &r.prev, &r.hash)
	if err != nil {
		return r, err
	}
	r.Decision, r.Status = audit.Decision(decision), audit.Status(status)
	r.Time = timeFromNS(timeNS)
	r.Duration = timeDuration(durNS)
	r.Bypassed = bypassed != 0
	r.Truncated = trunc != 0
	if exitCode.Valid {
		c := int(exitCode.Int64)
		r.ExitCode = &c
	}
	r.PrevHash = fmtHash(r.prev)
	r.Hash = fmtHash(r.hash)
	return r, nil
}

// insertArgs returns the values for insertSQL.
func insertArgs(e *audit.Event, prev, row []byte) []any {
	var exit any
	if e.ExitCode != nil {
		exit = int64(*e.ExitCode)
	}
	return []any{e.Seq, e.Time.UnixNano(), e.Type, e.CallID, e.Phase, e.Principal, e.Transport,
		e.RemoteAddr, e.Session, e.Tool, e.Host, e.Route, string(e.Decision), e.Rule, boolInt(e.Bypassed),
		exit, e.Signal, int64(e.Duration), e.StdoutBytes, e.StderrBytes, boolInt(e.Truncated),
		string(e.Status), e.Error, e.ArgsDigest, e.Args, e.Detail, prev, row}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
