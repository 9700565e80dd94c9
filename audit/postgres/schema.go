package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/rigout/rigout/audit"
)

// Advisory lock keys (pg_advisory_xact_lock takes a bigint): one for the
// chain's tail, one for migrations. "rigout" in ASCII, then a number.
const (
	chainLockKey   int64 = 0x7269676f75740001
	migrateLockKey int64 = 0x7269676f75740002
)

// migrations is the schema history: migrations[i] takes the database from
// version i to i+1. Append; never edit a released entry.
var migrations = [...]string{
	// 0 → 1. rigout_audit_events holds the chain, with the same columns as
	// the SQLite ledger plus gateway (the instance that wrote the row) and
	// link, which chains the gateway names too (see chainLink).
	// rigout_audit_heads keeps each gateway's last committed row, so a
	// DELETE of the newest rows is found by Verify. rigout_meta holds the
	// schema version and the digest key.
	`CREATE TABLE rigout_audit_events (
		seq          bigint   PRIMARY KEY,
		time_ns      bigint   NOT NULL,
		type         text     NOT NULL,
		call_id      text     NOT NULL DEFAULT '',
		phase        text     NOT NULL DEFAULT '',
		principal    text     NOT NULL DEFAULT '',
		transport    text     NOT NULL DEFAULT '',
		remote_addr  text     NOT NULL DEFAULT '',
		session      text     NOT NULL DEFAULT '',
		tool         text     NOT NULL DEFAULT '',
		host         text     NOT NULL DEFAULT '',
		route        text     NOT NULL DEFAULT '',
		decision     text     NOT NULL DEFAULT '',
		rule         text     NOT NULL DEFAULT '',
		bypassed     boolean  NOT NULL DEFAULT false,
		exit_code    bigint,
		signal       text     NOT NULL DEFAULT '',
		duration_ns  bigint   NOT NULL DEFAULT 0,
		stdout_bytes bigint   NOT NULL DEFAULT 0,
		stderr_bytes bigint   NOT NULL DEFAULT 0,
		truncated    boolean  NOT NULL DEFAULT false,
		status       text     NOT NULL DEFAULT '',
		error        text     NOT NULL DEFAULT '',
		args_digest  text     NOT NULL DEFAULT '',
		args         text     NOT NULL DEFAULT '',
		detail       text     NOT NULL DEFAULT '',
		gateway      text     NOT NULL,
		prev_hash    bytea    NOT NULL,
		row_hash     bytea    NOT NULL,
		link         bytea    NOT NULL
	);
	CREATE INDEX rigout_audit_events_time ON rigout_audit_events(time_ns);
	CREATE INDEX rigout_audit_events_tool ON rigout_audit_events(tool);
	CREATE INDEX rigout_audit_events_call ON rigout_audit_events(call_id) WHERE call_id != '';
	CREATE TABLE rigout_audit_heads (
		gateway text   PRIMARY KEY,
		seq     bigint NOT NULL,
		hash    bytea  NOT NULL
	);`,

	// 1 → 2: the keyed chain. Links from the audit.chain_key row a writer
	// appends on migrating (or from seq 1 in a new ledger) are keyed with
	// the chain key (see keyedLink); the row hashes stay audit.RowHash. A
	// head's mac is HMAC-SHA256 under the chain key of the gateway, seq,
	// hash and link it records, so a head updated by hand does not verify.
	`ALTER TABLE rigout_audit_heads ADD COLUMN link bytea NOT NULL DEFAULT ''::bytea;
	ALTER TABLE rigout_audit_heads ADD COLUMN mac bytea NOT NULL DEFAULT ''::bytea;`,

	// 2 → 3: what the gateways share about approvals (see approvals.go):
	// the operator approval queue, whose rows are deleted when their call
	// stops waiting, and the nonces of answered elicitation questions,
	// kept until the question's expiry, so an answer counts once on any
	// gateway.
	`CREATE TABLE IF NOT EXISTS rigout_spent_nonces (
		nonce      bytea  PRIMARY KEY,
		expires_ns bigint NOT NULL
	);
	CREATE TABLE IF NOT EXISTS rigout_approvals (
		id           text    PRIMARY KEY,
		principal    text    NOT NULL,
		digest       text    NOT NULL,
		body         bytea   NOT NULL,
		requested_ns bigint  NOT NULL,
		expires_ns   bigint  NOT NULL,
		gateway      text    NOT NULL,
		decided      boolean NOT NULL DEFAULT false,
		approved     boolean NOT NULL DEFAULT false,
		approver     text    NOT NULL DEFAULT '',
		mac          bytea   NOT NULL DEFAULT ''::bytea
	);`,
}

// SchemaVersion is the schema version this build writes and reads.
const SchemaVersion = len(migrations)

