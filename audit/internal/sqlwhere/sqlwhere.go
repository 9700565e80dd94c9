// Package sqlwhere turns an audit.Filter into the SQL condition both
// ledgers (audit/sqlite and audit/postgres) query their events table
// with: the same columns, the same semantics, each database's own
// placeholders and prefix function.
package sqlwhere

import (
	"math"
	"strings"
	"time"

	"github.com/rigout/rigout/audit"
)

// Dialect is what differs between the databases.
type Dialect struct {
	// Arg returns the placeholder of the n-th argument (1-based).
	Arg func(n int) string
	// Prefix returns the SQL for "the first n characters of col", given
	// n's placeholder.
	Prefix func(col, n string) string
	// True is the condition that matches every row.
	True string
}

// Eq is an extra equality condition, left out when Value is empty.
type Eq struct{ Col, Value string }

// Where returns the condition for f (and extra) and the arguments,
// appended to args and numbered after them.
func Where(f *audit.Filter, d Dialect, args []any, extra ...Eq) (string, []any) {
	var conds []string
	arg := func(v any) string {
		args = append(args, v)
		return d.Arg(len(args))
	}
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = "+arg(v))
		}
	}
	eq("tool", f.Tool)
	eq("host", f.Host)
	eq("principal", f.Principal)
	eq("status", string(f.Status))
	eq("call_id", f.CallID)
	eq("session", f.Session)
	eq("phase", string(f.Phase))
	for _, e := range extra {
		eq(e.Col, e.Value)
	}
	if t, ok := strings.CutSuffix(string(f.Type), "*"); ok {
		n := arg(len(t))
		conds = append(conds, d.Prefix("type", n)+" = "+arg(t))
	} else {
		eq("type", string(f.Type))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "time_ns >= "+arg(ClampNS(f.Since)))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "time_ns < "+arg(ClampNS(f.Until)))
	}
	if f.AfterSeq > 0 {
		conds = append(conds, "seq > "+arg(f.AfterSeq))
	}
	if f.BeforeSeq > 0 {
		conds = append(conds, "seq < "+arg(f.BeforeSeq))
	}
	if len(conds) == 0 {
		return d.True, args
	}
	return strings.Join(conds, " AND "), args
}

// ClampNS converts t to Unix nanoseconds, saturating outside the int64
// range.
func ClampNS(t time.Time) int64 {
	switch {
	case t.Year() < 1678:
		return math.MinInt64
	case t.Year() > 2261:
		return math.MaxInt64
	}
	return t.UnixNano()
}
