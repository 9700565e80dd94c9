package postgres

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/internal/groupcommit"
	"github.com/rigout/rigout/internal/pgcred"
)

const (
	defaultMaxBatch     = 256
	defaultWriteTimeout = 10 * time.Second
	batchWindow         = 5 * time.Millisecond   // a batch stops collecting this long after its first request
	batchLinger         = 500 * time.Microsecond // longest wait for expected callers, see groupcommit
	linkDomain          = "rigout.audit.pg.link.v1\x00"
	keyedLinkDomain     = "rigout.audit.pg.keyed-link.v1\x00"
	headMACDomain       = "rigout.audit.pg.head.v1\x00"
	minChainKey         = 32
)

// Config configures a [Ledger]. DSN is required; every other field has a
// working default.
type Config struct {
	// DSN is the connection string, postgres://user@host:port/db?sslmode=…
	// or key=value form. Put no password in it: use Password.
	DSN string

	// Password, if not empty, is the password to connect with, overriding
	// any in DSN. The caller reads it from the environment or a credential
	// store; it is never written to a file.
	Password string

	// ChainKey keys the chain: each row's link is HMAC-SHA256 under it
	// (see [Ledger.Verify]) and so is each gateway's head, so that someone
	// who can write the database but not read the key cannot rewrite the
	// ledger undetected. Every gateway sharing the database must be given
	// the same key, from a place the commands they run cannot reach (an OS
	// keyring, the gateway's own environment); at least 32 bytes. Required
	// to write, unless UnsafeChainKeyInDatabase is set. A read-only ledger
	// without it reports the keyed rows as [TamperKeyUnknown].
	ChainKey []byte

	// UnsafeChainKeyInDatabase derives the chain key from the digest key
	// kept in the database itself, when ChainKey is nil. Anyone who can
	// read the database can then compute it and rewrite the chain
	// undetected: use it only where nothing but the gateways can reach the
	// database.
	UnsafeChainKeyInDatabase bool

	// UnsafeAmbientCredentials lets the connection use a password pgx
	// finds on its own: PGPASSWORD, a password file (~/.pgpass,
	// PGPASSFILE) or a service file. The commands a gateway runs can
	// usually read those too and would reach the ledger with them; without
	// this, Open refuses such a password: give it in Password.
	UnsafeAmbientCredentials bool

	// Gateway names the gateway instance that writes through this ledger,
	// stored in every row it writes. If empty, the host name is used.
	Gateway string

	// ReadOnly opens the ledger for Query, Stats and Verify only: nothing
	// is created, migrated or written, and the write methods return
	// [ErrReadOnly].
	ReadOnly bool

	// StoreArgs keeps [audit.Event.Args]; if false only ArgsDigest is kept.
	StoreArgs bool

	// MaxBatch caps the rows committed in one transaction. If zero, 256.
	MaxBatch int

	// WriteTimeout bounds one commit, connecting included: a database
	// that does not answer makes Record fail (closed) after it, rather than
	// hold the call. If zero, 10s.
	WriteTimeout time.Duration

	// MaxConns caps the connection pool. If zero, 4.
	MaxConns int32

	// Logger receives operator diagnostics. If nil, logs are discarded.
	Logger *slog.Logger

	// Now returns the current time for events recorded with a zero Time.
	// If nil, time.Now.
	Now func() time.Time
}

