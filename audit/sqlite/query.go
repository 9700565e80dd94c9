package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/internal/sqlwhere"
)

// sqliteSQL is SQLite's spelling of the ledgers' shared conditions.
func sqliteSQL() sqlwhere.Dialect {
	return sqlwhere.Dialect{
		Arg:    func(int) string { return "?" },
		Prefix: func(col, n string) string { return "substr(" + col + ", 1, " + n + ")" },
		True:   "1",
	}
}

// where returns the SQL condition and its arguments.
func where(f *audit.Filter) (string, []any) { return sqlwhere.Where(f, sqliteSQL(), nil) }

// clampNS converts t to Unix nanoseconds, saturating outside the int64 range.
func clampNS(t time.Time) int64 { return sqlwhere.ClampNS(t) }

// maxStmts bounds the statements Query keeps prepared: one per filter
// shape (which fields are set, newest first or not, a limit or not).
const maxStmts = 128

// stmt returns q prepared on the read pool and kept for the Ledger's life,
// and the function to call when done with it. Past maxStmts shapes, a new
// one is prepared for this use alone and closed by done.
func (l *Ledger) stmt(ctx context.Context, q string) (st *sql.Stmt, done func(), err error) {
	l.stmtMu.Lock()
	defer l.stmtMu.Unlock()
	if s, ok := l.stmts[q]; ok {
		return s, func() {}, nil
	}
	s, err := l.rdb.PrepareContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if len(l.stmts) >= maxStmts {
		return s, func() { s.Close() }, nil
	}
	if l.stmts == nil {
		l.stmts = map[string]*sql.Stmt{}
	}
	l.stmts[q] = s
	return s, func() {}, nil
}

