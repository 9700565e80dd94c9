package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/audit/sqlite/sqlitetest"
)

// BenchmarkAuditedCall measures audited calls per second — an intent row
// committed, then a done row, as the gateway records a call — on the
// PostgreSQL ledger (a local server with fsync on) and on the SQLite
// ledger (WAL, synchronous=FULL), with 1 and 16 concurrent clients, side
// by side in one run:
//
//	go test -run '^$' -bench AuditedCall -benchtime 2s ./audit/postgres
//
// Compare calls/s of the two backends at the same client count: the ratio
// is the figure, not the absolute rate of a shared machine.
func BenchmarkAuditedCall(b *testing.B) {
	srv := pgtest.StartDurable(b)
	dsn := srv.CreateDB("bench")
	ctx := context.Background()
	pg, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Gateway: "bench", ChainKey: make([]byte, 32)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pg.Close() })
	lite := sqlitetest.Open(b, func(c *sqlite.Config) {})
	ledgers := []struct {
		name string
		rec  audit.Recorder
	}{{"sqlite", lite}, {"postgres", pg}}
	var n atomic.Int64
	for _, clients := range []int{1, 16} {
		for _, l := range ledgers {
			b.Run(fmt.Sprintf("clients=%d/%s", clients, l.name), func(b *testing.B) {
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for range clients {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							id := fmt.Sprint("c", n.Add(1))
							e := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: id, Principal: "bench",
								Tool: "execute_command", Host: "local", Status: audit.StatusStarted}
							if err := l.rec.Record(ctx, e); err != nil {
								b.Error(err)
								return
							}
							code := 0
							e.Phase, e.Status, e.ExitCode = audit.PhaseDone, audit.StatusOK, &code
							if err := l.rec.Record(ctx, e); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			})
		}
	}
}
