package sqlite_test

import (
	"context"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rigout/rigout/audit/sqlite"
)

// BenchmarkRecord measures committed events per second with 1 and 16
// goroutines calling Record concurrently; each Record waits for its fsync.
func BenchmarkRecord(b *testing.B) {
	for _, writers := range []int{1, 16} {
		b.Run(map[int]string{1: "writers=1", 16: "writers=16"}[writers], func(b *testing.B) {
			l, _ := openLedger(b, nil)
			_, done := call(1)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range writers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if err := l.Record(context.Background(), done); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkAuditedTrue compares running /bin/true with and without the two
// audit rows (intent before, done after) that the gateway writes per call.
func BenchmarkAuditedTrue(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true on PATH")
	}
	run := func(b *testing.B, l *sqlite.Ledger) {
		ctx := context.Background()
		in, done := call(1)
		for b.Loop() {
			if l != nil {
				if err := l.Record(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
			if l != nil {
				if err := l.Record(ctx, done); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	}
	b.Run("ledger=off", func(b *testing.B) { run(b, nil) })
	b.Run("ledger=on", func(b *testing.B) {
		l, _ := openLedger(b, nil)
		run(b, l)
	})
}