// Query returns the events matching f in ascending Seq order, with their
// hashes.
//
// With a limit, the seqs are chosen first and only the rows kept are read.
// A filter with a time window (and no principal or call ID, whose indexes
// already list rows in seq order) is planned from seq_hour: when the
// window's hours hold more than a few times the limit rows, it scans in
// seq order, through events_tool_seq for a tool or the table itself for
// all, between the window's exact seq bounds (see seqhour.go), and stops
// after the limit; otherwise, or when the seq bounds span many more rows
// than the window holds (clocks far apart), it reads the window's rows
// from events_tool_time or events_time and sorts them.
func (l *Ledger) Query(ctx context.Context, f audit.Filter) ([]audit.Event, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	q, args, err := l.plan(ctx, &f)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	st, done, err := l.stmt(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	defer done()
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	defer rows.Close()
	var out []audit.Event
	for rows.Next() {
		r, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: query: %w", err)
		}
		out = append(out, r.Event)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	if f.Newest {
		slices.Reverse(out)
	}
	return out, nil
}

// Planning constants: a window whose hours hold at most seqScanMin times
// the limit rows is read whole and sorted (cheap, and immune to the
// clocks); a seq scan is chosen only while the seq bounds span at most
// seqSpanSlack times the rows the window's hours hold.
const (
	seqScanMin   = 2
	seqSpanSlack = 4
)

// Plans, for tests and the benchmark.
const (
	planSort    = "sort"     // the matching rows read whole and sorted by seq
	planSeqScan = "seq scan" // a scan in seq order between seq_hour's bounds
)

// plan returns the statement and arguments for f.
func (l *Ledger) plan(ctx context.Context, f *audit.Filter) (string, []any, error) {
	kind, err := l.choosePlan(ctx, f)
	if err != nil {
		return "", nil, err
	}
	q, args := planSQL(f, kind)
	return q, args, nil
}

// windowNS returns f's time window [lo, hi) in Unix nanoseconds, unbounded
// where f sets no bound, and whether it is empty.
func windowNS(f *audit.Filter) (lo, hi int64, empty bool) {
	lo, hi = int64(math.MinInt64), int64(math.MaxInt64)
	if !f.Since.IsZero() {
		lo = clampNS(f.Since)
	}
	if !f.Until.IsZero() {
		hi = clampNS(f.Until)
	}
	return lo, hi, lo >= hi
}

// windowHours returns the hours a row matching f's time window can be in.
func windowHours(f *audit.Filter) (from, to int64, empty bool) {
	lo, hi, empty := windowNS(f)
	if empty {
		return 0, 0, true
	}
	return floorDiv(lo, hourNS), floorDiv(hi-1, hourNS), false
}

// choosePlan picks planSeqScan or planSort for f (see Query).
func (l *Ledger) choosePlan(ctx context.Context, f *audit.Filter) (string, error) {
	if f.Limit <= 0 || (f.Since.IsZero() && f.Until.IsZero()) || f.Principal != "" || f.CallID != "" {
		return planSort, nil
	}
	from, to, empty := windowHours(f)
	if empty {
		return planSort, nil
	}
	st, done, err := l.stmt(ctx, seqWindowSQL)
	if err != nil {
		return "", err
	}
	defer done()
	w, err := scanSeqWindow(st.QueryRowContext(ctx, f.Tool, from, to))
	if err != nil {
		return "", err
	}
	if !w.hasSpans || w.tool <= seqScanMin*int64(f.Limit) || w.hi-w.lo+1 > seqSpanSlack*w.all {
		return planSort, nil
	}
	return planSeqScan, nil
}

// seqLoSQL and seqHiSQL bound seq by seq_hour over the hours [?, ?], for
// one tool (the %s adds its condition) or all. An empty set of hours gives NULL, which matches no
// row: no row is in those hours.
const (
	seqLoSQL = `(SELECT MIN(min_seq) FROM seq_hour WHERE hour >= ? AND hour <= ?%s)`
	seqHiSQL = `(SELECT MAX(max_seq) FROM seq_hour WHERE hour >= ? AND hour <= ?%s)`
)

// planSQL returns the statement of plan kind for f and its arguments. A
// seq scan's bounds are subqueries of the statement, so they come from
// the same snapshot as the rows.
func planSQL(f *audit.Filter, kind string) (string, []any) {
	cond, args := where(f)
	order := ` ORDER BY seq`
	if f.Newest {
		order = ` ORDER BY seq DESC`
	}
	if f.Limit <= 0 {
		return `SELECT ` + columns + ` FROM events WHERE ` + cond + order, args
	}
	if kind == planSeqScan {
		from, to, _ := windowHours(f)
		toolCond := ""
		if f.Tool != "" {
			toolCond = ` AND tool = ?`
		}
		bound := func(q string) string {
			args = append(args, from, to)
			if f.Tool != "" {
				args = append(args, f.Tool)
			}
			return fmt.Sprintf(q, toolCond)
		}
		cond += ` AND seq >= ` + bound(seqLoSQL) + ` AND seq <= ` + bound(seqHiSQL)
		args = append(args, f.Limit)
		if f.Tool != "" {
			// events_tool_seq lists one tool's rows in seq order with
			// their times: the rows are read only once chosen.
			return `SELECT ` + columns + ` FROM events WHERE seq IN (SELECT seq FROM events INDEXED BY events_tool_seq WHERE ` +
				cond + order + ` LIMIT ?)` + order, args
		}
		// The table is in seq order: a range of it, no index.
		return `SELECT ` + columns + ` FROM events NOT INDEXED WHERE ` + cond + order + ` LIMIT ?`, args
	}
	// The seqs are chosen first, from an index alone where one covers the
	// condition (tool and time: events_tool_time), and only the rows kept
	// are read: sorting the matching rows themselves would read every one
	// of them.
	// With a time window, the index is named: left to itself, SQLite
	// prefers the order of events_tool_seq or of the table, and would read
	// a tool's (or the ledger's) rows from the first to find a recent hour.
	index := ""
	if (!f.Since.IsZero() || !f.Until.IsZero()) && f.Principal == "" && f.CallID == "" {
		index = ` INDEXED BY events_time`
		if f.Tool != "" {
			index = ` INDEXED BY events_tool_time`
		}
	}
	args = append(args, f.Limit)
	return `SELECT ` + columns + ` FROM events WHERE seq IN (SELECT seq FROM events` + index + ` WHERE ` + cond + order + ` LIMIT ?)` + order, args
}
