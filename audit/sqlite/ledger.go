package sqlite

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/internal/groupcommit"
)

const (
	defaultMaxBatch = 256
	batchWindow     = 5 * time.Millisecond   // a batch stops collecting this long after its first request
	batchLinger     = 500 * time.Microsecond // longest wait for expected callers, see groupcommit
	minBusyTimeout  = 5 * time.Second
	readerConns     = 4
)

// Config configures a [Ledger]. The zero value is not usable: Path is
// required. Every other field has a working default.
type Config struct {
	// Path is the SQLite database file, usually <state dir>/audit.db.
	// Required. Its directory is created with mode 0700 if absent; the file
	// is created with mode 0600.
	Path string

	// SecretPath is the per-install HMAC key used by [Ledger.DigestArgs]:
	// 32 random bytes, mode 0600, created atomically if absent. If empty,
	// Path + ".key" is used.
	SecretPath string

	// HeadPath is the head file, which records the last committed row so
	// that [Ledger.Verify] can detect truncation. If empty, Path + ".head"
	// is used.
	HeadPath string

	// ChainKey keys the row hashes ([audit.KeyedRowHash]) and the head
	// file (HMAC-SHA256), so that someone who can write the ledger but
	// cannot read the key cannot rewrite it undetected. Give it from a
	// place the commands the gateway runs cannot reach (an OS keyring, the
	// gateway's own environment); it must be at least 32 bytes. If nil,
	// the key is derived from the secret at SecretPath
	// ([audit.DeriveChainKey]), which is then as safe as that file. A
	// ledger opened with another key than its rows were chained with
	// records the change (an [audit.TypeChainKey] event) when its tail is
	// chained under one of RetiredChainKeys or its head names the key it
	// was written with, and otherwise records the tail as forged;
	// [Ledger.Verify] cannot check the rows under a key it is not given.
	ChainKey []byte

	// AnchorPath is a second head file, kept where deleting the state
	// directory does not reach (another disk, a directory the commands the
	// gateway runs cannot write). It is written after every commit as the
	// head is, keyed the same way. With it, a writer that finds the ledger
	// shorter than the anchor records it ([audit.TypeHeadMismatch]) and
	// [Ledger.Verify] reports it, even when the database and its head file
	// were deleted together. If empty, there is no anchor.
	AnchorPath string

	// RetiredChainKeys are earlier chain keys: [Ledger.Verify] checks the
	// rows chained under them before a key change, and a writer accepts a
	// tail chained under one as a key change. The writer never chains
	// with them.
	RetiredChainKeys [][]byte

	// ReadOnly opens an existing ledger for Query, Stats and Verify only:
	// nothing is created, migrated or written, and the write methods
	// return [ErrReadOnly]. Open fails with [ErrNoLedger] if Path does not
	// exist.
	ReadOnly bool

	// StoreArgs keeps [audit.Event.Args] (redacted argument values supplied by the
	// caller). If false, the ledger drops Args and keeps only ArgsDigest.
	StoreArgs bool

	// UnsafeSyncNormal runs SQLite with synchronous=NORMAL instead of FULL:
	// a commit is still safe against a crash of the process (kill -9), but
	// rows committed since the last checkpoint can be lost if the machine
	// loses power. It roughly halves the latency an audited call pays.
	UnsafeSyncNormal bool

	// MaxBatch caps the rows committed in one transaction. If zero, 256 is
	// used.
	MaxBatch int

	// BusyTimeout is how long a write waits for another process holding the
	// database lock before it fails. If less than 5s, 5s is used.
	BusyTimeout time.Duration

	// Logger receives operator diagnostics: failed commits, detected
	// tampering, loose file modes. If nil, logs are discarded.
	Logger *slog.Logger

	// Now returns the current time, used for events recorded with a zero
	// Time. If nil, time.Now is used.
	Now func() time.Time

	// Rand is the source of the HMAC secret when one is created. If nil,
	// crypto/rand.Reader is used.
	Rand io.Reader
}

