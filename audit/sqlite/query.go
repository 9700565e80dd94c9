package sqlite

import (
	"context"
	"database/sql"
	"fmt"
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
func (l *Ledger) Query(ctx context.Context, f audit.Filter) ([]audit.Event, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	cond, args := where(&f)
	order := ` ORDER BY seq`
	if f.Newest {
		order = ` ORDER BY seq DESC`
	}
	q := `SELECT ` + columns + ` FROM events WHERE ` + cond + order
	if f.Limit > 0 {
		// The seqs are chosen first, from an index alone where one covers
		// the condition (tool and time: events_tool_time), and only the
		// rows kept are read: sorting the matching rows themselves would
		// read every one of them.
		q = `SELECT ` + columns + ` FROM events WHERE seq IN (SELECT seq FROM events WHERE ` + cond + order + ` LIMIT ?)` + order
		args = append(args, f.Limit)
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
