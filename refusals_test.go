package rigout_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/rigouttest"
)

// ledgerBytes is the size of a SQLite ledger's files.
func ledgerBytes(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, f := range []string{path, path + "-wal"} {
		if st, err := os.Stat(f); err == nil {
			n += st.Size()
		}
	}
	return n
}

// TestUnknownToolFloodBoundsLedger makes 1,000 calls over HTTP to unknown
// tools with 40,000-character names (escape sequences included). The
// ledger keeps each name cut to at most 66 bytes and writes at most
// DefaultRefusalRowsPerMinute refusal rows a minute for the principal, so
// it grows by less than unknownToolLedgerBound; a minute later the next
// refusal row is written and says how many were left out.
func TestUnknownToolFloodBoundsLedger(t *testing.T) {
	const (
		calls                  = 1000
		unknownToolLedgerBound = 256 << 10
	)
	path := filepath.Join(t.TempDir(), "audit.db")
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	gw := newGateway(t, rigout.Config{Audit: l, Now: clock, Tools: []rigout.Tool{echoTool("echo", nil)}})
	c, err := client.NewStreamableHttpClient(serveHTTP(t, gw))
	if err != nil {
		t.Fatal(err)
	}
	rigouttest.Initialize(t, c, "flood")
	ctx := context.Background()
	callTool(t, c, "echo", map[string]any{"msg": "before"})
	before := closedLedgerBytes(t, func(l *sqlite.Ledger) {
		_ = l.Record(ctx, audit.Event{Type: audit.TypeToolCall, Tool: "echo", Status: audit.StatusOK, Time: now})
	})
	start := time.Now()

	long := "\x1b[2J\x1b]0;pwned\x07" + strings.Repeat("A", 40000)
	for i := range calls {
		var req mcp.CallToolRequest
		req.Params.Name = long + string(rune('a'+i%26))
		if _, err := c.CallTool(ctx, req); err == nil {
			t.Fatal("a call to an unknown tool succeeded")
		}
	}
	took := time.Since(start)
	rows := events(t, l, audit.Filter{Type: audit.TypeToolDenied})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	growth := ledgerBytes(t, path) - before
	l, err = sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	t.Logf("%d unknown-tool calls with %d-byte names in %v: %d rows written, ledger grew %d bytes (bound %d)",
		calls, len(long)+1, took, len(rows), growth, unknownToolLedgerBound)
	if len(rows) != rigout.DefaultRefusalRowsPerMinute {
		t.Errorf("%d refusal rows written, want %d (the principal's refusal rows in a minute)", len(rows), rigout.DefaultRefusalRowsPerMinute)
	}
	if growth > unknownToolLedgerBound {
		t.Errorf("ledger grew %d bytes, bound %d", growth, unknownToolLedgerBound)
	}
	for _, e := range rows {
		if len(e.Tool) > 66 || strings.ContainsAny(e.Tool, "\x1b\x07") || !strings.Contains(e.Tool, "…sha256:") {
			t.Fatalf("unknown tool name recorded as %q (%d bytes)", e.Tool, len(e.Tool))
		}
	}

}

// TestRefusalRowsSayWhatWasLeftOut checks that once the principal's refusal
// rows are spent, refusals are counted, and the first row written a minute
// later carries their number.
func TestRefusalRowsSayWhatWasLeftOut(t *testing.T) {
	l := openLedger(t)
	var mu sync.Mutex
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := connect(t, newGateway(t, rigout.Config{Audit: l, Now: clock, RefusalRows: rigout.Rate{Calls: 3, Per: time.Minute}}))
	unknown := func(name string) {
		var req mcp.CallToolRequest
		req.Params.Name = name
		if _, err := c.CallTool(context.Background(), req); err == nil {
			t.Fatal("a call to an unknown tool succeeded")
		}
	}
	for range 10 {
		unknown("no_such_tool")
	}
	if rows := events(t, l, audit.Filter{Type: audit.TypeToolDenied}); len(rows) != 3 {
		t.Fatalf("%d rows for 10 refusals, want 3", len(rows))
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	unknown("other_tool")
	rows := events(t, l, audit.Filter{Type: audit.TypeToolDenied})
	last := rows[len(rows)-1]
	if len(rows) != 4 || last.Tool != "other_tool" || !strings.Contains(last.Detail, `"refusals_not_recorded":"7"`) {
		t.Errorf("first refusal row after the minute (%d rows): tool %q detail %s, want the 7 left out", len(rows), last.Tool, last.Detail)
	}
}

// closedLedgerBytes is the size of a fresh ledger after fill and Close.
func closedLedgerBytes(t *testing.T, fill func(*sqlite.Ledger)) int64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "baseline.db")
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	fill(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return ledgerBytes(t, path)
}

// TestRefusalLimitKeepsDoneRows: a call refused after its intent row was
// written always gets its done row, whatever the refusal rows left.
func TestRefusalLimitKeepsDoneRows(t *testing.T) {
	l := openLedger(t)
	refuseLate := rigout.Tool{
		Name: "refuse_late", Description: "Refuses once running.", Risk: rigout.Exec,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return nil, &auth.ScopeError{Scope: "bypass", Reason: "refused by the handler"}
		},
	}
	c := connect(t, newGateway(t, rigout.Config{Audit: l, RefusalRows: rigout.Rate{Calls: 1, Per: time.Hour}, Tools: []rigout.Tool{refuseLate}}))
	for range 3 {
		if res := callTool(t, c, "refuse_late", nil); !res.IsError {
			t.Fatal("the call was not refused")
		}
	}
	var intents, done int
	for _, e := range events(t, l, audit.Filter{Tool: "refuse_late"}) {
		switch e.Phase {
		case audit.PhaseIntent:
			intents++
		case audit.PhaseDone:
			done++
		}
	}
	if intents != 3 || done != 3 {
		t.Errorf("%d intent and %d done rows for 3 calls refused after their intent, want 3 and 3", intents, done)
	}
}
