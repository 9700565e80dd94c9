package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/rigout/rigout/audit"
)

// Statistics are kept as rows are written. The stats_hour table holds, for
// each hour (time_ns / 1h, by the row's own time) and tool, what Stats
// reports: calls, denials, errors and a histogram of the durations of the
// calls that were not denied. The open_calls table holds the intent rows
// that no done row has finished yet, which Stats counts as unfinished. The
// writer updates both in the transaction that inserts the rows, so they
// are exactly as durable and as current as the rows; a migration or Prune
// rebuilds them from the rows.
//
// Stats over a filter that names at most a tool and a time window adds
// the whole hours inside the window from stats_hour and reads only the rows
// of the partial hours at its ends. Counts are exact. P50 and P95 are exact
// too when a tool has at most exactQuantileCalls timed calls in the window
// (its durations are then read and sorted); above that they come from the
// histogram, whose bins are at most 1/32 of their lower bound wide, and
// are reported as the middle of the bin that holds the nearest-rank value:
// within 1/64 (1.6%) of the exact nearest-rank percentile. Any other
// filter (host, principal, status, ...) reads the matching rows.

// exactQuantileCalls is the most timed calls of one tool for which Stats
// sorts the durations rather than reading the histogram.
const exactQuantileCalls = 10000

const hourNS = int64(time.Hour)

// Histogram bins. Durations below 64ns have a bin each; above, each power
// of two is split into 32 bins of equal width.
const (
	histLinear = 64
	histSub    = 32
	histSubLog = 5
)

// histBin returns the bin of a duration in nanoseconds.
func histBin(d int64) int {
	if d < histLinear {
		return int(max(d, 0))
	}
	e := bits.Len64(uint64(d)) - 1 // 2^e ≤ d < 2^(e+1), e ≥ 6
	m := int(d>>(e-histSubLog)) & (histSub - 1)
	return histLinear + (e-6)*histSub + m
}

// histValue returns the value a bin reports: its middle.
func histValue(bin int) time.Duration {
	if bin < histLinear {
		return time.Duration(bin)
	}
	e := (bin-histLinear)/histSub + 6
	m := int64((bin - histLinear) % histSub)
	width := int64(1) << (e - histSubLog)
	lo := (histSub + m) * width
	return time.Duration(lo + width/2)
}

// hist is a histogram: n[bin] is the count of bin. It is stored sparse
// (see encode) and added up dense, since Stats adds up thousands.
type hist struct{ n []int64 }

// inc adds k to bin.
func (h *hist) inc(bin int, k int64) {
	if bin >= len(h.n) {
		h.n = append(h.n, make([]int64, bin+1-len(h.n))...)
	}
	h.n[bin] += k
}

func (h *hist) add(o *hist) {
	for b, n := range o.n {
		if n != 0 {
			h.inc(b, n)
		}
	}
}

// encode stores h as uvarint pairs (bin, count) in bin order.
func (h *hist) encode() []byte {
	out := []byte{}
	if h == nil {
		return out
	}
	for b, n := range h.n {
		if n != 0 {
			out = binary.AppendUvarint(out, uint64(b))
			out = binary.AppendUvarint(out, uint64(n))
		}
	}
	return out
}

// maxBin bounds the bins a stored histogram may name (histBin of the
// largest int64 is below it).
const maxBin = histLinear + 64*histSub

func decodeHist(p []byte, into *hist) error {
	for len(p) > 0 {
		b, n1 := binary.Uvarint(p)
		if n1 <= 0 || b >= maxBin {
			return errors.New("corrupt histogram")
		}
		c, n2 := binary.Uvarint(p[n1:])
		if n2 <= 0 {
			return errors.New("corrupt histogram")
		}
		into.inc(int(b), int64(c))
		p = p[n1+n2:]
	}
	return nil
}

// quantile returns the histogram's nearest-rank p-th percentile.
func (h *hist) quantile(p int) time.Duration {
	if h == nil {
		return 0
	}
	var total int64
	for _, n := range h.n {
		total += n
	}
	if total == 0 {
		return 0
	}
	rank := max((int64(p)*total+99)/100, 1)
	var seen int64
	for b, n := range h.n {
		seen += n
		if n > 0 && seen >= rank {
			return histValue(b)
		}
	}
	return 0
}

// bucketKey names one stats_hour row.
type bucketKey struct {
	hour int64
	tool string
}

// bucket is one stats_hour row, or a change to one.
type bucket struct {
	calls, denials, errors int64
	hist                   *hist
}

func (b *bucket) merge(o *bucket) {
	b.calls += o.calls
	b.denials += o.denials
	b.errors += o.errors
	if o.hist != nil {
		if b.hist == nil {
			b.hist = &hist{}
		}
		b.hist.add(o.hist)
	}
}

// statsDelta collects the changes a transaction makes to stats_hour.
type statsDelta map[bucketKey]*bucket