// Ledger is the tamper-evident audit ledger on PostgreSQL, shared by any
// number of gateways.
//
// All gateways append to one chain: a commit takes the transaction-scoped
// advisory lock [chainLockKey], reads the tail, appends its batch and
// commits, so Seq is one total order across gateways (tail --follow,
// AfterSeq and export stay meaningful) and every row links to the row
// before it whoever wrote it. Within a process, concurrent callers share
// a commit (group commit): the lock is taken once per batch, not per row.
//
// A Ledger is safe for concurrent use. Close must be called when it is no
// longer needed.
type Ledger struct {
	label     string // host:port/db, for messages; never the password
	gateway   string
	readOnly  bool
	storeArgs bool
	maxBatch  int
	timeout   time.Duration
	log       *slog.Logger
	now       func() time.Time
	key       []byte // the digest key, from the database
	chainKey  []byte // nil when read-only without a key
	keyID     string // audit.ChainKeyID of chainKey
	unsafeKey bool
	pool      *pgxpool.Pool
	commits   *groupcommit.Committer[audit.Event] // nil when read-only

	mu     sync.RWMutex // held for reading while in use; Close holds it for writing
	closed bool

	// Owned by the group commit's leader (commits never run concurrently).
	lastSeq  int64             // the highest seq this ledger committed or saw at its tail
	lastLink [sha256.Size]byte // the link of lastSeq's row
	// opened is set once Open has keyed the chain: from then on a tail not
	// linked under the key is a forgery, never a migration.
	opened bool
	// unkeyedBefore is set when Open migrated the database from a schema
	// without keyed links: only then may its unkeyed tail be kept.
	unkeyedBefore bool

	healthMu sync.Mutex
	writeErr error
}

var (
	_ audit.Recorder = (*Ledger)(nil)
	_ audit.Querier  = (*Ledger)(nil)
)

// Open connects to the database, creates or migrates the schema (unless
// cfg.ReadOnly) and checks its version. It fails if the database cannot be
// reached or written: the caller must not serve tools it cannot audit.
func Open(ctx context.Context, cfg Config) (*Ledger, error) {
	if cfg.DSN == "" {
		return nil, errors.New("postgres: Config.DSN is required")
	}
	if cfg.ChainKey != nil && len(cfg.ChainKey) < minChainKey {
		return nil, fmt.Errorf("postgres: a chain key must be at least %d bytes, not %d", minChainKey, len(cfg.ChainKey))
	}
	if cfg.ChainKey == nil && !cfg.UnsafeChainKeyInDatabase && !cfg.ReadOnly {
		return nil, errors.New("postgres: Config.ChainKey is required to write (the same key on every gateway, kept where commands cannot read it), or set UnsafeChainKeyInDatabase")
	}
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("postgres: DSN: %w", err)
	}
	if !cfg.UnsafeAmbientCredentials {
		if err := pgcred.Check(cfg.DSN, cfg.Password, pc.ConnConfig.Password); err != nil {
			return nil, fmt.Errorf("postgres: %w; give the password in Config.Password, or set UnsafeAmbientCredentials", err)
		}
	}
	if cfg.Password != "" {
		pc.ConnConfig.Password = cfg.Password
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	} else {
		pc.MaxConns = 4
	}
	if pc.ConnConfig.ConnectTimeout == 0 || pc.ConnConfig.ConnectTimeout > 5*time.Second {
		pc.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	l := &Ledger{
		label:     fmt.Sprintf("%s:%d/%s", pc.ConnConfig.Host, pc.ConnConfig.Port, pc.ConnConfig.Database),
		gateway:   cfg.Gateway,
		readOnly:  cfg.ReadOnly,
		storeArgs: cfg.StoreArgs,
		maxBatch:  cfg.MaxBatch,
		timeout:   cfg.WriteTimeout,
		log:       cfg.Logger,
		now:       cfg.Now,
		chainKey:  bytes.Clone(cfg.ChainKey),
		unsafeKey: cfg.UnsafeChainKeyInDatabase,
	}
	if l.gateway == "" {
		l.gateway, _ = os.Hostname()
	}
	if l.maxBatch <= 0 {
		l.maxBatch = defaultMaxBatch
	}
	if l.timeout <= 0 {
		l.timeout = defaultWriteTimeout
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.pool, err = pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", l.label, err)
	}
	if err := l.open(ctx); err != nil {
		l.pool.Close()
		return nil, err
	}
	if !l.readOnly {
		l.commits = groupcommit.New(groupcommit.Config[audit.Event]{
			MaxBatch: l.maxBatch, Linger: batchLinger, Window: batchWindow, Commit: l.commit,
		})
	}
	return l, nil
}

