package sqlite

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rigout/rigout/audit"
)

// importBatch is how many rows one INSERT of Import holds.
const importBatch = 32

// openCall is an intent row Import has not seen finished.
type openCall struct {
	seq    int64
	tool   string
	timeNS int64
}

// ImportReport describes what [Import] wrote.
type ImportReport struct {
	Rows    int64  // events imported
	LastSeq int64  // seq of the last one; 0 if none
	Hash    string // its hash: the chain's tail
}

// Import creates a new ledger at cfg.Path holding the events next yields,
// in order, stored as [Ledger.Record] stores them (prepared by
// [audit.Event.PrepareAppend], chained, counted in the statistics), and
// closes it. next fills e and reports whether it did; it is called until it
// reports false.
//
// The events are written in one transaction without a journal, the
// secondary indexes are built once at the end and the statistics are
// added up in memory: many times faster than recording the events one by
// one, for seeding a ledger (from an export, or a large one for a
// benchmark). The result is an ordinary ledger, which [Open] then opens
// and checks; Import does. Import refuses a path that exists, and removes
// what it created if it fails. Nothing else may use the path meanwhile.
func Import(ctx context.Context, cfg Config, next func(e *audit.Event) bool) (ImportReport, error) {
	var rep ImportReport
	if cfg.ReadOnly {
		return rep, ErrReadOnly
	}
	if cfg.Path == "" {
		return rep, errors.New("sqlite: Config.Path is required")
	}
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return rep, fmt.Errorf("sqlite: %w", err)
	}
	headPath := cfg.HeadPath
	if headPath == "" {
		headPath = path + ".head"
	}
	for _, p := range []string{path, headPath} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			if err == nil {
				err = fs.ErrExist
			}
			return rep, fmt.Errorf("sqlite: import into %s: %w", p, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return rep, fmt.Errorf("sqlite: create directory: %w", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(path)
			os.Remove(path + "-journal")
			os.Remove(headPath)
		}
	}()
	if err := createOwnerOnly(ctx, slog.New(slog.DiscardHandler), path); err != nil {
		return rep, err
	}
	// The chain key, as Open finds or makes it.
	kl := &Ledger{}
	secretPath := cfg.SecretPath
	if secretPath == "" {
		secretPath = path + ".key"
	}
	rnd := cfg.Rand
	if rnd == nil {
		rnd = rand.Reader
	}
	if kl.secret, err = loadSecret(secretPath, rnd, true); err != nil {
		return rep, err
	}
	if err := kl.setChainKey(cfg); err != nil {
		return rep, err
	}
	last, err := importRows(ctx, path, cfg.StoreArgs, kl.chainKey, now, next, &rep)
	if err != nil {
		return ImportReport{}, err
	}
	h, err := openHeadFile(headPath)
	if err != nil {
		return ImportReport{}, err
	}
	err = h.write(last, kl.chainKey, time.Now(), true)
	if cerr := h.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ImportReport{}, &WriteError{Path: headPath, Op: "write head", Err: err}
	}
	// An ordinary open: the secret, the schema, the head against the rows.
	l, err := Open(ctx, cfg)
	if err != nil {
		return ImportReport{}, err
	}
	if err := l.Close(); err != nil {
		return ImportReport{}, err
	}
	ok = true
	return rep, nil
}