func (d statsDelta) at(timeNS int64, tool string) *bucket {
	k := bucketKey{floorDiv(timeNS, hourNS), tool}
	b := d[k]
	if b == nil {
		b = &bucket{}
		d[k] = b
	}
	return b
}

// denied reports whether a final row counts as a denial.
func denied(status audit.Status, decision audit.Decision, typ string) bool {
	return status == audit.StatusDenied || decision == audit.DecisionDeny || audit.EventType(typ) == audit.TypeToolDenied
}

// countFinal adds a call's final row (a done row or a one-shot event).
func (d statsDelta) countFinal(tool string, timeNS int64, status audit.Status, decision audit.Decision, typ string, dur int64) {
	b := d.at(timeNS, tool)
	b.calls++
	if denied(status, decision, typ) {
		b.denials++
		return
	}
	if status != audit.StatusOK {
		b.errors++
	}
	if b.hist == nil {
		b.hist = &hist{}
	}
	b.hist.inc(histBin(dur), 1)
}

// Statements the writer keeps prepared for the statistics.
const (
	// openCallSQL records an intent as open unless a done row finished
	// its call already.
	openCallSQL = `INSERT INTO open_calls (seq, call_id, tool, time_ns) SELECT ?, ?, ?, ?
		WHERE NOT EXISTS (SELECT 1 FROM events WHERE call_id = ? AND call_id != '' AND phase = 'done')`
	// closeCallSQL finishes a call's intents.
	closeCallSQL = `DELETE FROM open_calls WHERE call_id = ?`
	bucketGetSQL = `SELECT calls, denials, errors, hist FROM stats_hour WHERE hour = ? AND tool = ?`
	bucketPutSQL = `INSERT OR REPLACE INTO stats_hour (hour, tool, calls, denials, errors, hist) VALUES (?, ?, ?, ?, ?, ?)`
	// unfinishedSQLOf lists the intents no done row finished, by the
	// rows themselves: what open_calls holds.
	unfinishedSQLOf = `SELECT i.seq, i.call_id, i.tool, i.time_ns FROM events AS i
		WHERE i.tool != '' AND i.phase = 'intent' AND i.call_id != '' AND %s
		AND NOT EXISTS (SELECT 1 FROM events AS d WHERE d.call_id = i.call_id AND d.call_id != '' AND d.phase = 'done')`
)

// statsStmts are the statements above, prepared on the write connection.
type statsStmts struct {
	open, close_, get, put, seqPut *sql.Stmt
}

func (s *statsStmts) prepare(ctx context.Context, c *sql.Conn) error {
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{{&s.open, openCallSQL}, {&s.close_, closeCallSQL}, {&s.get, bucketGetSQL}, {&s.put, bucketPutSQL},
		{&s.seqPut, seqPutSQL}} {
		st, err := c.PrepareContext(ctx, p.q)
		if err != nil {
			return err
		}
		*p.st = st
	}
	return nil
}

func (s *statsStmts) close() []error {
	var errs []error
	for _, st := range []*sql.Stmt{s.open, s.close_, s.get, s.put, s.seqPut} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errs
}

// note records e's effect on the statistics; e has its Seq.
func (c *chainWriter) note(e *audit.Event) error {
	if c.st == nil {
		return nil
	}
	t := e.Time.UnixNano()
	c.seqs.add(e.Tool, t, e.Seq)
	if e.Phase == audit.PhaseDone && e.CallID != "" {
		if _, err := c.st.close_.ExecContext(c.ctx, e.CallID); err != nil {
			return err
		}
	}
	if e.Tool == "" {
		return nil
	}
	switch {
	case e.Phase != audit.PhaseIntent:
		c.delta.countFinal(e.Tool, t, e.Status, e.Decision, string(e.Type), int64(e.Duration))
	case e.CallID != "":
		if _, err := c.st.open.ExecContext(c.ctx, e.Seq, e.CallID, e.Tool, t, e.CallID); err != nil {
			return err
		}
	}
	return nil
}

// flushStats adds the transaction's changes to stats_hour.
func (c *chainWriter) flushStats() error {
	if c.st == nil || len(c.delta) == 0 {
		return nil
	}
	for k, d := range c.delta {
		var b bucket
		var h []byte
		switch err := c.st.get.QueryRowContext(c.ctx, k.hour, k.tool).Scan(&b.calls, &b.denials, &b.errors, &h); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			b.hist = &hist{}
			if err := decodeHist(h, b.hist); err != nil {
				return fmt.Errorf("stats_hour %d %q: %w", k.hour, k.tool, err)
			}
		}
		b.merge(d)
		if _, err := c.st.put.ExecContext(c.ctx, k.hour, k.tool, b.calls, b.denials, b.errors, b.hist.encode()); err != nil {
			return err
		}
	}
	clear(c.delta)
	return nil
}

