package sqlite

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
)

func TestHistogramBins(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	prev := -1
	for d := int64(0); d < 1<<16; d++ { // bins are monotone in d
		b := histBin(d)
		if b < prev {
			t.Fatalf("histBin(%d) = %d < histBin(%d) = %d", d, b, d-1, prev)
		}
		prev = b
	}
	for range 100000 {
		d := int64(rng.ExpFloat64() * float64(rng.Int64N(int64(time.Hour))+1))
		got := int64(histValue(histBin(d)))
		if diff := max(got-d, d-got); diff*64 > d {
			t.Fatalf("histValue(histBin(%d)) = %d: off by more than 1/64", d, got)
		}
	}
	h := &hist{}
	h.inc(3, 2)
	h.inc(900, 5)
	h.inc(70, 1)
	g := &hist{}
	if err := decodeHist(h.encode(), g); err != nil || len(g.n) != 901 || g.n[900] != 5 || g.n[3] != 2 || g.n[70] != 1 || g.n[4] != 0 {
		t.Errorf("round trip of %v = %v, %v", h, g, err)
	}
	if err := decodeHist([]byte{0x80}, &hist{}); err == nil {
		t.Error("a truncated histogram decoded")
	}
	if err := decodeHist(binary.AppendUvarint(nil, 1<<40), &hist{}); err == nil {
		t.Error("a histogram naming a huge bin decoded")
	}
	if q := histBin(1<<63 - 1); q >= maxBin {
		t.Errorf("histBin(max) = %d ≥ maxBin %d", q, maxBin)
	}
}

// bulkAppend appends n events from gen through the writer's chain and
// statistics (unless noStats), perTx rows to a transaction, without the
// hand-off of Record.
func bulkAppend(tb testing.TB, l *Ledger, n, perTx int, gen func(i int) audit.Event, noStats bool) {
	tb.Helper()
	for i := 0; i < n; {
		err := l.write(func(c *chainWriter) error {
			if noStats {
				c.st = nil
			}
			for end := min(i+perTx, n); i < end; i++ {
				e := gen(i)
				if err := c.append(&e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// TestStatsHistogramPath checks the statistics of a tool with more timed
// calls than are sorted exactly: counts exact, percentiles within 1/64.
func TestStatsHistogramPath(t *testing.T) {
	l, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Date(2026, 12, 1, 10, 20, 0, 0, time.UTC)
	const calls = exactQuantileCalls + 2500
	var durs []time.Duration
	var errs int64
	bulkAppend(t, l, 2*calls, 5000, func(i int) audit.Event {
		e := audit.Event{Time: start.Add(time.Duration(i) * time.Second), Type: audit.TypeToolCall, Tool: "run",
			CallID: fmt.Sprint("c", i/2), Phase: audit.PhaseIntent, Status: audit.StatusStarted}
		if i%2 == 1 {
			e.Phase, e.Status = audit.PhaseDone, audit.StatusOK
			if rng.IntN(10) == 0 {
				e.Status = audit.StatusError
				errs++
			}
			e.Duration = time.Duration(rng.ExpFloat64() * float64(30*time.Millisecond))
			durs = append(durs, e.Duration)
		}
		return e
	}, false)
	slices.Sort(durs)
	st, err := l.Stats(context.Background(), audit.Filter{Tool: "run", Since: start.Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].Calls != calls || st[0].Errors != errs || st[0].Denials != 0 || st[0].Unfinished != 0 {
		t.Fatalf("Stats = %+v; want %d calls, %d errors", st, calls, errs)
	}
	for _, c := range []struct {
		got time.Duration
		p   int
	}{{st[0].P50, 50}, {st[0].P95, 95}} {
		want := percentile(durs, c.p)
		if diff := max(c.got-want, want-c.got); diff*64 > want {
			t.Errorf("P%d = %v, exact %v: off by more than 1/64", c.p, c.got, want)
		}
		if c.got == want {
			t.Logf("P%d = %v is exact (by chance)", c.p, c.got)
		}
	}
}
