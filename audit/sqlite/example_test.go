package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// A tool call is two rows: an intent committed before the command starts,
// and its outcome, joined by a CallID.
func Example() {
	dir, _ := os.MkdirTemp("", "audit-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l, err := sqlite.Open(ctx, sqlite.Config{
		Path: filepath.Join(dir, "audit.db"),
		Now:  func() time.Time { return clock },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()

	intent := audit.Event{
		Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: "c1",
		Principal: "ci-bot", Transport: "http", Tool: "execute_command", Host: "local",
		Decision: audit.DecisionAllow, Rule: "default", Status: audit.StatusStarted,
		ArgsDigest: l.DigestArgs([]byte(`{"command":"uptime"}`)),
	}
	if err := l.Record(ctx, intent); err != nil {
		fmt.Println("not run:", err) // fail closed
		return
	}
	// ... run the command ...
	done := intent
	done.Phase, done.Status, done.ExitCode, done.Duration = audit.PhaseDone, audit.StatusOK, new(int), 12*time.Millisecond
	if err := l.Record(ctx, done); err != nil {
		fmt.Println(err)
		return
	}

	evs, _ := l.Query(ctx, audit.Filter{CallID: "c1"})
	for _, e := range evs {
		fmt.Println(e.Seq, e.Time.Format(time.RFC3339), e.Type, e.Phase, e.Status, e.Tool)
	}
	rep, err := l.Verify(ctx)
	fmt.Println("verified rows:", rep.Rows, "error:", err)
	// Output:
	// 1 2026-01-02T03:04:05Z tool.call intent started execute_command
	// 2 2026-01-02T03:04:05Z tool.call done ok execute_command
	// verified rows: 2 error: <nil>
}

// Verify names the first row that no longer matches the chain.
func ExampleLedger_Verify() {
	dir, _ := os.MkdirTemp("", "audit-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, "audit.db")
	l, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, status := range []audit.Status{audit.StatusOK, audit.StatusDenied, audit.StatusOK} {
		l.Record(ctx, audit.Event{Type: audit.TypeToolCall, Tool: "execute_command", Status: status})
	}
	l.Close()

	// Someone turns the denial into a success.
	db, _ := sql.Open("sqlite3", path)
	db.Exec(`UPDATE events SET status = 'ok' WHERE seq = 2`)
	db.Close()

	l, err = sqlite.Open(ctx, sqlite.Config{Path: path, ReadOnly: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	_, err = l.Verify(ctx)
	var te *sqlite.TamperError
	if errors.As(err, &te) {
		fmt.Println("first bad row:", te.Seq, te.Kind)
	}
	// Output:
	// first bad row: 2 edited
}

// Stats summarises calls per tool for `rigout audit stats`.
func ExampleLedger_Stats() {
	dir, _ := os.MkdirTemp("", "audit-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	for i, status := range []audit.Status{audit.StatusOK, audit.StatusOK, audit.StatusError, audit.StatusDenied} {
		l.Record(ctx, audit.Event{Type: audit.TypeToolCall, Tool: "execute_command",
			Status: status, Duration: time.Duration(i+1) * time.Second})
	}
	stats, _ := l.Stats(ctx, audit.Filter{})
	for _, s := range stats {
		fmt.Printf("%s calls=%d denials=%d errors=%d p50=%s p95=%s\n", s.Tool, s.Calls, s.Denials, s.Errors, s.P50, s.P95)
	}
	// Output:
	// execute_command calls=4 denials=1 errors=1 p50=2s p95=3s
}

// DigestArgs correlates identical arguments without storing them.
func ExampleLedger_DigestArgs() {
	dir, _ := os.MkdirTemp("", "audit-example")
	defer os.RemoveAll(dir)
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	a := l.DigestArgs([]byte(`{"command":"cat /etc/hostname"}`))
	b := l.DigestArgs([]byte(`{"command":"cat /etc/hostname"}`))
	c := l.DigestArgs([]byte(`{"command":"cat /etc/shadow"}`))
	fmt.Println(len(a), a == b, a == c)
	// Output:
	// 16 true false
}