// Ledger is the tamper-evident audit ledger: an append-only SQLite table in
// which each row carries the SHA-256 hash of the previous row.
//
// A Ledger is safe for concurrent use by multiple goroutines. Writes from all
// goroutines are committed in shared batches (group commit), so concurrent
// callers share an fsync; several processes may also open the same file,
// and their writes serialise on SQLite's lock. Close waits for the writes
// in progress; it must be called once the Ledger is no longer needed.
type Ledger struct {
	path       string
	headPath   string
	secretPath string
	anchorPath string
	readOnly   bool
	storeArgs  bool
	maxBatch   int
	log        *slog.Logger
	now        func() time.Time
	secret     []byte // nil when read-only and no key exists yet
	chainKey   []byte // nil when read-only and no key exists yet
	retired    [][]byte
	rdb        *sql.DB
	wdb        *sql.DB                             // nil when read-only
	commits    *groupcommit.Committer[audit.Event] // nil when read-only
	bg         context.Context                     // the writer's context; never cancelled

	// mu protects the following. Methods hold it for reading while they use
	// the databases; Close holds it for writing.
	mu     sync.RWMutex
	closed bool

	// wmu serialises write transactions (the group commits' batches and
	// Prune) and protects the following.
	wmu    sync.Mutex
	wconn  *sql.Conn  // the one write connection, kept for the Ledger's life
	ins    *sql.Stmt  // insertSQL prepared on wconn
	tail   *sql.Stmt  // tailSQL prepared on wconn
	st     statsStmts // the statistics' statements, prepared on wconn
	head   *headFile
	anchor *headFile // nil without Config.AnchorPath
	// last is the chain tail this process last committed or checked against
	// the head. When a transaction finds the same tail, no other writer
	// and no truncation intervened, and the head check is skipped.
	last      headRecord
	lastKnown bool
	// opened is set once Open's first transaction has committed: from
	// then on a tail not chained under the key is a forgery, never a
	// migration or a key change.
	opened bool
	// unkeyedBefore is set when Open migrated the database from a schema
	// without keyed rows: only then may its unkeyed tail be kept.
	unkeyedBefore bool

	// healthMu protects the following.
	healthMu sync.Mutex
	writeErr error // outcome of the last write; nil when it succeeded

	// stmtMu protects the following.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt // Query's statements on rdb, by SQL text
}

var (
	_ audit.Recorder = (*Ledger)(nil)
	_ audit.Querier  = (*Ledger)(nil)
)

// Open opens the ledger at cfg.Path, creating, migrating and checking it.
//
// Unless cfg.ReadOnly is set, Open creates the database, its directory, the
// HMAC secret and the head file as needed, brings the schema to the current
// version, and compares the head file with the database. If rows the head
// records are missing or different, Open logs the fact and appends an
// [audit.TypeHeadMismatch] event, so [Ledger.Verify] keeps reporting the damage.
// Open fails if the database cannot be written: the caller must not serve
// tools it cannot audit.
func Open(ctx context.Context, cfg Config) (*Ledger, error) {
	c := cfg
	if c.Path == "" {
		return nil, errors.New("sqlite: Config.Path is required")
	}
	path, err := filepath.Abs(c.Path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if c.SecretPath == "" {
		c.SecretPath = path + ".key"
	}
	if c.HeadPath == "" {
		c.HeadPath = path + ".head"
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = defaultMaxBatch
	}
	if c.BusyTimeout < minBusyTimeout {
		c.BusyTimeout = minBusyTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	l := &Ledger{
		path:       path,
		headPath:   c.HeadPath,
		secretPath: c.SecretPath,
		anchorPath: c.AnchorPath,
		readOnly:   c.ReadOnly,
		storeArgs:  c.StoreArgs,
		maxBatch:   c.MaxBatch,
		log:        c.Logger,
		now:        c.Now,
		bg:         context.Background(), // for the commits, which outlive their callers' contexts
	}
	if c.ReadOnly {
		if err := l.openReadOnly(ctx, c); err != nil {
			return nil, err
		}
		return l, nil
	}
	if err := l.openReadWrite(ctx, c); err != nil {
		l.closeHandles()
		return nil, err
	}
	l.commits = groupcommit.New(groupcommit.Config[audit.Event]{
		MaxBatch: l.maxBatch, Linger: batchLinger, Window: batchWindow,
		Commit: func(batch []*audit.Event) error {
			return l.write(func(c *chainWriter) error {
				for _, e := range batch {
					if err := c.append(e); err != nil {
						return err
					}
				}
				return nil
			})
		},
	})
	return l, nil
}

func (l *Ledger) openReadOnly(ctx context.Context, c Config) error {
	fi, err := os.Stat(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w at %s", ErrNoLedger, l.path)
	}
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("sqlite: %s is not a regular file", l.path)
	}
	if key, err := loadSecret(c.SecretPath, nil, false); err == nil {
		l.secret = key
	}
	if err := l.setChainKey(c); err != nil {
		return err
	}
	l.rdb, err = openDB(l.path, url.Values{"mode": {"ro"}, "_busy_timeout": {msString(c.BusyTimeout)}})
	if err != nil {
		return err
	}
	l.rdb.SetMaxOpenConns(readerConns)
	var v int
	if err := l.rdb.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		l.rdb.Close()
		return fmt.Errorf("sqlite: open %s: %w", l.path, err)
	}
	if v > schemaVersion {
		l.rdb.Close()
		return &SchemaVersionError{Path: l.path, Found: v, Max: schemaVersion}
	}
	if v < schemaVersion {
		l.rdb.Close()
		return fmt.Errorf("sqlite: %s has schema version %d; open it read-write once to migrate it to %d", l.path, v, schemaVersion)
	}
	return nil
}

