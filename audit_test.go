package rigout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/activity"
	"github.com/rigout/rigout/tools/shell"
)

func openLedger(t *testing.T) *sqlite.Ledger { return rigouttest.OpenLedger(t) }

func events(t *testing.T, l audit.Querier, f audit.Filter) []audit.Event {
	t.Helper()
	return rigouttest.Events(t, l, f)
}

// withActivity adds get_server_activity on l to cfg's tools.
func withActivity(t testing.TB, cfg rigout.Config, l audit.Querier) rigout.Config {
	t.Helper()
	f, err := activity.New(activity.Config{Ledger: l})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools = append(cfg.Tools, f.Tools()...)
	return cfg
}

func TestAuditRecordsEveryCall(t *testing.T) {
	l := openLedger(t)
	gw := newGateway(t, withShell(t, rigout.Config{Audit: l, Tools: []rigout.Tool{echoTool("echo", nil)}}, shell.Config{}))
	c := connect(t, gw)

	callTool(t, c, "execute_command", map[string]any{"command": "echo audited; exit 4"})
	callTool(t, c, "execute_command", map[string]any{"command": 5})                         // invalid
	callTool(t, c, "execute_command", map[string]any{"command": "true", "host": "nowhere"}) // refused by the handler
	callTool(t, c, "echo", map[string]any{"msg": "read-only tools get one row"})
	var req mcp.CallToolRequest
	req.Params.Name = "no_such_tool"
	_, _ = c.CallTool(context.Background(), req)

	all := events(t, l, audit.Filter{})
	byTool := map[string][]audit.Event{}
	for _, e := range all {
		byTool[e.Tool] = append(byTool[e.Tool], e)
	}
	ex := byTool["execute_command"]
	// The invalid call is refused before it could run: one row, no intent.
	if len(ex) != 5 {
		t.Fatalf("execute_command rows = %d, want 2 intents + 3 done: %+v", len(ex), ex)
	}
	intent, done := ex[0], ex[1]
	if intent.Phase != audit.PhaseIntent || intent.Status != "started" || done.Phase != audit.PhaseDone || intent.CallID != done.CallID {
		t.Errorf("intent/done pair = %+v / %+v", intent, done)
	}
	if done.Status != "error" || done.ExitCode == nil || *done.ExitCode != 4 || done.Route != "local" || done.Principal != "local" || done.ArgsDigest == "" {
		t.Errorf("done row = %+v", done)
	}
	if strings.Contains(done.Args, "audited") {
		t.Errorf("argument values stored without AuditArgValues: %q", done.Args)
	}
	if ex[2].Status != audit.StatusInvalid || ex[2].Phase != "" {
		t.Errorf("invalid call row = %+v", ex[2])
	}
	if ex[3].Phase != audit.PhaseIntent || ex[3].Host != "nowhere" {
		t.Errorf("refused host intent = %+v", ex[3])
	}
	if ex[4].Status != audit.StatusError || !strings.Contains(ex[4].Error, "unknown host") || ex[4].Host != "nowhere" {
		t.Errorf("refused host row = %+v", ex[4])
	}
	// A read-only call has its intent row too: a gateway killed mid-call
	// leaves a trace of it.
	if rows := byTool["echo"]; len(rows) != 2 || rows[0].Phase != audit.PhaseIntent || rows[1].Phase != audit.PhaseDone || rows[1].Status != "ok" {
		t.Errorf("read-only tool rows = %+v", rows)
	}
	if rows := byTool["no_such_tool"]; len(rows) != 1 || rows[0].Type != audit.TypeToolDenied || rows[0].Status != "unknown" {
		t.Errorf("unknown tool rows = %+v", rows)
	}
	if rep, err := l.Verify(context.Background()); err != nil || !rep.OK() {
		t.Errorf("chain does not verify: %+v %v", rep, err)
	}
}

func TestAuditRecordsScopeDenials(t *testing.T) {
	l := openLedger(t)
	ro := auth.Principal{Name: "reader", Transport: "stdio", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}}
	gw := newGateway(t, withShell(t, rigout.Config{Audit: l, Principal: &ro}, shell.Config{}))
	c := connect(t, gw)
	sentinel := filepath.Join(t.TempDir(), "ran")
	res := callTool(t, c, "execute_command", map[string]any{"command": "touch " + sentinel})
	if !res.IsError || !strings.Contains(text(res), "write") {
		t.Errorf("read-only token ran a command: %q", text(res))
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Error("the command ran")
	}
	rows := events(t, l, audit.Filter{Type: audit.TypeToolDenied})
	if len(rows) != 1 || rows[0].Principal != "reader" || rows[0].Status != "denied" {
		t.Errorf("denial rows = %+v", rows)
	}
}