// rebuildStats recomputes stats_hour and open_calls from the rows, in q's transaction.
func rebuildStats(ctx context.Context, q querier) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM stats_hour`); err != nil {
		return err
	}
	d := statsDelta{}
	rows, err := q.QueryContext(ctx, `SELECT tool, time_ns, status, decision, type, duration_ns FROM events
		WHERE tool != '' AND phase != 'intent'`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var tool, typ string
		var status audit.Status
		var decision audit.Decision
		var t, dur int64
		if err := rows.Scan(&tool, &t, &status, &decision, &typ, &dur); err != nil {
			rows.Close()
			return err
		}
		d.countFinal(tool, t, status, decision, typ, dur)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, `DELETE FROM open_calls`); err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO open_calls (seq, call_id, tool, time_ns) `+fmt.Sprintf(unfinishedSQLOf, "1")); err != nil {
		return err
	}
	for k, b := range d {
		if _, err := q.ExecContext(ctx, bucketPutSQL, k.hour, k.tool, b.calls, b.denials, b.errors, b.hist.encode()); err != nil {
			return err
		}
	}
	return nil
}

// floorDiv is a/b rounded towards minus infinity, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ceilDiv is a/b rounded towards plus infinity, for b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}

// bucketed reports whether Stats can answer f from stats_hour: f names at
// most a tool and a time window.
func bucketed(f *audit.Filter) bool {
	g := audit.Filter{Tool: f.Tool, Since: f.Since, Until: f.Until, Limit: f.Limit, Newest: f.Newest}
	return *f == g
}

