package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// openLedger opens a ledger in a fresh temporary directory and closes it when
// the test ends.
func openLedger(t testing.TB, mod func(*sqlite.Config)) (*sqlite.Ledger, sqlite.Config) {
	t.Helper()
	cfg := sqlite.Config{Path: filepath.Join(t.TempDir(), "state", "audit.db")}
	if mod != nil {
		mod(&cfg)
	}
	l, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l, cfg
}

// rawDB opens the ledger's file directly, as an attacker or a careless
// operator would.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// fixedClock returns a clock that starts at start and advances by step on
// every call.
func fixedClock(start time.Time, step time.Duration) func() time.Time {
	t := start
	return func() time.Time {
		now := t
		t = t.Add(step)
		return now
	}
}

func intp(i int) *int { return &i }

// call returns the intent and done rows of one tool call.
func call(i int) (audit.Event, audit.Event) {
	id := fmt.Sprintf("call-%d", i)
	intent := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: id, Principal: "ci",
		Transport: "http", Tool: "execute_command", Host: "local", Route: "local", Decision: audit.DecisionAllow,
		Rule: "default", Status: audit.StatusStarted, ArgsDigest: "0123456789abcdef"}
	done := intent
	done.Phase = audit.PhaseDone
	done.Status = audit.StatusOK
	done.ExitCode = intp(0)
	done.Duration = time.Duration(i+1) * time.Millisecond
	done.StdoutBytes = int64(i)
	return intent, done
}

// record records n calls (2n rows).
func record(t testing.TB, l *sqlite.Ledger, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		in, done := call(i)
		if err := l.Record(ctx, in); err != nil {
			t.Error(err) // not Fatal: record runs on other goroutines too
			return
		}
		if err := l.Record(ctx, done); err != nil {
			t.Error(err)
			return
		}
	}
}