func TestAuditStoresRedactedArgumentsWhenAsked(t *testing.T) {
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db"), StoreArgs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := connect(t, newGateway(t, withShell(t, rigout.Config{Audit: l, AuditArgValues: true}, shell.Config{})))
	callTool(t, c, "execute_command", map[string]any{"command": "true", "environment": map[string]any{"API_TOKEN": "s3cr3t-value"}})
	all := events(t, l, audit.Filter{Tool: "execute_command"})
	var rows []audit.Event
	for _, e := range all {
		if e.Phase == audit.PhaseDone {
			rows = append(rows, e)
		}
	}
	if len(rows) != 1 || !strings.Contains(rows[0].Args, `"command":"true"`) || strings.Contains(rows[0].Args, "s3cr3t-value") {
		t.Errorf("stored args = %+v", rows)
	}
}

// failingLedger is a ledger whose writes fail on demand: the real ledger
// cannot be made to fail at a chosen row.
type failingLedger struct {
	*sqlite.Ledger
	failIntent, failDone atomic.Bool
}

func (f *failingLedger) Record(ctx context.Context, e audit.Event) error {
	if (e.Phase == audit.PhaseIntent && f.failIntent.Load()) || (e.Phase == audit.PhaseDone && f.failDone.Load()) {
		return errors.New("disk full")
	}
	return f.Ledger.Record(ctx, e)
}

func TestAuditFailsClosed(t *testing.T) {
	l := openLedger(t)
	sentinel := filepath.Join(t.TempDir(), "ran")
	cmd := map[string]any{"command": "touch " + sentinel}

	// A ledger that cannot be written at all: the real one, closed.
	closed := openLedger(t)
	closed.Close()
	gw := newGateway(t, withShell(t, rigout.Config{Audit: closed}, shell.Config{}))
	res := callTool(t, connect(t, gw), "execute_command", cmd)
	if !res.IsError || !strings.Contains(text(res), "did not run: the audit ledger could not record it") {
		t.Errorf("closed ledger: %q", text(res))
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("the command ran without an intent row")
	}
	if h := gw.Health(); h.OK || h.Audit != rigout.AuditFailing {
		t.Errorf("health = %+v, want failing", h)
	}

	// The intent fails: nothing runs.
	fl := &failingLedger{Ledger: l}
	fl.failIntent.Store(true)
	gw = newGateway(t, withShell(t, rigout.Config{Audit: fl}, shell.Config{}))
	c := connect(t, gw)
	res = callTool(t, c, "execute_command", cmd)
	if !res.IsError || !strings.Contains(text(res), "disk full") {
		t.Errorf("failing intent: %q", text(res))
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("the command ran without an intent row")
	}

	// The done row fails: the command ran, but success is not acknowledged.
	fl.failIntent.Store(false)
	fl.failDone.Store(true)
	res = callTool(t, c, "execute_command", cmd)
	if !res.IsError || !strings.Contains(text(res), "could not record its completion") {
		t.Errorf("failing done row: %q", text(res))
	}
	if _, err := os.Stat(sentinel); err != nil {
		t.Error("the command should have run after its intent was recorded")
	}

	// Best effort: the call runs and health says degraded.
	os.Remove(sentinel)
	gw = newGateway(t, withShell(t, rigout.Config{Audit: closed, UnsafeAuditBestEffort: true}, shell.Config{}))
	res = callTool(t, connect(t, gw), "execute_command", cmd)
	if res.IsError {
		t.Errorf("best effort refused: %q", text(res))
	}
	if _, err := os.Stat(sentinel); err != nil {
		t.Error("best-effort mode did not run the command")
	}
	if h := gw.Health(); h.OK || h.Audit != rigout.AuditDegraded || h.AuditError == "" {
		t.Errorf("health = %+v, want degraded", h)
	}
}