// Stats returns per-tool statistics over the events matching f (which
// should usually leave Type, Status and Limit empty), sorted by tool name.
// Events without a tool are ignored.
//
// A filter of at most a tool and a time window is answered from the
// statistics the writer keeps (see [audit.ToolStats] for what is counted):
// the counts are exact, and so are P50 and P95 up to 10,000 timed calls of
// a tool in the window; above that they are within 1.6% of the exact
// nearest-rank value. Other filters read every matching row.
func (l *Ledger) Stats(ctx context.Context, f audit.Filter) ([]audit.ToolStats, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	tx, err := l.rdb.BeginTx(ctx, nil) // one snapshot for every query
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer tx.Rollback()
	var acc toolAcc
	if bucketed(&f) {
		acc, err = bucketStats(ctx, tx, f)
	} else {
		acc = toolAcc{}
		err = scanStats(ctx, tx, f, acc, false)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	out := make([]audit.ToolStats, 0, len(acc))
	for _, a := range acc {
		if a.exact != nil {
			slices.Sort(a.exact)
			a.P50, a.P95 = percentile(a.exact, 50), percentile(a.exact, 95)
		} else {
			a.P50, a.P95 = a.hist.quantile(50), a.hist.quantile(95)
		}
		out = append(out, a.ToolStats)
	}
	slices.SortFunc(out, func(a, b audit.ToolStats) int { return strings.Compare(a.Tool, b.Tool) })
	return out, nil
}

// toolTally is one tool's statistics while Stats adds them up: exact
// durations when they were read, else a histogram.
type toolTally struct {
	audit.ToolStats
	exact []time.Duration
	hist  *hist
}

type toolAcc map[string]*toolTally

func (a toolAcc) get(tool string) *toolTally {
	t := a[tool]
	if t == nil {
		t = &toolTally{ToolStats: audit.ToolStats{Tool: tool}, exact: []time.Duration{}}
		a[tool] = t
	}
	return t
}

// scanStats adds the rows matching f to acc, with their durations, and
// unless edge is set the unfinished calls (the edges of a bucketed window
// count those from open_calls).
func scanStats(ctx context.Context, tx *sql.Tx, f audit.Filter, acc toolAcc, edge bool) error {
	cond, args := where(&f)
	rows, err := tx.QueryContext(ctx, `SELECT tool, status, decision, type, duration_ns FROM events
		WHERE tool != '' AND phase != 'intent' AND `+cond, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var tool, typ string
		var status audit.Status
		var decision audit.Decision
		var dur int64
		if err := rows.Scan(&tool, &status, &decision, &typ, &dur); err != nil {
			rows.Close()
			return err
		}
		s := acc.get(tool)
		s.Calls++
		switch {
		case denied(status, decision, typ):
			s.Denials++
			continue
		case status != audit.StatusOK:
			s.Errors++
		}
		s.exact = append(s.exact, time.Duration(dur))
	}
	rows.Close()
	if err := rows.Err(); err != nil || edge {
		return err
	}
	rows, err = tx.QueryContext(ctx, `SELECT tool, COUNT(*) FROM (`+fmt.Sprintf(unfinishedSQLOf, qualify(cond))+`) GROUP BY tool`, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var tool string
		var n int64
		if err := rows.Scan(&tool, &n); err != nil {
			rows.Close()
			return err
		}
		acc.get(tool).Unfinished += n
	}
	rows.Close()
	return rows.Err()
}

// qualify prefixes the columns of a where() condition with the alias i.
func qualify(cond string) string {
	if cond == "1" {
		return cond
	}
	parts := strings.Split(cond, " AND ")
	for i, p := range parts {
		if strings.HasPrefix(p, "substr(") {
			parts[i] = "substr(i." + strings.TrimPrefix(p, "substr(")
		} else {
			parts[i] = "i." + p
		}
	}
	return strings.Join(parts, " AND ")
}

// bucketStats answers a tool-and-window filter from stats_hour and the
// rows of the partial hours at the window's ends.
func bucketStats(ctx context.Context, tx *sql.Tx, f audit.Filter) (toolAcc, error) {
	lo, hi, empty := windowNS(&f)
	if empty {
		return toolAcc{}, nil
	}
	// Whole hours [fromH, toH) come from stats_hour.
	fromH, toH := int64(math.MinInt64), int64(math.MaxInt64)
	if lo != math.MinInt64 {
		fromH = ceilDiv(lo, hourNS)
	}
	if hi != math.MaxInt64 {
		toH = floorDiv(hi, hourNS)
	}
	acc := toolAcc{}
	if fromH >= toH {
		// No whole hour: read the rows.
		return acc, scanStats(ctx, tx, f, acc, false)
	}
	q := `SELECT tool, calls, denials, errors, hist FROM stats_hour WHERE hour >= ? AND hour < ?`
	args := []any{fromH, toH}
	if f.Tool != "" {
		q += ` AND tool = ?`
		args = append(args, f.Tool)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tool string
		var b bucket
		var h []byte
		if err := rows.Scan(&tool, &b.calls, &b.denials, &b.errors, &h); err != nil {
			rows.Close()
			return nil, err
		}
		s := acc.get(tool)
		s.Calls += b.calls
		s.Denials += b.denials
		s.Errors += b.errors
		if s.hist == nil {
			s.hist = &hist{}
		}
		if err := decodeHist(h, s.hist); err != nil {
			rows.Close()
			return nil, fmt.Errorf("stats_hour %d %q: %w", fromH, tool, err)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The partial hours at the ends.
	edges := toolAcc{}
	if lo != math.MinInt64 && lo < fromH*hourNS {
		g := audit.Filter{Tool: f.Tool, Since: time.Unix(0, lo), Until: time.Unix(0, fromH*hourNS)}
		if err := scanStats(ctx, tx, g, edges, true); err != nil {
			return nil, err
		}
	}
	if hi != math.MaxInt64 && toH*hourNS < hi {
		g := audit.Filter{Tool: f.Tool, Since: time.Unix(0, toH*hourNS), Until: time.Unix(0, hi)}
		if err := scanStats(ctx, tx, g, edges, true); err != nil {
			return nil, err
		}
	}
	for tool, e := range edges {
		s := acc.get(tool)
		s.Calls += e.Calls
		s.Denials += e.Denials
		s.Errors += e.Errors
		if s.hist == nil {
			s.hist = &hist{}
		}
		for _, d := range e.exact {
			s.hist.inc(histBin(int64(d)), 1)
		}
	}
	// Unfinished calls, from open_calls.
	uq, uargs := `SELECT tool, COUNT(*) FROM open_calls WHERE time_ns >= ? AND time_ns < ?`, []any{lo, hi}
	if f.Tool != "" {
		uq += ` AND tool = ?`
		uargs = append(uargs, f.Tool)
	}
	rows, err = tx.QueryContext(ctx, uq+` GROUP BY tool`, uargs...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tool string
		var n int64
		if err := rows.Scan(&tool, &n); err != nil {
			rows.Close()
			return nil, err
		}
		acc.get(tool).Unfinished = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Small enough to be exact: read the durations.
	for tool, s := range acc {
		timed := s.Calls - s.Denials
		if timed > exactQuantileCalls {
			s.exact = nil
			continue
		}
		g := audit.Filter{Tool: tool, Since: f.Since, Until: f.Until}
		cond, args := where(&g)
		d, err := durations(ctx, tx, cond, args)
		if err != nil {
			return nil, err
		}
		s.exact = d
	}
	return acc, nil
}

// durations returns the durations of the timed calls matching cond.
func durations(ctx context.Context, tx *sql.Tx, cond string, args []any) ([]time.Duration, error) {
	rows, err := tx.QueryContext(ctx, `SELECT duration_ns FROM events WHERE tool != '' AND phase != 'intent'
		AND status != 'denied' AND decision != 'deny' AND type != 'tool.denied' AND `+cond, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []time.Duration{}
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, time.Duration(d))
	}
	return out, rows.Err()
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
