package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// recorder is what scenario 5 drives: sqlite.Ledger and its floor.
type recorder interface {
	Record(ctx context.Context, e audit.Event) error
}

// auditLedger is scenario 5: events recorded per second by sqlite.Ledger
// (SQLite, hash chain, statistics, group commit, fsync) with 1 and 16
// concurrent writers, and audited calls per second (an intent row, then a
// done row, each committed before the next step, as the gateway writes
// them) with 1, 8, 16 and 64 concurrent callers, against the floor of a
// durable log: JSON lines appended to a file and committed with fdatasync,
// with the same group commit. Windows alternate ledger and floor, rotating
// the order every round.
func auditLedger(ctx context.Context, b *bench) error {
	rounds := pick(b, 3, 7)
	window := pick(b, 300*time.Millisecond, time.Second)
	dir := filepath.Join(b.tmp, "audit5")
	led, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		return err
	}
	defer led.Close()
	floor, err := openJSONL(filepath.Join(dir, "floor.jsonl"))
	if err != nil {
		return err
	}
	defer floor.Close()

	sides := []struct {
		key string
		rec recorder
	}{{"ledger", led}, {"floor", floor}}
	for _, s := range sides { // warm up
		if _, err := recordWindow(ctx, s.rec, 4, 100*time.Millisecond, 1); err != nil {
			return err
		}
	}
	samples := map[string][]float64{}
	measures := []auditMeasure{{1, 1}, {16, 1}, {1, 2}, {8, 2}, {16, 2}, {64, 2}}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		for _, m := range measures {
			for i := range sides {
				s := sides[(i+r)%len(sides)]
				rate, err := recordWindow(ctx, s.rec, m.writers, window, m.rows)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					return fmt.Errorf("%s, %d writers: %w", s.key, m.writers, err)
				}
				k := m.key(s.key)
				samples[k] = append(samples[k], rate)
			}
		}
	}
	complete := rounds
	for _, v := range samples {
		complete = min(complete, len(v))
	}
	if complete == 0 {
		return errors.New("time ran out before one round completed")
	}
	for k, v := range samples {
		b.res.AddSeries(k, "events/s", v[:complete])
	}
	for _, m := range measures {
		if m.rows == 1 {
			// The row keeps the name it had before the ledger moved to audit/sqlite,
			// so that results compare across runs.
			b.res.AddRow(Row{Scenario: "5", Name: "audit.Ledger.Record, " + plural(m.writers, "writer"), Unit: "events/s", Better: "higher",
				Stat: "median", Floor: "JSON lines + fdatasync, same group commit",
				RigoutSeries: m.key("ledger"), FloorSeries: m.key("floor")})
			continue
		}
		b.res.AddRow(Row{Scenario: "5", Name: "audited calls (intent + done), " + plural(m.writers, "caller"), Unit: "calls/s", Better: "higher",
			Stat: "median", Floor: "JSON lines + fdatasync, same group commit",
			RigoutSeries: m.key("ledger"), FloorSeries: m.key("floor")})
	}
	return nil
}

// auditMeasure is one of scenario 5's measurements: writers goroutines
// each committing rows rows in turn per unit counted.
type auditMeasure struct{ writers, rows int }

func (m auditMeasure) key(side string) string {
	if m.rows == 1 {
		return fmt.Sprintf("5/w%d/%s", m.writers, side) // the series' names before calls were measured
	}
	return fmt.Sprintf("5/calls/w%d/%s", m.writers, side)
}

// auditEvent is the done row of an execute_command call, as the gateway
// writes it.
func auditEvent(i int64) audit.Event {
	code := 0
	return audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseDone, CallID: fmt.Sprintf("%016x", i),
		Principal: "default", Transport: "http", RemoteAddr: "127.0.0.1:54321", Tool: "execute_command",
		Host: "local", Route: "local", Decision: audit.DecisionAllow, Rule: "default", ExitCode: &code,
		Duration: 1200 * time.Microsecond, Status: audit.StatusOK, ArgsDigest: "0123456789abcdef"}
}

// recordWindow records events from writers goroutines for d and returns
// the units committed per second; a unit is rows events recorded one after
// the other (2: the intent and done rows of a call).
func recordWindow(ctx context.Context, rec recorder, writers int, d time.Duration, rows int) (float64, error) {
	start := time.Now()
	end := start.Add(d)
	var n atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				done := auditEvent(n.Load())
				evs := []audit.Event{done}
				if rows == 2 {
					intent := done
					intent.Phase, intent.Status, intent.ExitCode, intent.Duration = audit.PhaseIntent, audit.StatusStarted, nil, 0
					evs = []audit.Event{intent, done}
				}
				for _, e := range evs {
					if err := rec.Record(ctx, e); err != nil {
						mu.Lock()
						if first == nil {
							first = err
						}
						mu.Unlock()
						return
					}
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return float64(n.Load()) / time.Since(start).Seconds(), nil
}

// jsonl is the floor of a durable audit log: each event is one JSON line
// appended to a file and committed with fdatasync before Record returns.
// Like sqlite.Ledger, writes from all goroutines go through one writer
// goroutine that commits up to 256 waiting events at once, so concurrent
// writers share an fdatasync. It is safe for concurrent use until Close.
type jsonl struct {
	f    *os.File
	reqs chan jsonlReq
	done chan struct{}
}

type jsonlReq struct {
	line []byte
	errc chan error
}

func openJSONL(path string) (*jsonl, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	j := &jsonl{f: f, reqs: make(chan jsonlReq, 1024), done: make(chan struct{})}
	go j.run()
	return j, nil
}

// Record appends e and returns once it is on disk.
func (j *jsonl) Record(_ context.Context, e audit.Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	j.reqs <- jsonlReq{append(line, '\n'), errc}
	return <-errc
}

func (j *jsonl) run() {
	defer close(j.done)
	var buf []byte
	for req := range j.reqs {
		batch := []jsonlReq{req}
	drain:
		for len(batch) < 256 {
			select {
			case r, ok := <-j.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		buf = buf[:0]
		for _, r := range batch {
			buf = append(buf, r.line...)
		}
		_, err := j.f.Write(buf)
		if err == nil {
			err = syscall.Fdatasync(int(j.f.Fd()))
		}
		for _, r := range batch {
			r.errc <- err
		}
	}
}

// Close stops the writer and closes the file. No Record may follow.
func (j *jsonl) Close() error {
	close(j.reqs)
	<-j.done
	return j.f.Close()
}
