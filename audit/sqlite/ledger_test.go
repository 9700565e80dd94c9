package sqlite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

func TestRecordRoundTrip(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l, _ := openLedger(t, func(c *sqlite.Config) { c.Now = fixedClock(start, time.Second) })
	ctx := context.Background()
	in := audit.Event{
		Type: audit.TypeToolCall, CallID: "c1", Phase: audit.PhaseDone, Principal: "alice",
		Transport: "http", RemoteAddr: "127.0.0.1:5555", Session: "s-1", Tool: "execute_command",
		Host: "web1", Route: "ssh(web1 → 10.0.0.5:22)", Decision: audit.DecisionAllow, Rule: "r7", Bypassed: true,
		ExitCode: intp(3), Signal: "SIGTERM", Duration: 1500 * time.Millisecond, StdoutBytes: 10,
		StderrBytes: 20, Truncated: true, Status: audit.StatusError, Error: "exit 3",
		ArgsDigest: "abcdef0123456789", Args: `{"command":"ls"}`,
	}
	got, err := l.Append(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 1 || !got.Time.Equal(start) || got.Time.Location() != time.UTC || got.Hash == "" ||
		got.PrevHash != strings.Repeat("0", 64) {
		t.Fatalf("Append returned %+v", got)
	}
	if got.Args != "" {
		t.Errorf("Args kept without StoreArgs: %q", got.Args)
	}
	evs, err := l.Query(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("Query returned %d events", len(evs))
	}
	want := in
	want.Seq, want.Time, want.Args, want.Hash, want.PrevHash = 1, start, "", got.Hash, got.PrevHash
	if !reflect.DeepEqual(evs[0], want) {
		t.Errorf("stored\n%+v\nwant\n%+v", evs[0], want)
	}
	// A caller-supplied time is kept, in UTC.
	at := time.Date(2026, 3, 1, 14, 0, 0, 123, time.FixedZone("X", 3600))
	got, err = l.Append(ctx, audit.Event{Type: audit.TypeServerStart, Time: at})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Time.Equal(at) || got.Time.Location() != time.UTC || got.Seq != 2 {
		t.Errorf("time %v seq %d", got.Time, got.Seq)
	}
}

func TestStoreArgs(t *testing.T) {
	l, _ := openLedger(t, func(c *sqlite.Config) { c.StoreArgs = true })
	got, err := l.Append(context.Background(), audit.Event{Type: "tool.call", Args: `{"path":"/etc"}`})
	if err != nil || got.Args != `{"path":"/etc"}` {
		t.Fatalf("Append = %+v, %v", got, err)
	}
}

func TestRecordRejectsBadEvents(t *testing.T) {
	l, _ := openLedger(t, nil)
	tests := []struct {
		name string
		e    audit.Event
	}{
		{"empty type", audit.Event{}},
		{"reserved type", audit.Event{Type: audit.TypePrune}},
		{"bad phase", audit.Event{Type: "tool.call", Phase: "later"}},
		{"time out of range", audit.Event{Type: "tool.call", Time: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := l.Record(context.Background(), tt.e); !errors.Is(err, audit.ErrInvalidEvent) {
				t.Errorf("Record = %v, want ErrInvalidEvent", err)
			}
		})
	}
	if err := l.Healthy(); err != nil {
		t.Errorf("a refused event made the ledger unhealthy: %v", err)
	}
}

func TestRecordSanitizes(t *testing.T) {
	l, _ := openLedger(t, func(c *sqlite.Config) { c.StoreArgs = true })
	got, err := l.Append(context.Background(), audit.Event{
		Type: "tool.call", Error: "bad \xff byte", Args: strings.Repeat("é", 1<<16),
		Duration: -time.Second, StdoutBytes: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Error != "bad \uFFFD byte" || got.Duration != 0 || got.StdoutBytes != 0 {
		t.Errorf("stored %+v", got)
	}
	if len(got.Args) > 64<<10 || !strings.HasSuffix(got.Args, " bytes cut]") || !utf8.ValidString(got.Args) {
		t.Errorf("Args of %d bytes not cut cleanly: ...%q", len(got.Args), got.Args[len(got.Args)-30:])
	}
	if _, err := l.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestRecordIgnoresCancellation(t *testing.T) {
	l, _ := openLedger(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Record(ctx, audit.Event{Type: audit.TypeSessionClose}); err != nil {
		t.Fatalf("Record with a cancelled context: %v", err)
	}
	evs, _ := l.Query(context.Background(), audit.Filter{})
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
}

func TestCloseStopsWrites(t *testing.T) {
	l, _ := openLedger(t, nil)
	record(t, l, 2)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.Record(context.Background(), audit.Event{Type: "x.y"}); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Record after Close = %v", err)
	}
	if _, err := l.Query(context.Background(), audit.Filter{}); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Query after Close = %v", err)
	}
	if err := l.Healthy(); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Healthy after Close = %v", err)
	}
}

func TestFilesAreOwnerOnly(t *testing.T) {
	_, cfg := openLedger(t, nil)
	dir := filepath.Dir(cfg.Path)
	check := func(p string, want os.FileMode) {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %04o, want %04o", filepath.Base(p), fi.Mode().Perm(), want)
		}
	}
	check(dir, 0o700)
	check(cfg.Path, 0o600)
	check(cfg.Path+".key", 0o600)
	check(cfg.Path+".head", 0o600)
	check(cfg.Path+"-wal", 0o600)
}

func TestSecretAndDigest(t *testing.T) {
	l, cfg := openLedger(t, nil)
	key, err := os.ReadFile(cfg.Path + ".key")
	if err != nil || len(key) != 32 {
		t.Fatalf("secret: %d bytes, %v", len(key), err)
	}
	d1 := l.DigestArgs([]byte(`{"command":"ls"}`))
	if len(d1) != 16 || d1 != l.DigestArgs([]byte(`{"command":"ls"}`)) || d1 == l.DigestArgs([]byte(`{"command":"id"}`)) {
		t.Fatalf("digest %q is not a stable 16-digit keyed hash", d1)
	}
	l.Close()
	// The secret survives a reopen.
	l2, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if got := l2.DigestArgs([]byte(`{"command":"ls"}`)); got != d1 {
		t.Errorf("digest after reopen %q, want %q", got, d1)
	}
	// Another install has another secret.
	other, _ := openLedger(t, nil)
	if other.DigestArgs([]byte(`{"command":"ls"}`)) == d1 {
		t.Error("two installs share a digest")
	}
	// A secret readable by others is refused.
	l2.Close()
	os.Chmod(cfg.Path+".key", 0o644)
	if _, err := sqlite.Open(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("Open with a 0644 secret = %v", err)
	}
}

func TestSchemaVersion(t *testing.T) {
	l, cfg := openLedger(t, nil)
	record(t, l, 1)
	l.Close()
	db := rawDB(t, cfg.Path)
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != 4 {
		t.Fatalf("user_version = %d, %v", v, err)
	}
	mustExec(t, db, `PRAGMA user_version = 99`)
	db.Close()
	_, err := sqlite.Open(context.Background(), cfg)
	var sv *sqlite.SchemaVersionError
	if !errors.As(err, &sv) || sv.Found != 99 {
		t.Fatalf("Open of a newer schema = %v", err)
	}
}

func TestReadOnly(t *testing.T) {
	_, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "none.db"), ReadOnly: true})
	if !errors.Is(err, sqlite.ErrNoLedger) {
		t.Fatalf("read-only Open of a missing ledger = %v", err)
	}
	w, cfg := openLedger(t, nil)
	record(t, w, 3)
	cfg.ReadOnly = true
	r, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Record(context.Background(), audit.Event{Type: "x.y"}); !errors.Is(err, sqlite.ErrReadOnly) {
		t.Errorf("Record on read-only = %v", err)
	}
	if _, err := r.Prune(context.Background(), time.Now(), sqlite.Operator{}); !errors.Is(err, sqlite.ErrReadOnly) {
		t.Errorf("Prune on read-only = %v", err)
	}
	evs, err := r.Query(context.Background(), audit.Filter{})
	if err != nil || len(evs) != 6 {
		t.Fatalf("read-only Query: %d events, %v", len(evs), err)
	}
	// It sees rows the writer commits later.
	record(t, w, 1)
	if evs, _ := r.Query(context.Background(), audit.Filter{}); len(evs) != 8 {
		t.Errorf("read-only Query after a write: %d events", len(evs))
	}
	if _, err := r.Verify(context.Background()); err != nil {
		t.Errorf("read-only Verify: %v", err)
	}
	if err := r.Healthy(); !errors.Is(err, sqlite.ErrReadOnly) {
		t.Errorf("Healthy on read-only = %v", err)
	}
	if err := w.Healthy(); err != nil {
		t.Errorf("Healthy on a working ledger = %v", err)
	}
	if r.DigestArgs([]byte("x")) != w.DigestArgs([]byte("x")) {
		t.Error("read-only ledger has a different secret")
	}
}

