package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
)

// importEvents returns n calls and other events, with clocks that go
// backwards, unfinished calls, denials, rows without a tool and done rows
// before their intents.
func importEvents(n int) []audit.Event {
	rng := rand.New(rand.NewPCG(9, 9))
	start := time.Date(2026, 11, 28, 3, 10, 0, 0, time.UTC)
	var out []audit.Event
	for i := range n {
		at := start.Add(time.Duration(i) * 71 * time.Second)
		if rng.IntN(20) == 0 {
			at = at.Add(-time.Duration(rng.IntN(10)) * time.Hour)
		}
		in := audit.Event{Time: at, Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: fmt.Sprintf("c%d", i),
			Tool: []string{"execute_command", "read_file", "rare"}[rng.IntN(3)], Principal: "ci", Status: audit.StatusStarted,
			Args: `{"x":1}`}
		out = append(out, in)
		if rng.IntN(7) == 0 {
			continue // unfinished
		}
		done := in
		done.Phase, done.Status, done.Time = audit.PhaseDone, audit.StatusOK, at.Add(time.Duration(rng.IntN(4000))*time.Millisecond)
		done.Duration = time.Duration(rng.IntN(900)) * time.Millisecond
		code := rng.IntN(2)
		done.ExitCode = &code
		switch rng.IntN(9) {
		case 0:
			done.Status = audit.StatusError
		case 1:
			done.Status, done.Decision = audit.StatusDenied, audit.DecisionDeny
		}
		switch rng.IntN(25) {
		case 0: // the done row first: the intent is not open
			out[len(out)-1], done = done, out[len(out)-1]
		case 1:
			done.Tool = "" // finishes the intent, counts for no tool
		}
		out = append(out, done)
		if rng.IntN(10) == 0 {
			out = append(out, audit.Event{Time: at, Type: audit.TypeSessionOpen, Principal: "ops"})
		}
	}
	return out
}

// dump returns every row of the ledger's tables, in key order.
func dump(t *testing.T, path string) map[string][][]any {
	t.Helper()
	db := rawDB(t, path)
	out := map[string][][]any{}
	for table, q := range map[string]string{
		"events":     `SELECT ` + columns + ` FROM events ORDER BY seq`,
		"stats_hour": `SELECT * FROM stats_hour ORDER BY hour, tool`,
		"open_calls": `SELECT * FROM open_calls ORDER BY seq`,
		"seq_hour":   `SELECT * FROM seq_hour ORDER BY tool, hour`,
		"indexes":    `SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[table] = append(out[table], vals)
		}
		rows.Close()
	}
	return out
}

// TestImportMatchesRecord imports events and records the same events one
// by one: the two files hold the same rows, chain, statistics and
// indexes, and the imported one opens and verifies.
func TestImportMatchesRecord(t *testing.T) {
	ctx := context.Background()
	evs := importEvents(2000)
	dir := t.TempDir()
	recorded := filepath.Join(dir, "recorded.db")
	// One chain key, so that both chains hash alike.
	key := bytes.Repeat([]byte{7}, 32)
	l, err := Open(ctx, Config{Path: recorded, ChainKey: key})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "sub", "imported.db")
	i := 0
	next := func(e *audit.Event) bool {
		if i == len(evs) {
			return false
		}
		*e = evs[i]
		i++
		return true
	}
	rep, err := Import(ctx, Config{Path: imported, ChainKey: key}, next)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != int64(len(evs)) || rep.LastSeq != int64(len(evs)) || len(rep.Hash) != 64 {
		t.Errorf("Import = %+v, want %d rows", rep, len(evs))
	}
	a, b := dump(t, recorded), dump(t, imported)
	for _, table := range []string{"events", "stats_hour", "open_calls", "seq_hour", "indexes"} {
		if len(a[table]) == 0 {
			t.Errorf("%s: no rows recorded", table)
		}
		if !reflect.DeepEqual(a[table], b[table]) {
			t.Errorf("%s differs: recorded %d rows, imported %d", table, len(a[table]), len(b[table]))
		}
	}
	m, err := Open(ctx, Config{Path: imported, ReadOnly: true, ChainKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if vr, err := m.Verify(ctx); err != nil || !vr.OK() || vr.Rows != int64(len(evs)) || vr.HeadSeq != rep.LastSeq || vr.LastHash != rep.Hash {
		t.Errorf("Verify of the import = %+v, %v", vr, err)
	}
	checkQueries(t, m, 7, 300)

	// An existing path is refused; a bad event leaves nothing behind.
	if _, err := Import(ctx, Config{Path: imported}, next); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Import over a ledger = %v", err)
	}
	bad := filepath.Join(dir, "bad.db")
	n := 0
	_, err = Import(ctx, Config{Path: bad}, func(e *audit.Event) bool {
		n++
		*e = audit.Event{Type: audit.TypeToolCall, Time: time.Unix(int64(n), 0)}
		if n == 100 {
			e.Type = "" // invalid
		}
		return n <= 200
	})
	if err == nil || !strings.Contains(err.Error(), "event 100") {
		t.Errorf("Import of a bad event = %v", err)
	}
	for _, p := range []string{bad, bad + ".head", bad + "-journal"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
}