func TestServerActivityReadsTheLedger(t *testing.T) {
	l := openLedger(t)
	c := connect(t, newGateway(t, withActivity(t, withShell(t, rigout.Config{Audit: l}, shell.Config{}), l)))
	callTool(t, c, "execute_command", map[string]any{"command": "exit 3"})
	res := callTool(t, c, "get_server_activity", map[string]any{"lines": 2})
	var out struct {
		Server struct {
			Name   string        `json:"name"`
			Health rigout.Health `json:"health"`
		} `json:"server"`
		Events []struct {
			Type, Phase, Tool, Status string
			ExitCode                  *int `json:"exit_code"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text(res))
	}
	if out.Server.Health.Audit != rigout.AuditOK || out.Server.Name != "rigout" {
		t.Errorf("server = %v", out.Server)
	}
	// The last two rows: the command's done row, then this call's intent.
	if len(out.Events) != 2 || out.Events[0].Phase != "done" || out.Events[0].ExitCode == nil || *out.Events[0].ExitCode != 3 ||
		out.Events[1].Phase != "intent" || out.Events[1].Tool != "get_server_activity" {
		t.Errorf("events = %+v", out.Events)
	}
	if res := callTool(t, c, "get_server_activity", map[string]any{"lines": 500}); !res.IsError {
		t.Error("lines over 200 accepted")
	}

	// A principal without full scopes sees only its own rows.
	other := auth.Principal{Name: "narrow", Scopes: auth.Scopes{Tools: []string{"get_server_activity"}, Hosts: []string{"local"}}}
	c2 := connect(t, newGateway(t, withActivity(t, rigout.Config{Audit: l, Principal: &other}, l)))
	res = callTool(t, c2, "get_server_activity", nil)
	if strings.Contains(text(res), `"tool": "execute_command"`) || !strings.Contains(text(res), "events of narrow only") {
		t.Errorf("narrow token saw others' events:\n%s", text(res))
	}
}

// TestEmbedderHooksKeepTheAudit passes mcp-go hooks through MCPOptions: the
// gateway's own hook (auditing unknown tools) must survive beside them.
func TestEmbedderHooksKeepTheAudit(t *testing.T) {
	l := openLedger(t)
	var embedderSaw atomic.Int64
	hooks := &server.Hooks{}
	hooks.AddOnError(func(context.Context, any, mcp.MCPMethod, any, error) { embedderSaw.Add(1) })
	c := connect(t, newGateway(t, rigout.Config{Audit: l, MCPOptions: []server.ServerOption{server.WithHooks(hooks)}}))
	var req mcp.CallToolRequest
	req.Params.Name = "no_such_tool"
	_, _ = c.CallTool(context.Background(), req)
	if embedderSaw.Load() != 1 {
		t.Errorf("embedder's hook ran %d times", embedderSaw.Load())
	}
	if rows := events(t, l, audit.Filter{Type: audit.TypeToolDenied}); len(rows) != 1 {
		t.Errorf("unknown tool rows = %d, want 1", len(rows))
	}
}

// TestAuditRecordsArgumentsThatAreNotAnObject sends arguments of the wrong
// JSON type, which are refused before the schema check: still recorded.
func TestAuditRecordsArgumentsThatAreNotAnObject(t *testing.T) {
	l := openLedger(t)
	c := connect(t, newGateway(t, withShell(t, rigout.Config{Audit: l}, shell.Config{})))
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = json.RawMessage(`"not an object"`)
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "must be a JSON object") {
		t.Errorf("result = %q", text(res))
	}
	rows := events(t, l, audit.Filter{Tool: "execute_command"})
	if len(rows) != 1 || rows[0].Status != audit.StatusInvalid {
		t.Errorf("rows = %+v, want one invalid row", rows)
	}
}

// TestAuditRecordsWhatRanByDefault: without AuditArgValues, each row of a
// call keeps the tool's Recorded arguments — the command as it ran, with
// secrets masked — and only the digest of the rest (environment, stdin);
// audit.Event.Ran reads the command back from a row.
func TestAuditRecordsWhatRanByDefault(t *testing.T) {
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db"), StoreArgs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var logs lockedBuffer
	c := connect(t, newGateway(t, withShell(t, withActivity(t, rigout.Config{Audit: l,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}, l), shell.Config{})))
	const key = "sk-ant-api03-" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	tests := []struct {
		name    string
		args    map[string]any
		want    string // Ran of every row
		notWant []string
	}{
		{"shell", map[string]any{"command": "echo visible-" + "$HOME", "environment": map[string]any{"EXTRA": "env-value-kept-out"}, "stdin": "stdin-kept-out"},
			"echo visible-$HOME", []string{"env-value-kept-out", "stdin-kept-out"}},
		{"argv", map[string]any{"argv": []any{"printf", "%s.", "two words"}}, `printf %s. 'two words'`, nil},
		{"secret masked", map[string]any{"command": "echo " + key}, "echo ", []string{key}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callTool(t, c, "execute_command", tt.args)
			rows := events(t, l, audit.Filter{Tool: "execute_command"})
			last := rows[len(rows)-1]
			var got []audit.Event
			for _, e := range rows {
				if e.CallID == last.CallID {
					got = append(got, e)
				}
			}
			if len(got) == 0 || len(got) > 2 { // a read-only call has its done row only
				t.Fatalf("rows of the call: %+v", got)
			}
			for _, e := range got {
				ran := e.Ran()
				if !strings.HasPrefix(ran, tt.want) || (tt.name != "secret masked" && ran != tt.want) {
					t.Errorf("%s row: Ran = %q, want %q (args %q)", e.Phase, ran, tt.want, e.Args)
				}
				for _, w := range tt.notWant {
					if strings.Contains(e.Args, w) {
						t.Errorf("%s row keeps %q: %q", e.Phase, w, e.Args)
					}
				}
				if e.ArgsDigest == "" {
					t.Errorf("%s row has no digest", e.Phase)
				}
			}
		})
	}
	// get_server_activity shows what ran.
	res := callTool(t, c, "get_server_activity", map[string]any{"lines": 20})
	var act struct {
		Events []struct {
			Tool, Ran string
		}
	}
	if err := json.Unmarshal([]byte(text(res)), &act); err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, e := range act.Events {
		shown[e.Ran] = true
	}
	if !shown["echo visible-$HOME"] || !shown["printf %s. 'two words'"] {
		t.Errorf("get_server_activity does not show the commands: %+v", act.Events)
	}
	// The operator's log (rigout logs) shows them too, masked.
	if out := logs.String(); !strings.Contains(out, `ran="echo visible-$HOME"`) || strings.Contains(out, key) || strings.Contains(out, "stdin-kept-out") {
		t.Errorf("the log does not show what ran, or shows what it must not:\n%s", out)
	}
}

// lockedBuffer is a bytes.Buffer safe for the gateway's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAuditTakesAnyRecorder: Config.Audit is an audit.Recorder, so the
// in-memory audittest.Recorder fits, and the gateway digests the
// arguments itself when the Recorder does not: the same arguments give the
// same digest, other arguments another, and another gateway (another key)
// another. The SQLite ledger keeps its own digest (audit.ArgsDigester).
func TestAuditTakesAnyRecorder(t *testing.T) {
	digests := func(rec audit.Recorder, events func() []audit.Event) []string {
		t.Helper()
		c := connect(t, newGateway(t, rigout.Config{Audit: rec, Tools: []rigout.Tool{echoTool("echo", nil)}}))
		for _, msg := range []string{"a", "a", "b"} {
			callTool(t, c, "echo", map[string]any{"msg": msg})
		}
		var out []string
		for _, e := range events() {
			if e.Tool == "echo" && e.Phase != audit.PhaseIntent {
				out = append(out, e.ArgsDigest)
			}
		}
		if len(out) != 3 {
			t.Fatalf("echo rows = %d, want 3", len(out))
		}
		return out
	}
	r1, r2 := &audittest.Recorder{}, &audittest.Recorder{}
	d1, d2 := digests(r1, r1.Events), digests(r2, r2.Events)
	if d1[0] == "" || d1[0] != d1[1] || d1[0] == d1[2] {
		t.Errorf("digests of a, a, b = %q, want two equal non-empty ones and a third", d1)
	}
	if d1[0] == d2[0] {
		t.Errorf("two gateways digested under one key: %q", d1[0])
	}
	l := openLedger(t)
	raw, err := json.Marshal(map[string]any{"msg": "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := digests(l, func() []audit.Event { return events(t, l, audit.Filter{}) })[0], l.DigestArgs(raw); got != want {
		t.Errorf("digest with the SQLite ledger = %q, want the ledger's own %q", got, want)
	}
}