func (l *Ledger) open(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return &WriteError{DB: l.label, Op: "connect", Err: err}
	}
	defer tx.Rollback(ctx)
	if l.readOnly {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('rigout_meta') IS NOT NULL`).Scan(&exists); err != nil {
			return fmt.Errorf("postgres: %s: %w", l.label, err)
		}
		if !exists {
			return fmt.Errorf("%w in %s", ErrNoLedger, l.label)
		}
		v, err := readVersion(ctx, tx)
		if err != nil {
			return fmt.Errorf("postgres: %s: read schema version: %w", l.label, err)
		}
		if v != SchemaVersion {
			return &SchemaVersionError{DB: l.label, Found: v, Max: SchemaVersion}
		}
		if l.key, err = readKey(ctx, tx); err != nil {
			return fmt.Errorf("postgres: %s: %w", l.label, err)
		}
		l.setKeyID()
		return nil
	}
	key, from, err := migrate(ctx, tx, l.label)
	var sv *SchemaVersionError
	if errors.As(err, &sv) {
		return err
	}
	if err != nil {
		return &WriteError{DB: l.label, Op: "migrate", Err: err}
	}
	if err := tx.Commit(ctx); err != nil {
		return &WriteError{DB: l.label, Op: "commit migration", Err: err}
	}
	l.key = key
	l.unkeyedBefore = from < keyedSchema
	l.setKeyID()
	// An empty commit keys the chain now: it appends the audit.chain_key
	// row to a ledger whose tail is not linked under the key.
	if err := l.commitOnce(nil); err != nil {
		return err
	}
	l.opened = true
	return nil
}

// setKeyID derives the chain key from the digest key when asked to, and
// names it.
func (l *Ledger) setKeyID() {
	if l.chainKey == nil && l.unsafeKey && l.key != nil {
		l.chainKey = audit.DeriveChainKey(l.key)
	}
	if l.chainKey != nil {
		l.keyID = audit.ChainKeyID(l.chainKey)
	}
}

// Gateway returns the gateway instance name stored in the rows this ledger
// writes.
func (l *Ledger) Gateway() string { return l.gateway }

// Label returns host:port/database, for messages.
func (l *Ledger) Label() string { return l.label }

// Record appends e and returns once the transaction holding it is
// committed, or with the error that stopped the commit (a [*WriteError]
// when the database is unreachable, within [Config.WriteTimeout]). ctx's
// cancellation does not abandon the write. Events are cleaned and checked
// as by the SQLite ledger: see [audit.Event.Sanitize] and
// [audit.Event.Validate].
func (l *Ledger) Record(ctx context.Context, e audit.Event) error {
	_, err := l.Append(ctx, e)
	return err
}

// Append is [Ledger.Record] that also returns the event as stored.
func (l *Ledger) Append(ctx context.Context, e audit.Event) (audit.Event, error) {
	return l.append(e, false)
}

func (l *Ledger) append(e audit.Event, reserved bool) (audit.Event, error) {
	if l.readOnly {
		return audit.Event{}, ErrReadOnly
	}
	if err := e.PrepareAppend(l.storeArgs, reserved, l.now); err != nil {
		return audit.Event{}, err
	}
	e.Time = e.Time.UTC()
	l.mu.RLock()
	closed := l.closed
	l.mu.RUnlock()
	if closed {
		return audit.Event{}, ErrClosed
	}
	switch err := l.commits.Do(&e); {
	case errors.Is(err, groupcommit.ErrClosed):
		return audit.Event{}, ErrClosed
	case err != nil:
		return audit.Event{}, err
	}
	return e, nil
}

// commit writes evs in one transaction, retrying once on a fresh
// connection when the first attempt failed before COMMIT was sent (a
// connection the server closed while it restarted fails on first use).
func (l *Ledger) commit(evs []*audit.Event) error {
	err := l.commitOnce(evs)
	var we *WriteError
	if errors.As(err, &we) && we.Op != "commit" {
		err = l.commitOnce(evs)
	}
	if err != nil {
		l.log.LogAttrs(context.Background(), slog.LevelError, "audit write failed", slog.String("db", l.label), slog.Any("err", err))
	}
	l.healthMu.Lock()
	l.writeErr = err
	l.healthMu.Unlock()
	return err
}

func (l *Ledger) commitOnce(evs []*audit.Event) error {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return &WriteError{DB: l.label, Op: "begin", Err: err}
	}
	defer func() {
		// A no-op after Commit. After a failure the connection may be
		// gone or hung: bound the rollback too.
		rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
		tx.Rollback(rctx)
		rcancel()
	}()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, chainLockKey); err != nil {
		return &WriteError{DB: l.label, Op: "lock chain", Err: err}
	}
	var (
		seq        int64
		hash, link [sha256.Size]byte
		h, k       []byte
		gw         string
	)
	switch err := tx.QueryRow(ctx, `SELECT seq, row_hash, link, gateway FROM rigout_audit_events ORDER BY seq DESC LIMIT 1`).Scan(&seq, &h, &k, &gw); {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return &WriteError{DB: l.label, Op: "read tail", Err: err}
	default:
		copy(hash[:], h)
		copy(link[:], k)
	}
	var check *audit.Event // what the tail's link says, see checkTail
	if seq > 0 && !(l.opened && seq == l.lastSeq && link == l.lastLink) {
		var err error
		if check, err = l.checkTail(ctx, tx, seq, hash, link, gw); err != nil {
			return &WriteError{DB: l.label, Op: "read tail", Err: err}
		}
	}
	rows := make([][]any, 0, len(evs)+1)
	add := func(e *audit.Event) {
		seq++
		e.Seq = seq
		row := audit.RowHash(e, hash)
		lk := keyedLink(l.chainKey, link, row, l.gateway)
		prev := hash // copies: the slices must not alias the loop's variables
		rows = append(rows, copyValues(e, l.gateway, prev[:], row[:], lk[:]))
		e.PrevHash, e.Hash = hex.EncodeToString(hash[:]), hex.EncodeToString(row[:])
		hash, link = row, lk
	}
	if seq < l.lastSeq {
		// Rows this ledger committed or saw are gone from the end.
		mm := truncation(l.lastSeq, seq)
		add(&mm)
		l.log.LogAttrs(ctx, slog.LevelError, "audit ledger lost rows from its end", slog.String("db", l.label), slog.String("detail", mm.Error))
	}
	if check != nil {
		add(check)
		if check.Type == audit.TypeHeadMismatch {
			l.log.LogAttrs(ctx, slog.LevelError, "audit ledger tail not linked under the chain key", slog.String("db", l.label), slog.String("detail", check.Error))
		}
	}
	saved := make([]audit.Event, len(evs))
	for i, e := range evs {
		saved[i] = *e
		add(e)
	}
	restore := func() {
		for i, e := range evs {
			*e = saved[i]
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"rigout_audit_events"}, copyColumns, pgx.CopyFromRows(rows)); err != nil {
		restore()
		return &WriteError{DB: l.label, Op: "insert", Err: err}
	}
	if len(rows) == 0 {
		l.lastSeq, l.lastLink = seq, link
		return nil
	}
	tip, tipLink := hash, link
	mac := headMAC(l.chainKey, l.gateway, seq, tip, tipLink)
	if _, err := tx.Exec(ctx, `INSERT INTO rigout_audit_heads (gateway, seq, hash, link, mac) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (gateway) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, link = EXCLUDED.link, mac = EXCLUDED.mac`,
		l.gateway, seq, tip[:], tipLink[:], mac); err != nil {
		restore()
		return &WriteError{DB: l.label, Op: "update head", Err: err}
	}
	if err := tx.Commit(ctx); err != nil {
		restore()
		return &WriteError{DB: l.label, Op: "commit", Err: err}
	}
	l.lastSeq, l.lastLink = seq, link
	return nil
}

// chainKeyDetail is the Detail of an [audit.TypeChainKey] event: its row
// and the rows after it are linked under the key KeyID names, the rows
// before it under PreviousKeyID's ("" for unkeyed links, "unknown" when
// the writer could not tell).
type chainKeyDetail struct {
	KeyID         string `json:"key_id"`
	PreviousKeyID string `json:"previous_key_id"`
}

// checkTail checks the tail's link (row seq, with hash, link and
// gateway gw) against the chain key. A tail linked under it needs
// nothing. Otherwise, while Open keys a ledger it migrated from a schema
// without keyed links (and no head verifies under the key), it returns the
// [audit.TypeChainKey] event to append; in every other case it returns an
// [audit.TypeHeadMismatch] event: someone without the key wrote the tail.
// (A new chain key for a keyed ledger is therefore recorded as a
// mismatch: this ledger has no key rotation.)
func (l *Ledger) checkTail(ctx context.Context, tx pgx.Tx, seq int64, hash, link [sha256.Size]byte, gw string) (*audit.Event, error) {
	var prevLink [sha256.Size]byte
	if seq > 1 {
		var p []byte
		switch err := tx.QueryRow(ctx, `SELECT link FROM rigout_audit_events WHERE seq = $1`, seq-1).Scan(&p); {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return nil, err
		default:
			copy(prevLink[:], p)
		}
	}
	if keyedLink(l.chainKey, prevLink, hash, gw) == link {
		return nil, nil
	}
	unkeyed := chainLink(prevLink, hash, gw) == link
	keyedBefore, err := l.keyedHeads(ctx, tx)
	if err != nil {
		return nil, err
	}
	if !l.opened && !keyedBefore && l.unkeyedBefore {
		d := chainKeyDetail{KeyID: l.keyID, PreviousKeyID: "unknown"}
		if unkeyed {
			d.PreviousKeyID = ""
		}
		b, _ := json.Marshal(d)
		return &audit.Event{Type: audit.TypeChainKey, Status: audit.StatusOK, Detail: string(b), Time: time.Now().UTC()}, nil
	}
	mm := struct {
		Found       TamperKind `json:"found"`
		LastSeq     int64      `json:"last_seq"`
		Description string     `json:"description"`
	}{TamperUnkeyed, seq, fmt.Sprintf("row %d, the last row, is not linked under the chain key (id %s): rows were written or re-chained by someone without the key", seq, l.keyID)}
	d, _ := json.Marshal(mm)
	return &audit.Event{Type: audit.TypeHeadMismatch, Status: audit.StatusError, Error: mm.Description, Detail: string(d), Time: time.Now().UTC()}, nil
}

// keyedHeads reports whether a gateway's head verifies under the chain
// key: the chain was keyed with it before.
func (l *Ledger) keyedHeads(ctx context.Context, tx pgx.Tx) (bool, error) {
	rows, err := tx.Query(ctx, `SELECT gateway, seq, hash, link, mac FROM rigout_audit_heads`)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		var seq int64
		var h, k, mac []byte
		if err := rows.Scan(&g, &seq, &h, &k, &mac); err != nil {
			return false, err
		}
		if hmac.Equal(mac, headMAC(l.chainKey, g, seq, toHash(h), toHash(k))) {
			return true, nil
		}
	}
	return false, rows.Err()
}

// keyedLink is a row's link in the keyed chain: HMAC-SHA256 under the
// chain key of a domain string, the previous row's link, this row's
// [audit.RowHash] and the gateway name.
func keyedLink(key []byte, prev, row [sha256.Size]byte, gateway string) [sha256.Size]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(keyedLinkDomain))
	m.Write(prev[:])
	m.Write(row[:])
	m.Write([]byte(gateway))
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	return sum
}

// headMAC is the MAC of a gateway's head: HMAC-SHA256 under the chain key
// of a domain string, the gateway name and a zero byte, the seq (8 bytes
// big-endian), the row hash and the link.
func headMAC(key []byte, gateway string, seq int64, hash, link [sha256.Size]byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(headMACDomain))
	m.Write([]byte(gateway))
	m.Write([]byte{0})
	m.Write(binary.BigEndian.AppendUint64(nil, uint64(seq)))
	m.Write(hash[:])
	m.Write(link[:])
	return m.Sum(nil)
}

// truncation is the event recorded when the tail is below a seq this
// ledger already committed.
func truncation(last, tail int64) audit.Event {
	mm := struct {
		Found       TamperKind `json:"found"`
		HeadSeq     int64      `json:"head_seq"`
		LastSeq     int64      `json:"last_seq"`
		Description string     `json:"description"`
	}{TamperTruncated, last, tail, fmt.Sprintf("this gateway committed rows up to seq %d but the ledger ends at seq %d: rows %d-%d were removed", last, tail, tail+1, last)}
	d, _ := json.Marshal(mm)
	return audit.Event{Type: audit.TypeHeadMismatch, Status: audit.StatusError, Error: mm.Description, Detail: string(d), Time: time.Now().UTC()}
}

// chainLink chains the gateway names: SHA-256 over a domain string, the
// previous row's link, this row's [audit.RowHash] and the gateway name.
// The row hashes alone are the chain every backend shares and an export is
// checked with; the links also cover which gateway wrote each row.
func chainLink(prev, row [sha256.Size]byte, gateway string) [sha256.Size]byte {
	b := make([]byte, 0, len(linkDomain)+2*sha256.Size+len(gateway))
	b = append(b, linkDomain...)
	b = append(b, prev[:]...)
	b = append(b, row[:]...)
	b = append(b, gateway...)
	return sha256.Sum256(b)
}

// Healthy reports whether the ledger can record: nil if the last commit
// succeeded (or none was tried since Open), otherwise that commit's error,
// [ErrReadOnly] or [ErrClosed]. It does no I/O.
func (l *Ledger) Healthy() error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return ErrClosed
	}
	if l.readOnly {
		return ErrReadOnly
	}
	l.healthMu.Lock()
	defer l.healthMu.Unlock()
	return l.writeErr
}

// Ping checks the connection now, for rigout doctor and health checks.
func (l *Ledger) Ping(ctx context.Context) error {
	if err := l.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %s: %w", l.label, err)
	}
	return nil
}

// DigestArgs returns the keyed digest stored in [audit.Event.ArgsDigest]:
// the first 16 hex digits of HMAC-SHA256 of raw under the key kept in the
// database, which every gateway sharing it uses, so digests compare across
// gateways. It returns "" if no key exists (a read-only ledger).
func (l *Ledger) DigestArgs(raw []byte) string {
	return audit.KeyedDigest(l.key, raw)
}

// Close commits the writes already submitted, stops the writer and closes
// the pool. Writes submitted after Close return [ErrClosed]. Close is
// idempotent.
func (l *Ledger) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	if l.commits != nil {
		l.commits.Close()
	}
	l.pool.Close()
	return nil
}

func timeFromNS(ns int64) time.Time         { return time.Unix(0, ns).UTC() }
func timeDurationNS(ns int64) time.Duration { return time.Duration(ns) }

// DSNInfo is what [ParseDSN] reports of a connection string.
type DSNInfo struct {
	Label    string // host:port/database
	Password string // the password the string carries, if any
}

// ParseDSN parses a connection string as Open does, for a caller that must
// check it first (rigout refuses one that carries a password).
func ParseDSN(dsn string) (DSNInfo, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return DSNInfo{}, err
	}
	c := pc.ConnConfig
	return DSNInfo{Label: fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database), Password: c.Password}, nil
}
