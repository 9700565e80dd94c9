package sqlite

import (
	"context"
	"database/sql"
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
)

// skewedLedger records n calls through a and b alternately (two Ledgers on
// one file, as two gateways), with clocks that go backwards across hours:
// b's clock runs hours behind a's, now and then a clock jumps back or far
// ahead, and some rows have no tool.
func skewedLedger(t *testing.T, a, b *Ledger, n int, seed uint64) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Date(2026, 11, 20, 5, 37, 0, 0, time.UTC)
	tools := []string{"execute_command", "execute_command", "read_file", "write_file", "rare_tool"}
	for i := range n {
		l, at := a, start.Add(time.Duration(i)*97*time.Second)
		if i%2 == 1 {
			l, at = b, at.Add(-3*time.Hour)
		}
		switch rng.IntN(40) {
		case 0:
			at = at.Add(-time.Duration(rng.IntN(30)) * time.Hour) // a clock set back
		case 1:
			at = at.Add(time.Duration(rng.IntN(24*40)) * time.Hour) // a clock far ahead
		}
		tool := tools[rng.IntN(4)]
		if rng.IntN(50) == 0 {
			tool = "rare_tool"
		}
		e := audit.Event{Time: at, Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: fmt.Sprintf("k%d-%d", seed, i),
			Tool: tool, Principal: []string{"ci", "ops"}[rng.IntN(2)], Status: audit.StatusStarted}
		if rng.IntN(15) == 0 {
			e = audit.Event{Time: at, Type: audit.TypeSessionOpen, Principal: "ops"}
		}
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		if e.Phase == audit.PhaseIntent && rng.IntN(6) != 0 {
			e.Phase, e.Status = audit.PhaseDone, audit.StatusOK
			if rng.IntN(8) == 0 {
				e.Status = audit.StatusError
			}
			e.Time = at.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
			if err := l.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// bruteForce is what Query must return for f, from every row.
func bruteForce(all []audit.Event, f audit.Filter) []audit.Event {
	var out []audit.Event
	for _, e := range all {
		switch {
		case f.Tool != "" && e.Tool != f.Tool,
			f.Principal != "" && e.Principal != f.Principal,
			f.Status != "" && e.Status != f.Status,
			!f.Since.IsZero() && e.Time.Before(f.Since),
			!f.Until.IsZero() && !e.Time.Before(f.Until),
			f.AfterSeq > 0 && e.Seq <= f.AfterSeq,
			f.BeforeSeq > 0 && e.Seq >= f.BeforeSeq:
			continue
		}
		out = append(out, e)
	}
	if f.Limit > 0 && len(out) > f.Limit {
		if f.Newest {
			out = out[len(out)-f.Limit:]
		} else {
			out = out[:f.Limit]
		}
	}
	return out
}

// randomFilter returns a filter over the skewed ledger's time range.
func randomFilter(rng *rand.Rand, maxSeq int64) audit.Filter {
	start := time.Date(2026, 11, 19, 20, 0, 0, 0, time.UTC)
	at := func() time.Time { return start.Add(time.Duration(rng.Int64N(int64(60 * time.Hour)))) }
	var f audit.Filter
	switch rng.IntN(6) {
	case 0:
	case 1:
		f.Tool = "rare_tool"
	default:
		f.Tool = []string{"execute_command", "read_file", "write_file", "none"}[rng.IntN(4)]
	}
	switch rng.IntN(4) {
	case 0:
		f.Since = at()
	case 1:
		f.Until = at()
	case 2:
		f.Since = at()
		f.Until = f.Since.Add(time.Duration(rng.Int64N(int64(20 * time.Hour))))
	case 3:
		f.Since = at()
		f.Until = at() // sometimes before Since: an empty window
	}
	if rng.IntN(8) == 0 {
		f.Status = audit.StatusError
	}
	if rng.IntN(10) == 0 {
		f.Principal = "ci"
	}
	if rng.IntN(6) == 0 {
		f.AfterSeq = rng.Int64N(maxSeq)
	}
	if rng.IntN(6) == 0 {
		f.BeforeSeq = rng.Int64N(maxSeq) + 1
	}
	f.Limit = []int{0, 1, 3, 10, 25, 100}[rng.IntN(6)]
	f.Newest = rng.IntN(2) == 0
	return f
}

// checkQueries compares Query, and each plan's statement run directly,
// with the brute-force answer for many random filters, and reports how
// often Query chose each plan.
func checkQueries(t *testing.T, l *Ledger, seed uint64, n int) map[string]int {
	t.Helper()
	ctx := context.Background()
	all, err := l.Query(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no rows")
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	chosen := map[string]int{}
	for range n {
		f := randomFilter(rng, all[len(all)-1].Seq)
		want := bruteForce(all, f)
		got, err := l.Query(ctx, f)
		if err != nil {
			t.Fatalf("Query(%+v): %v", f, err)
		}
		if !sameEvents(got, want) {
			t.Fatalf("Query(%+v) = %d events %v, want %d %v", f, len(got), seqs(got), len(want), seqs(want))
		}
		kind, err := l.choosePlan(ctx, &f)
		if err != nil {
			t.Fatal(err)
		}
		chosen[kind]++
		if f.Limit == 0 {
			continue
		}
		for _, kind := range []string{planSort, planSeqScan} {
			g := f
			q, args := planSQL(&g, kind)
			rows, err := l.rdb.QueryContext(ctx, q, args...)
			if err != nil {
				t.Fatalf("%s of %+v: %v", kind, f, err)
			}
			var got []audit.Event
			for rows.Next() {
				r, err := scanEvent(rows)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, r.Event)
			}
			rows.Close()
			if f.Newest {
				slices.Reverse(got)
			}
			if !sameEvents(got, want) {
				t.Fatalf("%s of %+v = %v, want %v", kind, f, seqs(got), seqs(want))
			}
		}
	}
	return chosen
}

func sameEvents(a, b []audit.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func seqs(evs []audit.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

// checkSeqHours compares seq_hour with the spans computed from the rows.
func checkSeqHours(t *testing.T, l *Ledger) {
	t.Helper()
	ctx := context.Background()
	want := map[bucketKey]seqSpan{}
	rows, err := l.rdb.QueryContext(ctx, `SELECT tool, seq, time_ns FROM events NOT INDEXED`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tool string
		var seq, ns int64
		if err := rows.Scan(&tool, &seq, &ns); err != nil {
			t.Fatal(err)
		}
		k := bucketKey{floorDiv(ns, hourNS), tool}
		s := want[k]
		s.add(seq)
		want[k] = s
	}
	rows.Close()
	got := map[bucketKey]seqSpan{}
	rows, err = l.rdb.QueryContext(ctx, `SELECT tool, hour, min_seq, max_seq, rows FROM seq_hour`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k bucketKey
		var s seqSpan
		if err := rows.Scan(&k.tool, &k.hour, &s.min, &s.max, &s.rows); err != nil {
			t.Fatal(err)
		}
		got[k] = s
	}
	rows.Close()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("seq_hour has %d rows, the rows give %d; they differ", len(got), len(want))
		for k, w := range want {
			if got[k] != w {
				t.Errorf("seq_hour %+v = %+v, want %+v", k, got[k], w)
			}
		}
	}
}

// TestQueryMatchesBruteForce checks Query, and both of its plans, against
// a filter applied to every row, on a ledger two Ledgers wrote alternately
// with clocks going backwards across hours; then after a Prune; then after
// an upgrade from schema 2.
func TestQueryMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	a, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	skewedLedger(t, a, b, 1500, 1)
	b.Close()
	checkSeqHours(t, a)
	chosen := checkQueries(t, a, 1, 1500)
	t.Logf("plans chosen: %v", chosen)
	if chosen[planSeqScan] < 50 || chosen[planSort] < 50 {
		t.Errorf("plans chosen %v: want both exercised", chosen)
	}

	if _, err := a.Prune(ctx, time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC), Operator{Principal: "os:test"}); err != nil {
		t.Fatal(err)
	}
	checkSeqHours(t, a)
	checkQueries(t, a, 2, 500)
	// Writes after the prune keep seq_hour.
	skewedLedger(t, a, a, 200, 3)
	checkSeqHours(t, a)
	checkQueries(t, a, 3, 500)
	a.Close()

	// Back to schema 2 by hand (migration 3 undone), then open: the
	// migration rebuilds seq_hour from the rows.
	db := rawDB(t, path)
	for _, q := range []string{`DROP TABLE seq_hour`, `DROP INDEX events_tool_seq`, `CREATE INDEX events_tool ON events(tool)`, `PRAGMA user_version = 2`} {
		mustExec(t, db, q)
	}
	db.Close()
	if _, err := Open(ctx, Config{Path: path, ReadOnly: true}); err == nil {
		t.Fatal("read-only Open of schema 2 succeeded")
	}
	c, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkSeqHours(t, c)
	checkQueries(t, c, 4, 500)
	if rep, err := c.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify after the upgrade = %+v, %v", rep, err)
	}
}

