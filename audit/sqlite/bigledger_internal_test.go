package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
)

// The ledger-size benchmark. BenchmarkBigLedger builds a ledger of
// RIGOUT_BENCH_LEDGER_ROWS rows (default 200,000; the figure is
// 10,000,000) once, with [Import], and caches it under the OS temporary
// directory, keyed by schema version, generator and row count, for later
// runs. It then measures the operator-facing queries:
//
//	RIGOUT_BENCH_LEDGER_ROWS=10000000 go test -run '^$' -bench BigLedger -benchtime 20x ./audit/sqlite
//
// The rows are calls of five tools by four principals, one every 0.5s
// (so 10M rows span about 29 days), with errors, denials and a few calls
// left unfinished; one call in 1009 is of rare_tool. The query/ runs
// also time each plan of Query on its own (plan=sort, plan=seq), side by
// side, on the same file.

const bigTxRows = 100000

// bigEvent is row i of the synthetic ledger (audittest.Synthetic), which
// bench scenario 13 builds too.
func bigEvent(i int) audit.Event {
	var e audit.Event
	audittest.Synthetic(i, &e)
	return e
}

// bigLedger returns the path of a ledger of rows rows, building it if it
// is not cached.
func bigLedger(b *testing.B, rows int) string {
	dir := filepath.Join(os.TempDir(), "rigout-bench-ledger", fmt.Sprintf("schema%d-gen2-rows%d", schemaVersion, rows))
	path := filepath.Join(dir, "audit.db")
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		return path
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	i := 0
	_, err := Import(context.Background(), Config{Path: path}, func(e *audit.Event) bool {
		if i == rows {
			return false
		}
		*e = bigEvent(i)
		i++
		return true
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "complete"), nil, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d rows in %v (%.0f rows/s) at %s", rows, time.Since(start).Round(time.Millisecond), float64(rows)/time.Since(start).Seconds(), path)
	return path
}

func BenchmarkBigLedger(b *testing.B) {
	rows := 200000
	if s := os.Getenv("RIGOUT_BENCH_LEDGER_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			b.Fatalf("RIGOUT_BENCH_LEDGER_ROWS=%q: want a number of rows", s)
		}
		rows = n
	}
	path := bigLedger(b, rows)
	l, err := Open(context.Background(), Config{Path: path, ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	end := audittest.SyntheticEnd(rows)
	ctx := context.Background()
	query := func(f audit.Filter, min int) func(b *testing.B) {
		return func(b *testing.B) {
			if _, err := l.Query(ctx, f); err != nil { // warm: statements prepared, pages cached
				b.Fatal(err)
			}
			for b.Loop() {
				evs, err := l.Query(ctx, f)
				if err != nil || len(evs) < min {
					b.Fatalf("%d events, %v", len(evs), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
		}
	}
	stats := func(f audit.Filter) func(b *testing.B) {
		return func(b *testing.B) {
			if _, err := l.Stats(ctx, f); err != nil { // warm
				b.Fatal(err)
			}
			for b.Loop() {
				st, err := l.Stats(ctx, f)
				if err != nil || len(st) == 0 {
					b.Fatalf("%v, %v", st, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
		}
	}
	// plan runs one of Query's statements by itself.
	plan := func(f audit.Filter, kind string) func(b *testing.B) {
		return func(b *testing.B) {
			q, args := planSQL(&f, kind)
			st, err := l.rdb.PrepareContext(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			if _, err := l.Query(ctx, f); err != nil { // warm the pages as query does
				b.Fatal(err)
			}
			for b.Loop() {
				rows, err := st.QueryContext(ctx, args...)
				if err != nil {
					b.Fatal(err)
				}
				for rows.Next() {
					if _, err := scanEvent(rows); err != nil {
						b.Fatal(err)
					}
				}
				rows.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
		}
	}
	b.Run("get_server_activity", query(audit.Filter{Limit: 50, Newest: true}, 50))
	b.Run("get_server_activity/principal", query(audit.Filter{Principal: "observer", Limit: 50, Newest: true}, 50))
	for _, c := range []struct {
		name string
		f    audit.Filter
		min  int
	}{
		// rigout audit query --tool X --since T: oldest first, at most 1000.
		{"tool/since=1h", audit.Filter{Tool: "read_file", Since: end.Add(-time.Hour), Limit: 1000}, 1},
		{"tool/since=30d", audit.Filter{Tool: "read_file", Since: end.Add(-30 * 24 * time.Hour), Limit: 1000}, 1000},
		{"tool/since=7d", audit.Filter{Tool: "execute_command", Since: end.Add(-7 * 24 * time.Hour), Limit: 1000}, 1000},
		{"rare/since=30d", audit.Filter{Tool: "rare_tool", Since: end.Add(-30 * 24 * time.Hour), Limit: 1000}, 1000},
		{"rare/since=1h", audit.Filter{Tool: "rare_tool", Since: end.Add(-time.Hour), Limit: 1000}, 1},
		{"all/since=1h", audit.Filter{Since: end.Add(-time.Hour), Limit: 1000}, 1000},
		{"tool/since=30d/newest", audit.Filter{Tool: "read_file", Since: end.Add(-30 * 24 * time.Hour), Limit: 50, Newest: true}, 50},
		{"tool/window=2d-1d/newest", audit.Filter{Tool: "read_file", Since: end.Add(-48 * time.Hour), Until: end.Add(-24 * time.Hour), Limit: 50, Newest: true}, 50},
	} {
		if rows < 200000 && c.min > 1 {
			c.min = 1
		}
		kind, err := l.choosePlan(ctx, &c.f)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("query/%s: Query chooses plan %q", c.name, kind)
		b.Run("query/"+c.name, query(c.f, c.min))
		b.Run("query/"+c.name+"/choose", func(b *testing.B) {
			for b.Loop() {
				if _, err := l.choosePlan(ctx, &c.f); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
		})
		b.Run("query/"+c.name+"/plan=sort", plan(c.f, planSort))
		b.Run("query/"+c.name+"/plan=seq", plan(c.f, planSeqScan))
	}
	b.Run("stats/all", stats(audit.Filter{}))
	b.Run("stats/since=24h", stats(audit.Filter{Since: end.Add(-24*time.Hour - 17*time.Minute)}))
	b.Run("stats/tool/since=7d", stats(audit.Filter{Tool: "execute_command", Since: end.Add(-7*24*time.Hour - 17*time.Minute)}))
}

// BenchmarkBulkAppend measures the writer's per-row cost in large
// transactions (the big ledger's build rate).
func BenchmarkBulkAppend(b *testing.B) {
	l, err := Open(context.Background(), Config{Path: filepath.Join(b.TempDir(), "audit.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ResetTimer()
	bulkAppend(b, l, b.N, bigTxRows, bigEvent, false)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkWriterStages splits what one audited call's row costs: the
// commit alone (write: BEGIN, insert with the statistics, COMMIT with its
// fsync, head), and Record, which adds the hand-off to the writer goroutine
// and back; at synchronous=FULL (the default) and NORMAL (the fsync at
// commit left out), so the fsync's share shows.
func BenchmarkWriterStages(b *testing.B) {
	for _, normal := range []bool{false, true} {
		sync := map[bool]string{false: "FULL", true: "NORMAL"}[normal]
		l, err := Open(context.Background(), Config{Path: filepath.Join(b.TempDir(), "audit.db"), UnsafeSyncNormal: normal})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("sync="+sync+"/write", func(b *testing.B) {
			i := 0
			for b.Loop() {
				e := bigEvent(i)
				i++
				if err := l.write(func(c *chainWriter) error { return c.append(&e) }); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("sync="+sync+"/Record", func(b *testing.B) {
			i := 0
			for b.Loop() {
				if err := l.Record(context.Background(), bigEvent(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		l.Close()
	}
}