func (l *Ledger) openReadWrite(ctx context.Context, c Config) error {
	dir := filepath.Dir(l.path)
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("sqlite: create directory: %w", err)
		}
		if err := os.Chmod(dir, 0o700); err != nil { // MkdirAll is subject to the umask
			return fmt.Errorf("sqlite: create directory: %w", err)
		}
	case err != nil:
		return fmt.Errorf("sqlite: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("sqlite: %s is not a directory", dir)
	case fi.Mode().Perm()&0o077 != 0:
		l.log.LogAttrs(ctx, slog.LevelWarn, "audit directory is accessible by group or others",
			slog.String("dir", dir), slog.String("mode", fmt.Sprintf("%04o", fi.Mode().Perm())))
	}
	if err := createOwnerOnly(ctx, l.log, l.path); err != nil {
		return err
	}
	key, err := loadSecret(c.SecretPath, c.Rand, true)
	if err != nil {
		return err
	}
	l.secret = key
	if err := l.setChainKey(c); err != nil {
		return err
	}

	sync, wantSync := "FULL", 2
	if c.UnsafeSyncNormal {
		sync, wantSync = "NORMAL", 1
	}
	l.wdb, err = openDB(l.path, url.Values{
		"_journal_mode": {"WAL"},
		"_synchronous":  {sync},
		"_busy_timeout": {msString(c.BusyTimeout)},
		"_txlock":       {"immediate"},
	})
	if err != nil {
		return err
	}
	l.wdb.SetMaxOpenConns(1)
	l.wconn, err = l.wdb.Conn(ctx)
	if err != nil {
		return &WriteError{Path: l.path, Op: "open", Err: err}
	}
	// fullfsync makes SQLite use F_FULLFSYNC on macOS, where fsync does not
	// flush the drive's cache; elsewhere it has no effect.
	if _, err := l.wconn.ExecContext(ctx, `PRAGMA fullfsync = ON; PRAGMA checkpoint_fullfsync = ON`); err != nil {
		return &WriteError{Path: l.path, Op: "configure", Err: err}
	}
	var mode string
	var syncLevel int
	if err := l.wconn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return &WriteError{Path: l.path, Op: "configure", Err: err}
	}
	if err := l.wconn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&syncLevel); err != nil {
		return &WriteError{Path: l.path, Op: "configure", Err: err}
	}
	if mode != "wal" || syncLevel != wantSync {
		return fmt.Errorf("sqlite: %s: journal_mode=%s synchronous=%d, want wal and %d (%s)", l.path, mode, syncLevel, wantSync, sync)
	}
	from, err := migrate(ctx, l.wconn, l.path)
	if err != nil {
		return err
	}
	l.unkeyedBefore = from < keyedSchema
	l.ins, err = l.wconn.PrepareContext(ctx, insertSQL)
	if err != nil {
		return &WriteError{Path: l.path, Op: "prepare", Err: err}
	}
	l.tail, err = l.wconn.PrepareContext(ctx, tailSQL)
	if err != nil {
		return &WriteError{Path: l.path, Op: "prepare", Err: err}
	}
	if err := l.st.prepare(ctx, l.wconn); err != nil {
		return &WriteError{Path: l.path, Op: "prepare", Err: err}
	}
	l.head, err = openHeadFile(c.HeadPath)
	if err != nil {
		return err
	}
	if c.AnchorPath != "" {
		if l.anchor, err = openHeadFile(c.AnchorPath); err != nil {
			return fmt.Errorf("sqlite: anchor: %w", err)
		}
	}
	l.rdb, err = openDB(l.path, url.Values{"mode": {"ro"}, "_busy_timeout": {msString(c.BusyTimeout)}})
	if err != nil {
		return err
	}
	l.rdb.SetMaxOpenConns(readerConns)
	// An empty write transaction compares the head with the database and
	// records a mismatch now rather than at the first call.
	if err := l.write(func(*chainWriter) error { return nil }); err != nil {
		return err
	}
	l.opened = true
	return nil
}