// TestUpgradeFromSchema1SeqHours opens testdata/v1.db (schema 1): the
// migrations to 3 fill seq_hour, and queries match the brute force.
func TestUpgradeFromSchema1SeqHours(t *testing.T) {
	path := copyV1(t)
	l, err := Open(context.Background(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkSeqHours(t, l)
	checkQueries(t, l, 5, 300)
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// copyV1 copies testdata/v1.db, its key and head, to a temporary directory.
func copyV1(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.db")
	for _, suffix := range []string{"", ".key", ".head"} {
		b, err := os.ReadFile(filepath.Join("testdata", "v1.db"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestPlanIndexes checks that each plan's statement uses the index it is
// written for: the seq scan walks seq order without sorting, the sort
// reads the window from its time index.
func TestPlanIndexes(t *testing.T) {
	l, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		f          audit.Filter
		kind       string
		want, none string
	}{
		{audit.Filter{Tool: "x", Since: since, Limit: 10}, planSeqScan, "COVERING INDEX events_tool_seq (tool=? AND seq>? AND seq<?)", "TEMP B-TREE"},
		{audit.Filter{Tool: "x", Since: since, Limit: 10, Newest: true}, planSeqScan, "COVERING INDEX events_tool_seq (tool=? AND seq>? AND seq<?)", "TEMP B-TREE"},
		{audit.Filter{Since: since, Until: since.Add(time.Hour), Limit: 10}, planSeqScan, "INTEGER PRIMARY KEY (rowid>? AND rowid<?)", "TEMP B-TREE"},
		{audit.Filter{Tool: "x", Since: since, Limit: 10}, planSort, "COVERING INDEX events_tool_time (tool=? AND time_ns>?)", "events_tool_seq"},
		{audit.Filter{Since: since, Limit: 10, Newest: true}, planSort, "COVERING INDEX events_time (time_ns>?)", "SCAN"},
		{audit.Filter{Tool: "x", Limit: 10}, planSort, "COVERING INDEX events_tool_seq (tool=?)", "TEMP B-TREE"},
		{audit.Filter{Principal: "p", Since: since, Limit: 10, Newest: true}, planSort, "events_principal (principal=?)", "TEMP B-TREE"},
	} {
		q, args := planSQL(&c.f, c.kind)
		rows, err := l.rdb.Query(`EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, c.want) || strings.Contains(p, c.none) {
			t.Errorf("%s of %+v: plan %q, want %q and no %q", c.kind, c.f, p, c.want, c.none)
		}
	}
}
