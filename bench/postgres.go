package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rigout/rigout/audit/postgres/pgtest"
)

// ledgerEngines is scenario 12: audited calls per second through `rigout
// serve` over HTTP (auth and audit on) with the PostgreSQL ledger against
// the same binary with its default SQLite ledger, at 1 and 16 clients, in
// the same run and interleaved window by window.
//
// The PostgreSQL server is a throwaway one on loopback (initdb into a
// temporary directory, fsync on as in production), started and stopped by
// this scenario; without the server binaries the scenario fails saying so.
// Two calls are measured: argv [true], which the read-only classifier
// audits with one done row, and argv [mkdir -p DIR] on an existing
// directory, which changes nothing but is not read-only, so it commits an
// intent row before it runs and a done row after: the ledger's full cost.
func ledgerEngines(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	pg, err := pgtest.Launch(true)
	if err != nil {
		return err
	}
	defer pg.Close()
	if _, err := pg.Exec("postgres", "CREATE DATABASE rigout_bench"); err != nil {
		return err
	}
	cfg := filepath.Join(b.tmp, "postgres-ledger.json")
	body, err := json.Marshal(map[string]any{"audit": map[string]any{"postgres": pg.DSN("rigout_bench"), "gateway": "bench"}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(cfg, body, 0o600); err != nil {
		return err
	}

	concurrency := []int{1, 16}
	rounds := pick(b, 2, 9)
	window := pick(b, 200*time.Millisecond, time.Second)

	l := &loadRun{b: b, scenario: "12", maxC: concurrency[len(concurrency)-1]}
	defer l.close()
	if err := l.start(ctx, "sqlite", func() (*proc, error) { return b.startServe(ctx, "rigout serve (SQLite ledger)", true) }); err != nil {
		return err
	}
	if err := l.start(ctx, "postgres", func() (*proc, error) {
		return b.startServe(ctx, "rigout serve (PostgreSQL ledger)", true, "--config", cfg)
	}); err != nil {
		return err
	}
	calls := []namedCall{
		{"readonly", toolRequest("execute_command", map[string]any{"argv": []string{"true"}})},
		{"write", toolRequest("execute_command", map[string]any{"argv": []string{"mkdir", "-p", b.tmp}})},
	}
	names := map[string]string{
		"readonly": "execute_command argv [true] (read-only: one row)",
		"write":    "execute_command argv [mkdir -p DIR] (intent + done rows)",
	}
	if err := l.measure(ctx, calls, concurrency, rounds, window, nil); err != nil {
		return err
	}
	for _, c := range concurrency {
		for _, t := range calls {
			b.res.AddRow(Row{Scenario: "12", Name: fmt.Sprintf("%s, PostgreSQL ledger (fsync on, loopback), %s", plural(c, "client"), names[t.key]),
				Unit: "calls/s", Better: "higher", Stat: "median", Floor: "the same calls with the SQLite ledger",
				RigoutSeries: l.series(t.key, c, "postgres"), FloorSeries: l.series(t.key, c, "sqlite")})
		}
	}
	return nil
}
