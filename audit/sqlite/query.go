package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
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
	q := `SELECT ` + columns + ` FROM events WHERE ` + cond
	if f.Newest {
		q += ` ORDER BY seq DESC`
	} else {
		q += ` ORDER BY seq`
	}
	if f.Limit > 0 {
		q += ` LIMIT ?`
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

// Stats returns per-tool statistics over the events matching f (which
// should usually leave Type, Status and Limit empty), sorted by tool name.
// Events without a tool are ignored.
func (l *Ledger) Stats(ctx context.Context, f audit.Filter) ([]audit.ToolStats, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	cond, args := where(&f)
	tx, err := l.rdb.BeginTx(ctx, nil) // one snapshot for both queries
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT tool, status, decision, type, duration_ns FROM events
		WHERE tool != '' AND phase != ? AND `+cond+` ORDER BY tool`, append([]any{audit.PhaseIntent}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	byTool := map[string]*audit.ToolStats{}
	durations := map[string][]time.Duration{}
	get := func(tool string) *audit.ToolStats {
		s := byTool[tool]
		if s == nil {
			s = &audit.ToolStats{Tool: tool}
			byTool[tool] = s
		}
		return s
	}
	for rows.Next() {
		var tool, typ string
		var status audit.Status
		var decision audit.Decision
		var dur int64
		if err := rows.Scan(&tool, &status, &decision, &typ, &dur); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: stats: %w", err)
		}
		s := get(tool)
		s.Calls++
		switch {
		case status == audit.StatusDenied || decision == audit.DecisionDeny || typ == audit.TypeToolDenied:
			s.Denials++
			continue
		case status != audit.StatusOK:
			s.Errors++
		}
		durations[tool] = append(durations[tool], time.Duration(dur))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	rows, err = tx.QueryContext(ctx, `SELECT tool, COUNT(*) FROM events AS i
		WHERE tool != '' AND phase = ? AND call_id != '' AND `+cond+`
		AND NOT EXISTS (SELECT 1 FROM events AS d WHERE d.call_id = i.call_id AND d.phase = ?)
		GROUP BY tool`, append(append([]any{audit.PhaseIntent}, args...), audit.PhaseDone)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	for rows.Next() {
		var tool string
		var n int64
		if err := rows.Scan(&tool, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: stats: %w", err)
		}
		get(tool).Unfinished = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	out := make([]audit.ToolStats, 0, len(byTool))
	for tool, s := range byTool {
		d := durations[tool]
		slices.Sort(d)
		s.P50, s.P95 = percentile(d, 50), percentile(d, 95)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b audit.ToolStats) int { return strings.Compare(a.Tool, b.Tool) })
	return out, nil
}

// percentile returns the nearest-rank p-th percentile of sorted d.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	rank := (p*len(d) + 99) / 100 // ceil(p/100 * n)
	if rank < 1 {
		rank = 1
	}
	return d[rank-1]
}