// minChainKey is the shortest [Config.ChainKey] accepted.
const minChainKey = 32

// setChainKey sets the chain key from c, or derives it from the secret.
func (l *Ledger) setChainKey(c Config) error {
	for _, k := range append([][]byte{c.ChainKey}, c.RetiredChainKeys...) {
		if k != nil && len(k) < minChainKey {
			return fmt.Errorf("sqlite: a chain key must be at least %d bytes, not %d", minChainKey, len(k))
		}
	}
	switch {
	case c.ChainKey != nil:
		l.chainKey = bytes.Clone(c.ChainKey)
	case l.secret != nil:
		l.chainKey = audit.DeriveChainKey(l.secret)
	}
	for _, k := range c.RetiredChainKeys {
		l.retired = append(l.retired, bytes.Clone(k))
	}
	return nil
}

// createOwnerOnly creates the database file with mode 0600 before SQLite
// writes to it, so its content is never readable by others. It refuses a
// path that exists but is not a regular file.
func createOwnerOnly(ctx context.Context, log *slog.Logger, path string) error {
	fi, err := os.Lstat(path)
	if err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			fi, err = os.Stat(path)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return nil // another process created it first
		}
		if err != nil {
			return &WriteError{Path: path, Op: "create", Err: err}
		}
		return f.Close()
	case err != nil:
		return fmt.Errorf("sqlite: %w", err)
	case !fi.Mode().IsRegular():
		return &WriteError{Path: path, Op: "open", Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	case fi.Mode().Perm()&0o077 != 0:
		log.LogAttrs(ctx, slog.LevelWarn, "audit database is accessible by group or others",
			slog.String("path", path), slog.String("mode", fmt.Sprintf("%04o", fi.Mode().Perm())))
	}
	return nil
}