// columnList is the stored fields in the order of scanRow and copyColumns.
var copyColumns = []string{"seq", "time_ns", "type", "call_id", "phase", "principal", "transport",
	"remote_addr", "session", "tool", "host", "route", "decision", "rule", "bypassed", "exit_code",
	"signal", "duration_ns", "stdout_bytes", "stderr_bytes", "truncated", "status", "error",
	"args_digest", "args", "detail", "gateway", "prev_hash", "row_hash", "link"}

const columns = `seq, time_ns, type, call_id, phase, principal, transport, remote_addr, session,
	tool, host, route, decision, rule, bypassed, exit_code, signal, duration_ns,
	stdout_bytes, stderr_bytes, truncated, status, error, args_digest, args, detail,
	gateway, prev_hash, row_hash, link`

// migrate creates rigout_meta if needed and brings the schema to
// SchemaVersion in one transaction, under an advisory lock so that
// gateways starting together do not race. It returns the digest key,
// creating it on first use, and the version it found. A database newer
// than this build is refused.
func migrate(ctx context.Context, tx pgx.Tx, label string) ([]byte, int, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
		return nil, 0, err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS rigout_meta (key text PRIMARY KEY, value text NOT NULL)`); err != nil {
		return nil, 0, err
	}
	v, err := readVersion(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	if v > SchemaVersion {
		return nil, v, &SchemaVersionError{DB: label, Found: v, Max: SchemaVersion}
	}
	for i := v; i < SchemaVersion; i++ {
		if _, err := tx.Exec(ctx, migrations[i]); err != nil {
			return nil, v, fmt.Errorf("migrate schema %d→%d: %w", i, i+1, err)
		}
	}
	if v != SchemaVersion {
		if _, err := tx.Exec(ctx, `INSERT INTO rigout_meta (key, value) VALUES ('schema_version', $1)
			ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, strconv.Itoa(SchemaVersion)); err != nil {
			return nil, v, err
		}
	}
	key, err := readKey(ctx, tx)
	if err != nil || key != nil {
		return key, v, err
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, v, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO rigout_meta (key, value) VALUES ('digest_key', $1)`, hex.EncodeToString(key)); err != nil {
		return nil, v, err
	}
	return key, v, nil
}

// keyedSchema is the first schema version whose links are keyed.
const keyedSchema = 2

// readVersion returns the schema version, 0 for a database without one.
func readVersion(ctx context.Context, q pgx.Tx) (int, error) {
	var s string
	err := q.QueryRow(ctx, `SELECT value FROM rigout_meta WHERE key = 'schema_version'`).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("schema_version %q is not a number", s)
	}
	return v, nil
}

// readKey returns the digest key, nil if none is stored.
func readKey(ctx context.Context, q pgx.Tx) ([]byte, error) {
	var s string
	err := q.QueryRow(ctx, `SELECT value FROM rigout_meta WHERE key = 'digest_key'`).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return hex.DecodeString(s)
}

// Row is an event as stored, with the gateway instance that wrote it and
// the link hash that chains the gateway names.
type Row struct {
	audit.Event
	Gateway string `json:"gateway"`
	Link    string `json:"link"`

	prev, hash, link []byte
}

// scanRow reads the columns of [columns].
func scanRow(s pgx.Row) (Row, error) {
	var (
		r        Row
		timeNS   int64
		exitCode *int64
		durNS    int64
		decision string
		status   string
	)
	err := s.Scan(&r.Seq, &timeNS, &r.Type, &r.CallID, &r.Phase, &r.Principal, &r.Transport,
		&r.RemoteAddr, &r.Session, &r.Tool, &r.Host, &r.Route, &decision, &r.Rule, &r.Bypassed,
		&exitCode, &r.Signal, &durNS, &r.StdoutBytes, &r.StderrBytes, &r.Truncated, &status,
		&r.Error, &r.ArgsDigest, &r.Args, &r.Detail, &r.Gateway, &r.prev, &r.hash, &r.link)
	if err != nil {
		return r, err
	}
	r.Decision, r.Status = audit.Decision(decision), audit.Status(status)
	r.Time = timeFromNS(timeNS)
	r.Duration = timeDurationNS(durNS)
	if exitCode != nil {
		c := int(*exitCode)
		r.ExitCode = &c
	}
	r.PrevHash, r.Hash, r.Link = hex.EncodeToString(r.prev), hex.EncodeToString(r.hash), hex.EncodeToString(r.link)
	return r, nil
}

// copyValues returns the values of copyColumns.
func copyValues(e *audit.Event, gateway string, prev, row, link []byte) []any {
	var exit any
	if e.ExitCode != nil {
		exit = int64(*e.ExitCode)
	}
	return []any{e.Seq, e.Time.UnixNano(), e.Type, e.CallID, e.Phase, e.Principal, e.Transport,
		e.RemoteAddr, e.Session, e.Tool, e.Host, e.Route, string(e.Decision), e.Rule, e.Bypassed,
		exit, e.Signal, int64(e.Duration), e.StdoutBytes, e.StderrBytes, e.Truncated,
		string(e.Status), e.Error, e.ArgsDigest, e.Args, e.Detail, gateway, prev, row, link}
}
