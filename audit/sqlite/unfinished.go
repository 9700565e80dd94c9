package sqlite

import (
	"context"
	"fmt"

	"github.com/rigout/rigout/audit"
)

// Unfinished returns the intent rows that no done row has finished, oldest
// first, at most limit of them (all if limit <= 0): calls in flight, or
// interrupted when a gateway stopped without finishing them. A gateway
// starting on the ledger reconciles the ones it can tell are not in
// flight by recording their done row.
func (l *Ledger) Unfinished(ctx context.Context, limit int) ([]audit.Event, error) {
	l.mu.RLock()
	closed := l.closed
	l.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	q := `SELECT call_id FROM open_calls ORDER BY seq`
	var args []any
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := l.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: unfinished calls: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: unfinished calls: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: unfinished calls: %w", err)
	}
	var out []audit.Event
	for _, id := range ids {
		evs, err := l.Query(ctx, audit.Filter{CallID: id, Phase: audit.PhaseIntent, Limit: 1})
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}
