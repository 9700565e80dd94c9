package sqlite

import (
	"context"
	"database/sql"
)

// The seq_hour table maps time to seq. A row's seq is its place in the
// chain and its time is the clock of the process that wrote it, so the two
// are not ordered together: clocks go backwards, and two gateways may
// write one file. seq_hour records, for each tool and hour, the smallest
// and largest seq of the rows of that tool whose time falls in that hour.
// Every row whose time is in [T, U) lies in an hour from floor(T/1h) to
// floor((U-1)/1h), so its seq lies between the smallest min_seq and the
// largest max_seq of those hours, whatever the clocks did: exact bounds,
// which Query adds to its condition so that a scan in seq order starts
// and ends there (see query.go).

// seqSpan is one seq_hour row, or a change to one.
type seqSpan struct {
	min, max, rows int64
}

func (s *seqSpan) add(seq int64) {
	if s.rows == 0 || seq < s.min {
		s.min = seq
	}
	if s.rows == 0 || seq > s.max {
		s.max = seq
	}
	s.rows++
}

// seqDelta collects the changes a transaction makes to seq_hour.
type seqDelta map[bucketKey]*seqSpan

func (d seqDelta) add(tool string, timeNS, seq int64) {
	k := bucketKey{floorDiv(timeNS, hourNS), tool}
	s := d[k]
	if s == nil {
		s = &seqSpan{}
		d[k] = s
	}
	s.add(seq)
}

// seqPutSQL adds a change to seq_hour. Two writers sharing the file each
// add their own rows' spans in their own transaction, so the result does
// not depend on the order they commit in.
const seqPutSQL = `INSERT INTO seq_hour (tool, hour, min_seq, max_seq, rows) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (tool, hour) DO UPDATE SET min_seq = min(min_seq, excluded.min_seq),
	max_seq = max(max_seq, excluded.max_seq), rows = rows + excluded.rows`

// flushSeqs adds the transaction's changes to seq_hour.
func (c *chainWriter) flushSeqs() error {
	if c.st == nil || len(c.seqs) == 0 {
		return nil
	}
	for k, s := range c.seqs {
		if _, err := c.st.seqPut.ExecContext(c.ctx, k.tool, k.hour, s.min, s.max, s.rows); err != nil {
			return err
		}
	}
	clear(c.seqs)
	return nil
}

// rebuildSeqHours recomputes seq_hour from the rows, in q's transaction.
func rebuildSeqHours(ctx context.Context, q querier) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM seq_hour`); err != nil {
		return err
	}
	d := seqDelta{}
	// The index holds all three columns, and is smaller than the table.
	rows, err := q.QueryContext(ctx, `SELECT tool, seq, time_ns FROM events INDEXED BY events_tool_seq`)
	if err != nil {
		return err
	}
	var (
		tool     string
		last     = bucketKey{hour: -1 << 63}
		lastSpan *seqSpan
	)
	for rows.Next() {
		var seq, t int64
		if err := rows.Scan(&tool, &seq, &t); err != nil {
			rows.Close()
			return err
		}
		// Rows come by tool, then seq: consecutive rows mostly share an
		// hour, so the map is consulted once per run of them.
		k := bucketKey{floorDiv(t, hourNS), tool}
		if lastSpan == nil || k != last {
			lastSpan = d[k]
			if lastSpan == nil {
				lastSpan = &seqSpan{}
				d[k] = lastSpan
			}
			last = k
		}
		lastSpan.add(seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for k, s := range d {
		if _, err := q.ExecContext(ctx, seqPutSQL, k.tool, k.hour, s.min, s.max, s.rows); err != nil {
			return err
		}
	}
	return nil
}

// seqWindow is what seq_hour says about the hours of a time window, for
// one tool and for all: an estimate of what a query would read each way.
type seqWindow struct {
	all      int64 // rows of any tool in the window's hours
	tool     int64 // rows of the filter's tool (all tools if none) in them
	lo, hi   int64 // the smallest and largest seq of those rows
	hasSpans bool  // some row of the tool is in the window's hours
}

// seqWindowSQL reads seqWindow over the hours [?2, ?3] for the tool ?1,
// the empty string meaning every tool.
const seqWindowSQL = `SELECT COALESCE(SUM(rows), 0),
	COALESCE(SUM(CASE WHEN ?1 = '' OR tool = ?1 THEN rows END), 0),
	MIN(CASE WHEN ?1 = '' OR tool = ?1 THEN min_seq END),
	MAX(CASE WHEN ?1 = '' OR tool = ?1 THEN max_seq END)
	FROM seq_hour WHERE hour >= ?2 AND hour <= ?3`

func scanSeqWindow(row *sql.Row) (seqWindow, error) {
	var w seqWindow
	var lo, hi sql.NullInt64
	if err := row.Scan(&w.all, &w.tool, &lo, &hi); err != nil {
		return w, err
	}
	w.lo, w.hi, w.hasSpans = lo.Int64, hi.Int64, lo.Valid && hi.Valid
	return w, nil
}