// importRows writes the database of Import and returns its tail.
func importRows(ctx context.Context, path string, storeArgs bool, key []byte, now func() time.Time, next func(*audit.Event) bool, rep *ImportReport) (headRecord, error) {
	// No journal: a failed import is removed, not rolled back.
	db, err := openDB(path, url.Values{"_journal_mode": {"OFF"}, "_synchronous": {"OFF"}})
	if err != nil {
		return headRecord{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return headRecord{}, &WriteError{Path: path, Op: "open", Err: err}
	}
	defer conn.Close()
	if _, err := migrate(ctx, conn, path); err != nil {
		return headRecord{}, err
	}
	exec := func(q string, args ...any) error {
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			return &WriteError{Path: path, Op: "import", Err: fmt.Errorf("%.60s: %w", q, err)}
		}
		return nil
	}
	// A large cache, and helper threads for the sorts that build indexes.
	if err := exec(`PRAGMA cache_size = -262144; PRAGMA threads = 2`); err != nil {
		return headRecord{}, err
	}
	if err := exec(`BEGIN`); err != nil {
		return headRecord{}, err
	}
	// The secondary indexes are dropped and built again from their own
	// statements after the rows are in: one sort each instead of a b-tree
	// insert per row and index.
	rows, err := conn.QueryContext(ctx, `SELECT name, sql FROM sqlite_master
		WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL`)
	if err != nil {
		return headRecord{}, &WriteError{Path: path, Op: "import", Err: err}
	}
	var names, creates []string
	for rows.Next() {
		var name, q string
		if err := rows.Scan(&name, &q); err != nil {
			rows.Close()
			return headRecord{}, &WriteError{Path: path, Op: "import", Err: err}
		}
		names, creates = append(names, name), append(creates, q)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return headRecord{}, &WriteError{Path: path, Op: "import", Err: err}
	}
	for _, name := range names {
		if err := exec(`DROP INDEX ` + name); err != nil {
			return headRecord{}, err
		}
	}
	// Rows go in importBatch at a time, one statement each: its cost is
	// mostly per statement, not per value.
	batchSQL := insertSQL + strings.Repeat(`, (`+strings.TrimSuffix(strings.Repeat("?, ", 28), ", ")+`)`, importBatch-1)
	insBatch, err := conn.PrepareContext(ctx, batchSQL)
	if err != nil {
		return headRecord{}, &WriteError{Path: path, Op: "prepare", Err: err}
	}
	defer insBatch.Close()
	ins, err := conn.PrepareContext(ctx, insertSQL)
	if err != nil {
		return headRecord{}, &WriteError{Path: path, Op: "prepare", Err: err}
	}
	defer ins.Close()
	// The chain and the statistics as chainWriter.append and note keep
	// them, the statistics in memory, written once at the end. A goroutine
	// prepares the batches while this one inserts them.
	c := &chainWriter{ctx: ctx, q: conn, ins: ins, now: now, key: key, delta: statsDelta{}, seqs: seqDelta{}}
	// The intents no later done row finished, by call ID; at the end each
	// is checked against the done rows before it, as note does.
	pending := map[string][]openCall{}
	batches := make(chan []any, 4)
	stop := make(chan struct{})
	var prepErr error
	go func() {
		defer close(batches)
		args := make([]any, 0, 28*importBatch)
		for {
			var e audit.Event
			if !next(&e) {
				break
			}
			if err := e.PrepareAppend(storeArgs, false, now); err != nil {
				prepErr = fmt.Errorf("sqlite: import: event %d: %w", c.added+1, err)
				return
			}
			e.Seq = c.seq + 1
			e.Time = e.Time.UTC()
			prev := c.hash
			row := audit.KeyedRowHash(key, &e, prev)
			args = append(args, insertArgs(&e, prev[:], row[:])...)
			c.seq, c.hash = e.Seq, row
			c.added++
			t := e.Time.UnixNano()
			c.seqs.add(e.Tool, t, e.Seq)
			if e.Phase == audit.PhaseDone && e.CallID != "" {
				delete(pending, e.CallID)
			}
			switch {
			case e.Tool == "":
			case e.Phase != audit.PhaseIntent:
				c.delta.countFinal(e.Tool, t, e.Status, e.Decision, string(e.Type), int64(e.Duration))
			case e.CallID != "":
				pending[e.CallID] = append(pending[e.CallID], openCall{e.Seq, e.Tool, t})
			}
			if len(args) == cap(args) {
				select {
				case batches <- args:
				case <-stop:
					return
				}
				args = make([]any, 0, 28*importBatch)
			}
		}
		if len(args) > 0 {
			select {
			case batches <- args:
			case <-stop:
			}
		}
	}()
	var insErr error
	for args := range batches { // drained to the end, so the goroutine ends
		if insErr != nil {
			continue
		}
		if len(args) == 28*importBatch {
			_, insErr = insBatch.ExecContext(ctx, args...)
		} else {
			for ; len(args) > 0 && insErr == nil; args = args[28:] {
				_, insErr = ins.ExecContext(ctx, args[:28]...)
			}
		}
		if insErr != nil {
			close(stop)
		}
	}
	// The goroutine has ended (batches is closed): c is this one's again.
	if prepErr != nil {
		return headRecord{}, prepErr
	}
	if insErr != nil {
		return headRecord{}, &WriteError{Path: path, Op: "insert", Err: insErr}
	}
	for _, q := range creates {
		if err := exec(q); err != nil {
			return headRecord{}, err
		}
	}
	for k, b := range c.delta {
		if err := exec(bucketPutSQL, k.hour, k.tool, b.calls, b.denials, b.errors, b.hist.encode()); err != nil {
			return headRecord{}, err
		}
	}
	for k, s := range c.seqs {
		if err := exec(seqPutSQL, k.tool, k.hour, s.min, s.max, s.rows); err != nil {
			return headRecord{}, err
		}
	}
	for id, calls := range pending {
		for _, o := range calls {
			if err := exec(openCallSQL, o.seq, id, o.tool, o.timeNS, id); err != nil {
				return headRecord{}, err
			}
		}
	}
	if err := exec(`COMMIT`); err != nil {
		return headRecord{}, err
	}
	var mode string
	if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil || mode != "wal" {
		return headRecord{}, &WriteError{Path: path, Op: "set journal_mode=WAL", Err: fmt.Errorf("%q, %v", mode, err)}
	}
	*rep = ImportReport{Rows: int64(c.added), LastSeq: c.seq}
	if c.added > 0 {
		rep.Hash = hexHash(c.hash)
	}
	return headRecord{Seq: c.seq, Hash: c.hash}, nil
}