func openDB(path string, q url.Values) (*sql.DB, error) {
	if q.Get("_journal_mode") == "WAL" {
		if err := beforeOpen(path); err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
	}
	db, err := sql.Open(driverName, dsn(path, q))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

func msString(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }

// Path returns the absolute path of the database file.
func (l *Ledger) Path() string { return l.path }

// Record appends e to the ledger and returns once the transaction holding it
// is committed and fsynced, or with the error that stopped the commit (a
// [*WriteError] when the disk is full or read-only). ctx's cancellation does
// not abandon the write.
//
// The ledger assigns Seq, sets Time when it is zero, drops Args unless
// [Config.StoreArgs] is set, and ignores Hash and PrevHash. It cleans e with
// [audit.Event.Sanitize]: text fields are stored as valid UTF-8 (invalid
// bytes become U+FFFD) of at most 64 KiB (longer values are cut with a
// marker), so odd output never makes the record fail; negative durations
// and byte counts are stored as zero. It refuses what [audit.Event.Validate]
// refuses, with [audit.ErrInvalidEvent]: an event without a Type, with a
// type starting with "audit." (reserved for the ledger's own events), with
// an unknown Phase or with a Time outside 1970-2261.
func (l *Ledger) Record(ctx context.Context, e audit.Event) error {
	_, err := l.Append(ctx, e)
	return err
}

// Append is [Ledger.Record] that also returns the event as stored, with its
// Seq, Time and hashes.
func (l *Ledger) Append(ctx context.Context, e audit.Event) (audit.Event, error) {
	return l.append(context.WithoutCancel(ctx), e, false)
}

func (l *Ledger) append(_ context.Context, e audit.Event, reserved bool) (audit.Event, error) {
	if l.readOnly {
		return audit.Event{}, ErrReadOnly
	}
	if err := e.PrepareAppend(l.storeArgs, reserved, l.now); err != nil {
		return audit.Event{}, err
	}
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

// chainWriter appends rows inside one write transaction.
type chainWriter struct {
	ctx   context.Context
	q     querier // the write connection, inside BEGIN IMMEDIATE
	ins   *sql.Stmt
	now   func() time.Time
	key   []byte            // the chain key
	seq   int64             // last seq in the chain
	hash  [sha256.Size]byte // its row hash
	added int
	st    *statsStmts // nil: do not keep statistics
	delta statsDelta  // the statistics' changes, see flushStats
	seqs  seqDelta    // seq_hour's changes, see flushSeqs
}

func (c *chainWriter) append(e *audit.Event) error {
	e.Seq = c.seq + 1
	if e.Time.IsZero() {
		e.Time = c.now()
	}
	e.Time = e.Time.UTC()
	prev := c.hash
	row := audit.KeyedRowHash(c.key, e, prev)
	if _, err := c.ins.ExecContext(c.ctx, insertArgs(e, prev[:], row[:])...); err != nil {
		return err
	}
	if err := c.note(e); err != nil {
		return err
	}
	e.PrevHash, e.Hash = hexHash(prev), hexHash(row)
	c.seq, c.hash = e.Seq, row
	c.added++
	return nil
}

// write runs fn in one BEGIN IMMEDIATE transaction positioned at the tail of
// the chain, after checking the chain against the head file, commits, and
// then advances the head. The returned error is a [*WriteError] for I/O
// failures; fn's own error is returned as is after a rollback.
func (l *Ledger) write(fn func(*chainWriter) error) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	ctx := l.bg
	err := l.writeLocked(ctx, fn)
	if err != nil {
		l.lastKnown = false
		l.log.LogAttrs(ctx, slog.LevelError, "audit write failed", slog.String("path", l.path), slog.Any("err", err))
	}
	return err
}

func (l *Ledger) writeLocked(ctx context.Context, fn func(*chainWriter) error) error {
	// The transaction is driven by hand on the dedicated connection, so the
	// statements prepared on it are reused; database/sql's Tx would prepare
	// them again for every batch.
	if _, err := l.wconn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return l.setHealth(&WriteError{Path: l.path, Op: "begin", Err: err})
	}
	committed := false
	defer func() {
		if !committed {
			l.wconn.ExecContext(ctx, `ROLLBACK`)
		}
	}()
	c := &chainWriter{ctx: ctx, q: l.wconn, ins: l.ins, now: l.now, key: l.chainKey, st: &l.st, delta: statsDelta{}, seqs: seqDelta{}}
	var last []byte
	switch err := l.tail.QueryRowContext(ctx).Scan(&c.seq, &last); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return l.setHealth(&WriteError{Path: l.path, Op: "read tail", Err: err})
	default:
		copy(c.hash[:], last)
	}
	if l.lastKnown && c.seq == l.last.Seq && c.hash == l.last.Hash {
		// The tail is the one this process left: nothing to check.
	} else if mm, marker, err := l.checkHead(ctx, c); err != nil {
		return l.setHealth(&WriteError{Path: l.path, Op: "check head", Err: err})
	} else {
		if mm != nil {
			if err := c.append(mm); err != nil {
				return l.setHealth(&WriteError{Path: l.path, Op: "insert", Err: err})
			}
			l.log.LogAttrs(ctx, slog.LevelError, "audit ledger does not match its head: rows were truncated or rewritten",
				slog.String("path", l.path), slog.String("detail", mm.Detail), slog.Int64("seq", mm.Seq))
		}
		if marker != nil {
			if err := c.append(marker); err != nil {
				return l.setHealth(&WriteError{Path: l.path, Op: "insert", Err: err})
			}
			l.log.LogAttrs(ctx, slog.LevelInfo, "audit ledger chained under a new key",
				slog.String("path", l.path), slog.String("detail", marker.Detail), slog.Int64("seq", marker.Seq))
		}
	}
	if err := fn(c); err != nil {
		return l.setHealth(&WriteError{Path: l.path, Op: "insert", Err: err})
	}
	if err := c.flushStats(); err != nil {
		return l.setHealth(&WriteError{Path: l.path, Op: "update statistics", Err: err})
	}
	if err := c.flushSeqs(); err != nil {
		return l.setHealth(&WriteError{Path: l.path, Op: "update seq_hour", Err: err})
	}
	if c.added == 0 {
		l.last, l.lastKnown = headRecord{Seq: c.seq, Hash: c.hash}, true
		return l.setHealth(nil)
	}
	if _, err := l.wconn.ExecContext(ctx, `COMMIT`); err != nil {
		// A failed COMMIT may leave the transaction open; the deferred
		// ROLLBACK ends it.
		return l.setHealth(&WriteError{Path: l.path, Op: "commit", Err: err})
	}
	committed = true
	l.last, l.lastKnown = headRecord{Seq: c.seq, Hash: c.hash}, true
	if err := l.head.write(headRecord{Seq: c.seq, Hash: c.hash}, l.chainKey, time.Now(), false); err != nil {
		// The rows are committed, so their callers get nil; health reports
		// that truncation after this point would go unseen.
		l.log.LogAttrs(ctx, slog.LevelError, "audit head not updated", slog.String("path", l.headPath), slog.Any("err", err))
		l.setHealth(&WriteError{Path: l.headPath, Op: "write head", Err: err})
		return nil
	}
	if l.anchor != nil {
		if err := l.anchor.write(headRecord{Seq: c.seq, Hash: c.hash}, l.chainKey, time.Now(), false); err != nil {
			l.log.LogAttrs(ctx, slog.LevelError, "audit anchor not updated", slog.String("path", l.anchorPath), slog.Any("err", err))
			l.setHealth(&WriteError{Path: l.anchorPath, Op: "write anchor", Err: err})
			return nil
		}
	}
	l.setHealth(nil)
	return nil
}

