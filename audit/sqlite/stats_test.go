package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// exactStats computes what Stats must return, from all the events, the
// slow way: the definition in audit.ToolStats applied to f's tool,
// principal and time window.
func exactStats(all []audit.Event, f audit.Filter) []audit.ToolStats {
	match := func(e audit.Event) bool {
		switch {
		case e.Tool == "":
			return false
		case f.Tool != "" && e.Tool != f.Tool:
			return false
		case f.Principal != "" && e.Principal != f.Principal:
			return false
		case !f.Since.IsZero() && e.Time.Before(f.Since):
			return false
		case !f.Until.IsZero() && !e.Time.Before(f.Until):
			return false
		}
		return true
	}
	done := map[string]bool{}
	for _, e := range all {
		if e.Phase == audit.PhaseDone && e.CallID != "" {
			done[e.CallID] = true
		}
	}
	by := map[string]*audit.ToolStats{}
	durs := map[string][]time.Duration{}
	for _, e := range all {
		if !match(e) {
			continue
		}
		s := by[e.Tool]
		if s == nil {
			s = &audit.ToolStats{Tool: e.Tool}
			by[e.Tool] = s
		}
		if e.Phase == audit.PhaseIntent {
			if e.CallID != "" && !done[e.CallID] {
				s.Unfinished++
			}
			continue
		}
		s.Calls++
		if e.Status == audit.StatusDenied || e.Decision == audit.DecisionDeny || e.Type == audit.TypeToolDenied {
			s.Denials++
			continue
		}
		if e.Status != audit.StatusOK {
			s.Errors++
		}
		durs[e.Tool] = append(durs[e.Tool], e.Duration)
	}
	out := []audit.ToolStats{}
	for tool, s := range by {
		d := durs[tool]
		slices.Sort(d)
		if len(d) > 0 {
			s.P50 = d[max((50*len(d)+99)/100, 1)-1]
			s.P95 = d[max((95*len(d)+99)/100, 1)-1]
		}
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b audit.ToolStats) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// mixedLedger records n calls spread over several hours: three tools, two
// principals, errors, denials (by status, decision and tool.denied rows),
// calls left unfinished, done rows recorded late and in the wrong hour,
// done rows without a tool, and events without a tool.
func mixedLedger(t *testing.T, l *sqlite.Ledger, n int, seed uint64) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	start := time.Date(2026, 11, 30, 22, 41, 13, 0, time.UTC)
	tools := []string{"execute_command", "read_file", "get_server_activity"}
	var late []audit.Event
	for i := range n {
		at := start.Add(time.Duration(i) * 43 * time.Second)
		in := audit.Event{Time: at, Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: fmt.Sprintf("s%d-%d", seed, i),
			Tool: tools[rng.IntN(3)], Principal: []string{"ci", "ops"}[rng.IntN(2)], Status: audit.StatusStarted}
		if rng.IntN(20) == 0 {
			in.CallID = "" // an intent without a call ID is never unfinished
		}
		if err := l.Record(ctx, in); err != nil {
			t.Fatal(err)
		}
		done := in
		done.Phase = audit.PhaseDone
		done.Status = audit.StatusOK
		done.Time = at.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		done.Duration = time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond))
		switch rng.IntN(12) {
		case 0:
			done.Status = audit.StatusError
		case 1:
			done.Status = audit.StatusDenied
		case 2:
			done.Decision = audit.DecisionDeny
		case 3:
			continue // unfinished
		case 4:
			done.Time = at.Add(2 * time.Hour) // finished in another hour
			late = append(late, done)
			continue
		case 5:
			done.Tool = "" // finishes the intent, counts for no tool
		}
		if err := l.Record(ctx, done); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(9) == 0 {
			if err := l.Record(ctx, done); err != nil { // a second done row finishes nothing more
				t.Fatal(err)
			}
		}
		if rng.IntN(15) == 0 {
			if err := l.Record(ctx, audit.Event{Time: at, Type: audit.TypeToolDenied, Tool: in.Tool, Principal: in.Principal, Status: audit.StatusDenied}); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(25) == 0 {
			if err := l.Record(ctx, audit.Event{Time: at, Type: audit.TypeSessionOpen, Principal: in.Principal}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range late {
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

// statsFilters are the filters the tests compare: the bucketed ones (tool,
// whole and partial hours, a window inside one hour, an empty window) and
// ones that read the rows (principal).
func statsFilters() []audit.Filter {
	h := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	return []audit.Filter{
		{},
		{Tool: "read_file"},
		{Tool: "nothing"},
		{Since: h},
		{Since: h, Until: h.Add(3 * time.Hour)},
		{Since: h.Add(17 * time.Minute), Until: h.Add(3*time.Hour + 5*time.Minute)},
		{Tool: "execute_command", Since: h.Add(-30 * time.Minute)},
		{Until: h.Add(90 * time.Minute)},
		{Since: h.Add(10 * time.Minute), Until: h.Add(50 * time.Minute)},
		{Since: h.Add(time.Hour), Until: h},
		{Principal: "ops"},
		{Principal: "ci", Since: h.Add(17 * time.Minute)},
	}
}

func checkStats(t *testing.T, l *sqlite.Ledger) {
	t.Helper()
	ctx := context.Background()
	all, err := l.Query(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range statsFilters() {
		got, err := l.Stats(ctx, f)
		if err != nil {
			t.Fatalf("Stats(%+v): %v", f, err)
		}
		if want := exactStats(all, f); !reflect.DeepEqual(got, want) {
			t.Errorf("Stats(%+v) =\n%+v\nwant\n%+v", f, got, want)
		}
	}
}

func TestStatsMatchExactComputation(t *testing.T) {
	l, _ := openLedger(t, nil)
	mixedLedger(t, l, 600, 1)
	checkStats(t, l)

	// After a prune, the statistics count what is left.
	if _, err := l.Prune(context.Background(), time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC), sqlite.Operator{Principal: "os:test"}); err != nil {
		t.Fatal(err)
	}
	checkStats(t, l)
}

// TestStatsShareTheFile checks the statistics kept by two ledgers writing
// the same file, as two processes do.
func TestStatsShareTheFile(t *testing.T) {
	a, cfg := openLedger(t, nil)
	b, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		mixedLedger(t, b, 150, 2)
	}()
	mixedLedger(t, a, 150, 3)
	<-done
	checkStats(t, a)
}

// TestUpgradeFromSchema1 opens a ledger written by the schema-1 code
// (testdata/v1.db, committed as that code wrote it): Open migrates it in
// place, the chain still verifies, and Stats answers from the statistics
// the migration built, as the old full scan did.
func TestUpgradeFromSchema1(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.db")
	for _, suffix := range []string{"", ".key", ".head"} {
		b, err := os.ReadFile(filepath.Join("testdata", "v1.db"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db := rawDB(t, path)
	var v, rows int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != 1 {
		t.Fatalf("fixture user_version = %d, %v", v, err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM events`).Scan(&rows); err != nil || rows != 239 {
		t.Fatalf("fixture rows = %d, %v", rows, err)
	}
	db.Close()

	// Read-only, the old file is refused with advice rather than misread.
	if _, err := sqlite.Open(context.Background(), sqlite.Config{Path: path, ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "open it read-write once") {
		t.Fatalf("read-only Open of schema 1 = %v", err)
	}
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	db = rawDB(t, path)
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("user_version after Open = %d, %v", v, err)
	}
	for _, ix := range []string{"events_tool_time", "events_principal", "events_tool_seq"} {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, ix).Scan(&n); err != nil || n != 1 {
			t.Errorf("index %s: %d, %v", ix, n, err)
		}
	}
	var buckets int
	if err := db.QueryRow(`SELECT COUNT(*) FROM stats_hour`).Scan(&buckets); err != nil || buckets < 6 {
		t.Errorf("stats_hour rows = %d, %v; want one per tool and hour", buckets, err)
	}
	// The 239 unkeyed rows stay as they were; the chain is keyed from
	// the audit.chain_key row the upgrade appended.
	rep, err := l.Verify(context.Background())
	if err != nil || !rep.OK() || rep.Rows != 240 || rep.KeyedFrom != 240 || !rep.HeadKeyed {
		t.Fatalf("Verify after the upgrade = %+v, %v", rep, err)
	}
	if ck, err := l.Query(context.Background(), audit.Filter{Type: audit.TypeChainKey}); err != nil || len(ck) != 1 || ck[0].Seq != 240 {
		t.Fatalf("chain key events after the upgrade = %+v, %v", ck, err)
	}
	// The old code's answer over the fixture, computed the slow way, and
	// a figure read off the file by hand: 120 calls, 3 tools.
	checkStats(t, l)
	st, err := l.Stats(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var unfinished int64
	for _, s := range st {
		unfinished += s.Unfinished
	}
	if len(st) != 3 || unfinished != 11 {
		t.Errorf("Stats of the fixture = %+v; want 3 tools and the 11 unfinished calls (i%%11 == 5 of 120)", st)
	}
	// New rows keep the statistics current.
	mixedLedger(t, l, 100, 4)
	checkStats(t, l)
	if rep, err := l.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

// TestQueryPlans checks that the hot queries use the indexes meant for
// them, not a scan of the table or of one tool's rows.
func TestQueryPlans(t *testing.T) {
	_, cfg := openLedger(t, nil)
	db := rawDB(t, cfg.Path)
	plan := func(q string, args ...any) string {
		rows, err := db.Query(`EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, "; ")
	}
	for _, c := range []struct {
		q, want string
		args    []any
	}{
		{`SELECT * FROM events WHERE tool = ? AND time_ns >= ? ORDER BY seq LIMIT 1000`, "events_tool_time (tool=? AND time_ns>?)", []any{"x", 1}},
		{`SELECT seq FROM events INDEXED BY events_tool_time WHERE tool = ? AND time_ns >= ? ORDER BY seq LIMIT 1000`, "COVERING INDEX events_tool_time (tool=? AND time_ns>?)", []any{"x", 1}},
		{`SELECT seq FROM events WHERE tool = ? AND time_ns >= ? AND seq >= ? AND seq <= ? ORDER BY seq DESC LIMIT 1000`, "COVERING INDEX events_tool_seq (tool=? AND seq>? AND seq<?)", []any{"x", 1, 1, 9}},
		{`SELECT seq FROM events WHERE tool = ? ORDER BY seq LIMIT 1000`, "COVERING INDEX events_tool_seq (tool=?)", []any{"x"}},
		{`SELECT MIN(min_seq) FROM seq_hour WHERE hour >= ? AND hour <= ? AND tool = ?`, "seq_hour USING PRIMARY KEY (tool=? AND hour>? AND hour<?)", []any{1, 2, "x"}},
		{`SELECT MIN(min_seq) FROM seq_hour WHERE hour >= ? AND hour <= ?`, "seq_hour USING INDEX seq_hour_hour (hour>? AND hour<?)", []any{1, 2}},
		{`SELECT * FROM events WHERE principal = ? ORDER BY seq DESC LIMIT 50`, "events_principal (principal=?)", []any{"x"}},
		{`SELECT * FROM events WHERE 1 ORDER BY seq DESC LIMIT 50`, "SCAN events", nil},
		{`SELECT tool, calls FROM stats_hour WHERE hour >= ? AND hour < ?`, "SEARCH stats_hour USING PRIMARY KEY (hour>? AND hour<?)", []any{1, 2}},
		{`SELECT 1 FROM events WHERE call_id = ? AND call_id != '' AND phase = 'done'`, "events_call (call_id=?)", []any{"c"}},
		{`DELETE FROM open_calls WHERE call_id = ?`, "open_calls_call (call_id=?)", []any{"c"}},
		{`SELECT tool, COUNT(*) FROM open_calls WHERE time_ns >= ? AND time_ns < ? GROUP BY tool`, "COVERING INDEX open_calls_tool_time", []any{1, 2}},
	} {
		if p := plan(c.q, c.args...); !strings.Contains(p, c.want) {
			t.Errorf("plan of %s = %q, want %q", c.q, p, c.want)
		}
	}
}
