package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

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
	maxC := concurrency[len(concurrency)-1]
	rounds := pick(b, 2, 9)
	window := pick(b, 200*time.Millisecond, time.Second)

	type server struct {
		key     string
		proc    *proc
		clients []*client.Client
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			for _, c := range s.clients {
				c.Close()
			}
			s.proc.stop()
		}
	}()
	for _, s := range []struct {
		key, name string
		extra     []string
	}{
		{"sqlite", "rigout serve (SQLite ledger)", nil},
		{"postgres", "rigout serve (PostgreSQL ledger)", []string{"--config", cfg}},
	} {
		p, err := b.startServe(ctx, s.name, true, s.extra...)
		if err != nil {
			return err
		}
		srv := &server{key: s.key, proc: p}
		servers = append(servers, srv)
		for range maxC {
			c, err := httpClient(ctx, p.url, p.token)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			srv.clients = append(srv.clients, c)
		}
	}

	tools := []struct {
		key  string
		name string
		req  mcp.CallToolRequest
	}{
		{"readonly", "execute_command argv [true] (read-only: one row)", toolRequest("execute_command", map[string]any{"argv": []string{"true"}})},
		{"write", "execute_command argv [mkdir -p DIR] (intent + done rows)", toolRequest("execute_command", map[string]any{"argv": []string{"mkdir", "-p", b.tmp}})},
	}
	for _, t := range tools {
		for _, s := range servers {
			if _, err := loadWindow(ctx, s.clients, t.req, 200*time.Millisecond); err != nil {
				return fmt.Errorf("warm-up %s %s: %w", s.proc.name, t.key, err)
			}
		}
	}
	samples := map[string][]float64{}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		b.logf("scenario 12: round %d of %d", r+1, rounds)
		for _, c := range concurrency {
			for _, t := range tools {
				for i := range servers {
					s := servers[(i+r)%len(servers)]
					rate, err := loadWindow(ctx, s.clients[:c], t.req, window)
					if err != nil {
						if ctx.Err() != nil {
							break
						}
						return fmt.Errorf("%s, %s, %d clients: %w", s.proc.name, t.key, c, err)
					}
					k := fmt.Sprintf("12/%s/c%d/%s", t.key, c, s.key)
					samples[k] = append(samples[k], rate)
				}
			}
		}
	}
	complete := rounds
	for _, v := range samples {
		complete = min(complete, len(v))
	}
	if complete == 0 {
		return fmt.Errorf("time ran out before one round completed")
	}
	for k, v := range samples {
		b.res.AddSeries(k, "calls/s", v[:complete])
	}
	for _, c := range concurrency {
		for _, t := range tools {
			b.res.AddRow(Row{Scenario: "12", Name: fmt.Sprintf("%s, PostgreSQL ledger (fsync on, loopback), %s", plural(c, "client"), t.name),
				Unit: "calls/s", Better: "higher", Stat: "median", Floor: "the same calls with the SQLite ledger",
				RigoutSeries: fmt.Sprintf("12/%s/c%d/postgres", t.key, c), FloorSeries: fmt.Sprintf("12/%s/c%d/sqlite", t.key, c)})
		}
	}
	return nil
}