// querier is the write connection as the chain writer uses it.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// headMismatch is the Detail of an [audit.TypeHeadMismatch] event.
type headMismatch struct {
	Found       TamperKind `json:"found"` // TamperTruncated, TamperEdited or TamperHeadMissing
	HeadSeq     int64      `json:"head_seq,omitempty"`
	HeadHash    string     `json:"head_hash,omitempty"`
	LastSeq     int64      `json:"last_seq"`
	LastHash    string     `json:"last_hash,omitempty"`
	Description string     `json:"description"`
}

// chainKeyDetail is the Detail of an [audit.TypeChainKey] event: the row
// holding it and every later one are chained under the key KeyID names,
// the rows before it under PreviousKeyID's ("" when they were unkeyed,
// written before keying).
type chainKeyDetail struct {
	KeyID         string `json:"key_id"`
	PreviousKeyID string `json:"previous_key_id"`
}

// tailState says how the chain's last row is hashed.
type tailState int

const (
	tailEmpty   tailState = iota // no rows
	tailKeyed                    // under the chain key
	tailRetired                  // under one of Config.RetiredChainKeys
	tailUnkeyed                  // with the unkeyed audit.RowHash
	tailOther                    // neither: another key, or an edited row
)

// tailState reads the last row and tells how it is hashed; for
// tailRetired, it also returns the retired key's ID.
func (l *Ledger) tailState(ctx context.Context, c *chainWriter) (tailState, string, error) {
	if c.seq == 0 {
		return tailEmpty, "", nil
	}
	r, err := scanEvent(c.q.QueryRowContext(ctx, `SELECT `+columns+` FROM events WHERE seq = ?`, c.seq))
	if err != nil {
		return tailEmpty, "", err
	}
	if len(r.prev) != sha256.Size {
		return tailOther, "", nil
	}
	prev := [sha256.Size]byte(r.prev)
	if h := audit.KeyedRowHash(l.chainKey, &r.Event, prev); bytes.Equal(h[:], r.hash) {
		return tailKeyed, "", nil
	}
	for _, k := range l.retired {
		if h := audit.KeyedRowHash(k, &r.Event, prev); bytes.Equal(h[:], r.hash) {
			return tailRetired, audit.ChainKeyID(k), nil
		}
	}
	if h := audit.RowHash(&r.Event, prev); bytes.Equal(h[:], r.hash) {
		return tailUnkeyed, "", nil
	}
	return tailOther, "", nil
}

