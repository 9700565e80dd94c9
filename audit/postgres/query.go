package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/internal/sqlwhere"
)

// postgresSQL is PostgreSQL's spelling of the ledgers' shared conditions.
func postgresSQL() sqlwhere.Dialect {
	return sqlwhere.Dialect{
		Arg:    func(n int) string { return fmt.Sprintf("$%d", n) },
		Prefix: func(col, n string) string { return "left(" + col + ", " + n + ")" },
		True:   "true",
	}
}

// where returns the SQL condition for f and its arguments, numbered from
// $(len(args)+1); a gateway name restricts it to that gateway's rows.
func where(f *audit.Filter, gateway string, args []any) (string, []any) {
	return sqlwhere.Where(f, postgresSQL(), args, sqlwhere.Eq{Col: "gateway", Value: gateway})
}

// Query returns the events matching f in ascending Seq order, with their
// hashes, whichever gateway wrote them.
func (l *Ledger) Query(ctx context.Context, f audit.Filter) ([]audit.Event, error) {
	rows, err := l.QueryRows(ctx, f, "")
	if err != nil {
		return nil, err
	}
	out := make([]audit.Event, len(rows))
	for i := range rows {
		out[i] = rows[i].Event
	}
	return out, nil
}

// QueryRows is [Ledger.Query] that also returns the gateway that wrote each
// row; a non-empty gateway keeps only that gateway's rows.
func (l *Ledger) QueryRows(ctx context.Context, f audit.Filter, gateway string) ([]Row, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	cond, args := where(&f, gateway, nil)
	q := `SELECT ` + columns + ` FROM rigout_audit_events WHERE ` + cond
	if f.Newest {
		q += ` ORDER BY seq DESC`
	} else {
		q += ` ORDER BY seq`
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := l.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: query: %w", l.label, err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: %s: query: %w", l.label, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: %s: query: %w", l.label, err)
	}
	if f.Newest {
		slices.Reverse(out)
	}
	return out, nil
}

// Stats returns per-tool statistics over the events matching f, counted as
// the SQLite ledger counts them (see [audit.ToolStats]), sorted by tool.
func (l *Ledger) Stats(ctx context.Context, f audit.Filter) ([]audit.ToolStats, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	fail := func(err error) ([]audit.ToolStats, error) {
		return nil, fmt.Errorf("postgres: %s: stats: %w", l.label, err)
	}
	tx, err := l.pool.Begin(ctx) // one snapshot for both queries
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY`); err != nil {
		return fail(err)
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
	cond, args := where(&f, "", []any{audit.PhaseIntent})
	rows, err := tx.Query(ctx, `SELECT tool, status, decision, type, duration_ns FROM rigout_audit_events
		WHERE tool != '' AND phase != $1 AND `+cond, args...)
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var tool, typ, status, decision string
		var dur int64
		if err := rows.Scan(&tool, &status, &decision, &typ, &dur); err != nil {
			rows.Close()
			return fail(err)
		}
		s := get(tool)
		s.Calls++
		switch {
		case audit.Status(status) == audit.StatusDenied || audit.Decision(decision) == audit.DecisionDeny || audit.EventType(typ) == audit.TypeToolDenied:
			s.Denials++
			continue
		case audit.Status(status) != audit.StatusOK:
			s.Errors++
		}
		durations[tool] = append(durations[tool], time.Duration(dur))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	cond, args = where(&f, "", []any{audit.PhaseIntent, audit.PhaseDone})
	rows, err = tx.Query(ctx, `SELECT tool, COUNT(*) FROM rigout_audit_events AS i
		WHERE tool != '' AND phase = $1 AND call_id != '' AND `+cond+`
		AND NOT EXISTS (SELECT 1 FROM rigout_audit_events AS d WHERE d.call_id = i.call_id AND d.call_id != '' AND d.phase = $2)
		GROUP BY tool`, args...)
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var tool string
		var n int64
		if err := rows.Scan(&tool, &n); err != nil {
			rows.Close()
			return fail(err)
		}
		get(tool).Unfinished = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
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

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	rank := max((p*len(d)+99)/100, 1)
	return d[rank-1]
}
