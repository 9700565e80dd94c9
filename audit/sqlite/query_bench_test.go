package sqlite_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
)

// BenchmarkQueryRecent measures the query get_server_activity makes (the
// newest rows of one tool, since a time) on a ledger of 20,000 rows.
func BenchmarkQueryRecent(b *testing.B) {
	l, _ := openLedger(b, nil)
	const rows = 20000
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1); i <= rows; i = next.Add(1) {
				in, done := call(int(i))
				if err := l.Record(context.Background(), in); err != nil {
					b.Error(err)
					return
				}
				if err := l.Record(context.Background(), done); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	f := audit.Filter{Tool: "execute_command", Since: time.Now().Add(-time.Hour), Newest: true, Limit: 50}
	b.ResetTimer()
	for b.Loop() {
		ev, err := l.Query(context.Background(), f)
		if err != nil || len(ev) != 50 {
			b.Fatalf("%d events, %v", len(ev), err)
		}
	}
}