// checkHead compares the head file and the chain's last row with the chain
// as the transaction sees it. When they show rows missing, rewritten or
// written without the chain key, it returns the event to append first, mm.
// On truncation it moves c to continue from the head, so the gap stays
// visible to Verify and sequence numbers are never reused.
//
// When Open finds rows chained otherwise than under the key (a ledger
// written before keying, or under a key since replaced) and nothing
// suggests forgery, it returns marker, the [audit.TypeChainKey] event from
// which the chain is keyed. Later, a tail not chained under the key is
// always a forgery: this process chains only under it.
func (l *Ledger) checkHead(ctx context.Context, c *chainWriter) (mm, marker *audit.Event, err error) {
	tail, retiredID, err := l.tailState(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	h, st, err := l.head.read(l.chainKey)
	if err != nil {
		return nil, nil, err
	}
	// Another process sharing the ledger commits its first rows, then
	// writes the head: for that moment the head is empty while rows exist.
	// Give it a moment before calling the head missing (this transaction
	// holds the write lock, so the rows cannot grow meanwhile).
	for wait := 0; st == headNone && c.seq > 0 && wait < 40; wait++ {
		time.Sleep(5 * time.Millisecond)
		if h, st, err = l.head.read(l.chainKey); err != nil {
			return nil, nil, err
		}
	}
	keyID := audit.ChainKeyID(l.chainKey)
	found := st != headNone
	var m headMismatch
	switch {
	case tail != tailEmpty && tail != tailKeyed && (l.opened || st == headKeyed):
		m = headMismatch{Found: TamperUnkeyed, HeadSeq: h.Seq, HeadHash: hexHash(h.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
			Description: fmt.Sprintf("row %d, the last row, is not chained under the ledger's key (id %s): rows were written or re-chained by someone without the key", c.seq, keyID)}
	case st == headForged:
		m = headMismatch{Found: TamperUnkeyed, HeadSeq: h.Seq, HeadHash: hexHash(h.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
			Description: fmt.Sprintf("the head file %s does not verify under the ledger's key (id %s): it was written by someone without the key", l.headPath, keyID)}
	case tail == tailKeyed && (st == headUnkeyed || st == headOtherKey):
		m = headMismatch{Found: TamperUnkeyed, HeadSeq: h.Seq, HeadHash: hexHash(h.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
			Description: fmt.Sprintf("the head file %s is not keyed with the key the rows are chained under (id %s): it was written by someone without the key", l.headPath, keyID)}
	case !found && c.seq == 0:
		// a new ledger
	case !found:
		m = headMismatch{Found: TamperHeadMissing, LastSeq: c.seq, LastHash: hexHash(c.hash),
			Description: fmt.Sprintf("the head file %s is missing or unreadable while the ledger holds rows up to seq %d; rows after it may have been removed", l.headPath, c.seq)}
	case h.Seq > c.seq:
		m = headMismatch{Found: TamperTruncated, HeadSeq: h.Seq, HeadHash: hexHash(h.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
			Description: fmt.Sprintf("the head records seq %d but the ledger ends at seq %d: rows %d-%d were removed", h.Seq, c.seq, c.seq+1, h.Seq)}
		c.seq, c.hash = h.Seq, h.Hash
	default:
		var stored []byte
		err := c.q.QueryRowContext(ctx, `SELECT row_hash FROM events WHERE seq = ?`, h.Seq).Scan(&stored)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if ok, err := prunedThrough(ctx, c.q, h.Seq); err != nil {
				return nil, nil, err
			} else if !ok {
				m = headMismatch{Found: TamperDeleted, HeadSeq: h.Seq, HeadHash: hexHash(h.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
					Description: fmt.Sprintf("the head records seq %d, which is missing from the ledger and was not pruned", h.Seq)}
			}
		case err != nil:
			return nil, nil, err
		case bytes.Equal(stored, h.Hash[:]):
		default:
			m = headMismatch{Found: TamperEdited, HeadSeq: h.Seq, HeadHash: hexHash(h.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
				Description: fmt.Sprintf("row %d differs from the head's record of it: the chain was rewritten", h.Seq)}
		}
	}
	// At open, a tail not chained under the key is kept, from an
	// audit.chain_key row on, only when it is accounted for: the ledger
	// predates keying (Open migrated it), the tail is under a retired key
	// the operator gave, or the head names the key it was written with
	// (a replaced key: Verify cannot check the rows before the change
	// without it). Otherwise it was written without the key.
	var k *chainKeyDetail
	if !l.opened && tail != tailEmpty && tail != tailKeyed && m.Found != TamperUnkeyed {
		switch {
		case tail == tailRetired:
			k = &chainKeyDetail{KeyID: keyID, PreviousKeyID: retiredID}
		case l.unkeyedBefore:
			k = &chainKeyDetail{KeyID: keyID, PreviousKeyID: ""}
		case st == headOtherKey:
			k = &chainKeyDetail{KeyID: keyID, PreviousKeyID: h.KeyID}
		case m.Found == "":
			m = headMismatch{Found: TamperUnkeyed, HeadSeq: h.Seq, HeadHash: hexHash(h.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
				Description: fmt.Sprintf("row %d, the last row, is not chained under the ledger's key (id %s), which chained it before: rows were written or re-chained by someone without the key", c.seq, keyID)}
		}
	}
	if m.Found == "" && l.anchor != nil {
		if m, err = l.checkAnchor(ctx, c); err != nil {
			return nil, nil, err
		}
	}
	if m.Found != "" {
		d, _ := json.Marshal(m)
		mm = &audit.Event{Type: audit.TypeHeadMismatch, Status: audit.StatusError, Error: m.Description, Detail: string(d)}
	}
	if k != nil {
		d, _ := json.Marshal(k)
		marker = &audit.Event{Type: audit.TypeChainKey, Status: audit.StatusOK, Detail: string(d)}
	}
	return mm, marker, nil
}

// checkAnchor compares the anchor file with the chain. An anchor beyond
// the chain's end means rows were cut or the whole ledger deleted, whatever
// key the anchor is keyed with; an anchor keyed with the chain key must
// also name a row that is present and unchanged, or pruned.
func (l *Ledger) checkAnchor(ctx context.Context, c *chainWriter) (headMismatch, error) {
	a, st, err := l.anchor.read(l.chainKey)
	if err != nil || st == headNone {
		return headMismatch{}, err
	}
	if a.Seq > c.seq {
		m := headMismatch{Found: TamperTruncated, HeadSeq: a.Seq, HeadHash: hexHash(a.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
			Description: fmt.Sprintf("the anchor %s records seq %d but the ledger ends at seq %d: rows %d-%d were removed, or the whole ledger was deleted", l.anchorPath, a.Seq, c.seq, c.seq+1, a.Seq)}
		c.seq, c.hash = a.Seq, a.Hash
		return m, nil
	}
	if st != headKeyed {
		return headMismatch{}, nil
	}
	var stored []byte
	switch err := c.q.QueryRowContext(ctx, `SELECT row_hash FROM events WHERE seq = ?`, a.Seq).Scan(&stored); {
	case errors.Is(err, sql.ErrNoRows):
		if ok, err := prunedThrough(ctx, c.q, a.Seq); err != nil || ok {
			return headMismatch{}, err
		}
		return headMismatch{Found: TamperDeleted, HeadSeq: a.Seq, HeadHash: hexHash(a.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
			Description: fmt.Sprintf("the anchor %s records seq %d, which is missing from the ledger and was not pruned", l.anchorPath, a.Seq)}, nil
	case err != nil:
		return headMismatch{}, err
	case !bytes.Equal(stored, a.Hash[:]):
		return headMismatch{Found: TamperEdited, HeadSeq: a.Seq, HeadHash: hexHash(a.Hash), LastSeq: c.seq, LastHash: hexHash(c.hash),
			Description: fmt.Sprintf("row %d differs from the anchor's record of it: the chain was rewritten", a.Seq)}, nil
	}
	return headMismatch{}, nil
}

// prunedThrough reports whether a recorded prune removed seq.
func prunedThrough(ctx context.Context, q querier, seq int64) (bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT detail FROM events WHERE type = ? ORDER BY seq DESC`, audit.TypePrune)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return false, err
		}
		var p pruneDetail
		if json.Unmarshal([]byte(d), &p) == nil && p.Rows > 0 && p.LastSeq >= seq {
			return true, nil
		}
	}
	return false, rows.Err()
}

func (l *Ledger) setHealth(err error) error {
	l.healthMu.Lock()
	l.writeErr = err
	l.healthMu.Unlock()
	return err
}

// Healthy reports whether the ledger can record: nil if the last write
// committed (or none has been tried since Open succeeded), otherwise the
// error of the last failed write, [ErrReadOnly] or [ErrClosed]. It does no
// I/O, so /health may call it on every request.
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

// DigestArgs returns the keyed digest stored in [audit.Event.ArgsDigest]: the
// first 16 hex digits of HMAC-SHA256 of raw under the per-install secret.
// Identical arguments give identical digests within one install, while a
// short secret among them cannot be recovered by hashing guesses. raw should
// be a canonical encoding, such as json.Marshal of the argument map (which
// sorts keys). It returns "" on a read-only ledger whose secret does not exist.
func (l *Ledger) DigestArgs(raw []byte) string {
	return audit.KeyedDigest(l.secret, raw)
}

// Close commits the writes already submitted, stops the writer and closes
// the files. Writes submitted after Close return
// [ErrClosed]. Close is idempotent.
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
	return l.closeHandles()
}

func (l *Ledger) closeHandles() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	var errs []error
	// The readers close first, so that the write connection is the last
	// one: SQLite then checkpoints the WAL into the database and removes
	// it, unless another process still has the file open.
	l.stmtMu.Lock()
	for _, s := range l.stmts {
		errs = append(errs, s.Close())
	}
	l.stmts = nil
	l.stmtMu.Unlock()
	if l.rdb != nil {
		errs = append(errs, l.rdb.Close())
	}
	for _, s := range []*sql.Stmt{l.ins, l.tail} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	errs = append(errs, l.st.close()...)
	if l.wconn != nil {
		errs = append(errs, l.wconn.Close())
	}
	if l.wdb != nil {
		errs = append(errs, l.wdb.Close())
	}
	if l.anchor != nil {
		errs = append(errs, l.anchor.close())
	}
	if l.head != nil {
		errs = append(errs, l.head.close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// hexHash is the printed form of a hash.
func hexHash(h [sha256.Size]byte) string { return hex.EncodeToString(h[:]) }

// timeFromNS and timeDuration convert stored integers.
func timeFromNS(ns int64) time.Time       { return time.Unix(0, ns).UTC() }
func timeDuration(ns int64) time.Duration { return time.Duration(ns) }
func fmtHash(b []byte) string             { return hex.EncodeToString(b) }
