package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
	"github.com/rigout/rigout/audit/sqlite"
)

// ledgerQuery is scenario 13: the operator-facing reads of a large ledger
// (what get_server_activity, rigout audit stats and rigout audit query
// --tool X --since T ask sqlite.Ledger), against the same reads of a
// ledger 1/100 the size, so the ratio is how each grows with the ledger.
// Both ledgers are built with sqlite.Import and cached under the OS
// temporary directory, keyed by schema version, generator and row count;
// the notes say whether they were built or reused. The two ledgers
// alternate query by query.
func ledgerQuery(ctx context.Context, b *bench) error {
	rows := pick(b, 100_000, 10_000_000)
	samples := pick(b, 15, 40)
	big, bigNote, err := cachedLedger(ctx, rows)
	if err != nil {
		return fmt.Errorf("ledger of %d rows: %w", rows, err)
	}
	small, smallNote, err := cachedLedger(ctx, rows/100)
	if err != nil {
		return fmt.Errorf("ledger of %d rows: %w", rows/100, err)
	}
	ledgers := []struct {
		key  string
		rows int
		path string
		l    *sqlite.Ledger
	}{{"big", rows, big, nil}, {"small", rows / 100, small, nil}}
	for i := range ledgers {
		l, err := sqlite.Open(ctx, sqlite.Config{Path: ledgers[i].path, ReadOnly: true})
		if err != nil {
			return err
		}
		defer l.Close()
		ledgers[i].l = l
	}
	type read struct {
		key, name string
		run       func(l *sqlite.Ledger, end time.Time) error
	}
	query := func(f func(end time.Time) audit.Filter) func(*sqlite.Ledger, time.Time) error {
		return func(l *sqlite.Ledger, end time.Time) error {
			evs, err := l.Query(ctx, f(end))
			if err == nil && len(evs) == 0 {
				err = errors.New("no events")
			}
			return err
		}
	}
	stats := func(f func(end time.Time) audit.Filter) func(*sqlite.Ledger, time.Time) error {
		return func(l *sqlite.Ledger, end time.Time) error {
			st, err := l.Stats(ctx, f(end))
			if err == nil && len(st) == 0 {
				err = errors.New("no statistics")
			}
			return err
		}
	}
	const day = 24 * time.Hour
	reads := []read{
		{"activity", "get_server_activity (newest 50)", query(func(time.Time) audit.Filter { return audit.Filter{Limit: 50, Newest: true} })},
		{"activity-principal", "get_server_activity of one principal (newest 50)", query(func(time.Time) audit.Filter {
			return audit.Filter{Principal: "observer", Limit: 50, Newest: true}
		})},
		{"stats", "audit stats", stats(func(time.Time) audit.Filter { return audit.Filter{} })},
		{"stats-24h", "audit stats --since 24h", stats(func(end time.Time) audit.Filter { return audit.Filter{Since: end.Add(-day)} })},
		{"query-30d", "audit query --tool execute_command --since 30d", query(func(end time.Time) audit.Filter {
			return audit.Filter{Tool: "execute_command", Since: end.Add(-30 * day), Limit: 1000}
		})},
		{"query-rare-30d", "audit query --tool rare_tool --since 30d (1 call in 1009)", query(func(end time.Time) audit.Filter {
			return audit.Filter{Tool: "rare_tool", Since: end.Add(-30 * day), Limit: 1000}
		})},
		{"query-1h", "audit query --tool execute_command --since 1h", query(func(end time.Time) audit.Filter {
			return audit.Filter{Tool: "execute_command", Since: end.Add(-time.Hour), Limit: 1000}
		})},
	}
	series := map[string][]float64{}
	for i := 0; i < samples && ctx.Err() == nil; i++ {
		for _, r := range reads {
			for j := range ledgers {
				s := ledgers[(i+j)%len(ledgers)]
				start := time.Now()
				if err := r.run(s.l, audittest.SyntheticEnd(s.rows)); err != nil {
					if ctx.Err() != nil {
						break
					}
					return fmt.Errorf("%s on %d rows: %w", r.name, s.rows, err)
				}
				k := "13/" + r.key + "/" + s.key
				series[k] = append(series[k], float64(time.Since(start).Microseconds())/1000)
			}
		}
	}
	complete := samples
	for _, r := range reads {
		for _, s := range ledgers {
			complete = min(complete, len(series["13/"+r.key+"/"+s.key]))
		}
	}
	if complete == 0 {
		return errors.New("time ran out before one round completed")
	}
	for k, v := range series {
		b.res.AddSeries(k, "ms", v[:complete])
	}
	for i, r := range reads {
		row := Row{Scenario: "13", Name: fmt.Sprintf("%s, %s rows", r.name, millions(rows)), Unit: "ms", Better: "lower", Stat: "median",
			Floor: fmt.Sprintf("the same on %s rows", millions(rows/100)), Target: "≤ 100 ms",
			RigoutSeries: "13/" + r.key + "/big", FloorSeries: "13/" + r.key + "/small"}
		if r.key == "stats" {
			row.Note = "Stats sorts the exact durations of a tool with at most 10,000 timed calls in the window and reads the " +
				"histograms the writer keeps above that, so on the small ledger it reads more rows than on the large one: a ratio below 1"
		}
		if i == 0 {
			row.Note = bigNote + "; " + smallNote + ". The synthetic rows are calls of five tools by four principals, one every 0.5 s, " +
				"so 10M rows span 29 days; \"now\" is the last row's time. The target is on the rigout side (the large ledger), not the ratio"
		}
		b.res.AddRow(row)
	}
	return nil
}

// millions writes a row count as 10M, 100k or 1,000.
func millions(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0 && n > 1000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// ledgerGen names the generator (audittest.Synthetic) in the cache key;
// change it when the generator's rows change.
const ledgerGen = 1

// cachedLedger returns the path of the synthetic ledger of rows rows,
// building it with sqlite.Import unless a complete one is cached, and a
// note saying which.
func cachedLedger(ctx context.Context, rows int) (string, string, error) {
	dir := filepath.Join(os.TempDir(), "rigout-bench-ledger13", fmt.Sprintf("schema%d-gen%d-rows%d", sqlite.SchemaVersion, ledgerGen, rows))
	path := filepath.Join(dir, "audit.db")
	mark := filepath.Join(dir, "complete")
	if fi, err := os.Stat(mark); err == nil {
		return path, fmt.Sprintf("%s rows reused from %s (built %s)", millions(rows), dir, fi.ModTime().UTC().Format(time.DateTime)), nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", "", err
	}
	start := time.Now()
	i := 0
	_, err := sqlite.Import(ctx, sqlite.Config{Path: path}, func(e *audit.Event) bool {
		if i == rows || ctx.Err() != nil {
			return false
		}
		audittest.Synthetic(i, e)
		i++
		return true
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		return "", "", err
	}
	took := time.Since(start)
	return path, fmt.Sprintf("%s rows built with sqlite.Import in %v (%.0f rows/s) into %s", millions(rows), took.Round(100*time.Millisecond),
		float64(rows)/took.Seconds(), dir), nil
}