func TestTwoLedgersInOneProcess(t *testing.T) {
	a, _ := openLedger(t, nil)
	b, _ := openLedger(t, func(c *sqlite.Config) { c.StoreArgs = true })
	record(t, a, 2)
	record(t, b, 3)
	ea, _ := a.Query(context.Background(), audit.Filter{})
	eb, _ := b.Query(context.Background(), audit.Filter{})
	if len(ea) != 4 || len(eb) != 6 {
		t.Fatalf("got %d and %d events", len(ea), len(eb))
	}
}

func TestQueryFilters(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, _ := openLedger(t, func(c *sqlite.Config) { c.Now = fixedClock(start, time.Minute) })
	ctx := context.Background()
	for _, e := range []audit.Event{
		{Type: audit.TypeServerStart},
		{Type: audit.TypeToolCall, Tool: "a", Host: "h1", Principal: "p1", Status: audit.StatusOK},
		{Type: audit.TypeToolDenied, Tool: "a", Host: "h2", Principal: "p2", Status: audit.StatusDenied},
		{Type: audit.TypeHostKeyLearned, Host: "h2"},
		{Type: "ssh.hostkey.changed", Host: "h2"},
		{Type: audit.TypeToolCall, Tool: "b", Host: "h1", Principal: "p1", Status: audit.StatusError, Session: "s9"},
	} {
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(f audit.Filter) []int64 {
		evs, err := l.Query(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var s []int64
		for _, e := range evs {
			s = append(s, e.Seq)
		}
		return s
	}
	tests := []struct {
		name string
		f    audit.Filter
		want []int64
	}{
		{"all", audit.Filter{}, []int64{1, 2, 3, 4, 5, 6}},
		{"tool", audit.Filter{Tool: "a"}, []int64{2, 3}},
		{"host", audit.Filter{Host: "h2"}, []int64{3, 4, 5}},
		{"principal+status", audit.Filter{Principal: "p1", Status: audit.StatusError}, []int64{6}},
		{"type prefix", audit.Filter{Type: "ssh.hostkey.*"}, []int64{4, 5}},
		{"type exact", audit.Filter{Type: audit.TypeToolCall}, []int64{2, 6}},
		{"session", audit.Filter{Session: "s9"}, []int64{6}},
		{"since", audit.Filter{Since: start.Add(2 * time.Minute)}, []int64{3, 4, 5, 6}},
		{"until", audit.Filter{Until: start.Add(2 * time.Minute)}, []int64{1, 2}},
		{"after seq", audit.Filter{AfterSeq: 4}, []int64{5, 6}},
		{"before seq", audit.Filter{BeforeSeq: 3}, []int64{1, 2}},
		{"limit oldest", audit.Filter{Limit: 2}, []int64{1, 2}},
		{"limit newest", audit.Filter{Limit: 2, Newest: true}, []int64{5, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := seqs(tt.f); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("seqs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStats(t *testing.T) {
	l, _ := openLedger(t, nil)
	ctx := context.Background()
	// 20 finished calls of "run" with durations 1..20 ms, 2 of them errors.
	for i := range 20 {
		in, done := call(i)
		in.Tool, done.Tool = "run", "run"
		if i%10 == 9 {
			done.Status = audit.StatusError
		}
		l.Record(ctx, in)
		l.Record(ctx, done)
	}
	// One interrupted call and two denials.
	in, _ := call(99)
	in.Tool = "run"
	l.Record(ctx, in)
	l.Record(ctx, audit.Event{Type: audit.TypeToolDenied, Tool: "run", Status: audit.StatusDenied, Decision: audit.DecisionDeny})
	l.Record(ctx, audit.Event{Type: audit.TypeToolCall, Tool: "files", Status: audit.StatusDenied, Duration: time.Hour})
	l.Record(ctx, audit.Event{Type: audit.TypeToolCall, Tool: "files", Status: audit.StatusOK, Duration: time.Second})
	l.Record(ctx, audit.Event{Type: audit.TypeServerStart})
	st, err := l.Stats(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := []audit.ToolStats{
		{Tool: "files", Calls: 2, Denials: 1, P50: time.Second, P95: time.Second},
		{Tool: "run", Calls: 21, Denials: 1, Errors: 2, Unfinished: 1, P50: 10 * time.Millisecond, P95: 19 * time.Millisecond},
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Stats =\n%+v\nwant\n%+v", st, want)
	}
}

func TestPruneAndExport(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, _ := openLedger(t, func(c *sqlite.Config) { c.Now = fixedClock(start, time.Hour) })
	ctx := context.Background()
	record(t, l, 5) // rows 1-10 at hours 0-9
	op := sqlite.Operator{Principal: "os:root", Transport: "cli"}
	rep, err := l.Prune(ctx, start.Add(4*time.Hour), op)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 4 || rep.FirstSeq != 1 || rep.LastSeq != 4 || rep.Event.Seq != 11 || rep.Event.Type != audit.TypePrune || rep.Event.Principal != "os:root" {
		t.Fatalf("Prune = %+v", rep)
	}
	vr, err := l.Verify(ctx)
	if err != nil {
		t.Fatalf("Verify after prune: %v", err)
	}
	if vr.FirstSeq != 5 || vr.Pruned != 4 || vr.Rows != 7 {
		t.Errorf("Verify after prune = %+v", vr)
	}
	// An empty prune is recorded too.
	if rep, err := l.Prune(ctx, start, op); err != nil || rep.Rows != 0 || rep.Event.Seq != 12 {
		t.Fatalf("empty Prune = %+v, %v", rep, err)
	}
	var buf bytes.Buffer
	er, err := l.Export(ctx, &buf, audit.Filter{Tool: "execute_command"}, op)
	if err != nil {
		t.Fatal(err)
	}
	if er.Rows != 6 || er.FirstSeq != 5 || er.LastSeq != 10 || er.Event.Type != audit.TypeExport || er.Event.Seq != 13 {
		t.Fatalf("Export = %+v", er)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines exported", len(lines))
	}
	var prev audit.Event
	for i, line := range lines {
		var e audit.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if i > 0 && e.PrevHash != prev.Hash {
			t.Errorf("line %d does not chain to line %d", i+1, i)
		}
		prev = e
	}
	// Pruning everything keeps the chain verifiable.
	if _, err := l.Prune(ctx, start.Add(1000*time.Hour), op); err != nil {
		t.Fatal(err)
	}
	if vr, err := l.Verify(ctx); err != nil || vr.Rows != 1 {
		t.Fatalf("Verify after pruning all: %+v, %v", vr, err)
	}
	record(t, l, 1)
	if _, err := l.Verify(ctx); err != nil {
		t.Fatalf("Verify after more writes: %v", err)
	}
}

func TestConcurrentWriters(t *testing.T) {
	l, _ := openLedger(t, nil)
	const writers, each = 16, 100
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				e := audit.Event{Type: audit.TypeToolCall, CallID: callID(w, i), Tool: "t", Status: audit.StatusOK}
				if err := l.Record(context.Background(), e); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	evs, err := l.Query(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != writers*each {
		t.Fatalf("%d events, want %d", len(evs), writers*each)
	}
	seen := map[string]bool{}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if seen[e.CallID] {
			t.Fatalf("%s recorded twice", e.CallID)
		}
		seen[e.CallID] = true
	}
	if _, err := l.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func callID(w, i int) string { return fmt.Sprintf("w%d-%d", w, i) }

func TestOpenRefusesNonFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.db")
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(context.Background(), sqlite.Config{Path: p})
	var we *sqlite.WriteError
	if !errors.As(err, &we) {
		t.Fatalf("Open with a directory as the database = %v", err)
	}
}

func TestMultipleProcessesShareTheChain(t *testing.T) {
	// Two Ledgers on one file stand in for the gateway and the CLI: each
	// positions its batch at the tail inside the write lock.
	a, cfg := openLedger(t, nil)
	b, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	for _, l := range []*sqlite.Ledger{a, b, a, b} {
		wg.Go(func() { record(t, l, 50) })
	}
	wg.Wait()
	vr, err := a.Verify(context.Background())
	if err != nil || vr.Rows != 400 {
		t.Fatalf("Verify = %+v, %v", vr, err)
	}
}
