package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// auditFixture writes a ledger with a few calls into a fresh state
// directory and returns the directory.
func auditFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	tick := start
	l, err := sqlite.Open(context.Background(), sqlite.Config{
		Path: filepath.Join(dir, "audit.db"),
		Now:  func() time.Time { tick = tick.Add(time.Minute); return tick },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	zero, one := 0, 1
	for _, e := range []audit.Event{
		{Type: audit.TypeServerStart, Transport: "http", Status: audit.StatusOK},
		{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: "c1", Principal: "alice", Tool: "execute_command", Host: "local", Status: audit.StatusStarted},
		{Type: audit.TypeToolCall, Phase: audit.PhaseDone, CallID: "c1", Principal: "alice", Tool: "execute_command", Host: "local", Status: audit.StatusOK, ExitCode: &zero, Duration: 20 * time.Millisecond},
		{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: "c2", Principal: "bob", Tool: "execute_command", Host: "web1", Status: audit.StatusStarted},
		{Type: audit.TypeToolCall, Phase: audit.PhaseDone, CallID: "c2", Principal: "bob", Tool: "execute_command", Host: "web1", Status: audit.StatusError, ExitCode: &one, Duration: 40 * time.Millisecond, Error: "exit status 1"},
		{Type: audit.TypeToolDenied, CallID: "c3", Principal: "bob", Tool: "execute_command", Host: "web1", Status: audit.StatusDenied, Decision: audit.DecisionDeny, Rule: "no-rm-rf", Error: "rm -rf / is refused"},
		{Type: audit.TypeToolCall, CallID: "c4", Principal: "alice", Tool: "search_files", Host: "local", Status: audit.StatusOK, Duration: 5 * time.Millisecond},
	} {
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runAuditT runs rigout audit with args and returns its exit code and output.
func runAuditT(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runAudit(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestAuditUsage(t *testing.T) {
	dir := auditFixture(t)
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, 2},
		{"help", []string{"help"}, 0},
		{"unknown command", []string{"frobnicate"}, 2},
		{"unknown flag", []string{"verify", "--nope"}, 2},
		{"stray argument", []string{"query", "--state-dir", dir, "extra"}, 2},
		{"bad time", []string{"query", "--state-dir", dir, "--since", "yesterday"}, 2},
		{"prune without --before", []string{"prune", "--state-dir", dir}, 2},
		{"negative count", []string{"tail", "--state-dir", dir, "-n", "-1"}, 2},
		{"filter flag on verify", []string{"verify", "--state-dir", dir, "--tool", "x"}, 2},
		{"missing ledger", []string{"verify", "--state-dir", filepath.Join(dir, "nope")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, stderr := runAuditT(t, tt.args...); code != tt.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.want, stderr)
			}
		})
	}
	// A missing ledger is not created by a read command.
	if _, err := os.Stat(filepath.Join(dir, "nope")); err == nil {
		t.Error("verify created a state directory")
	}
}

func TestAuditVerify(t *testing.T) {
	dir := auditFixture(t)
	code, out, stderr := runAuditT(t, "verify", "--state-dir", dir)
	if code != 0 || !strings.HasPrefix(out, "ok: the chain is intact") || !strings.Contains(out, "rows:      7 (seq 1-7)") ||
		!strings.Contains(out, "rows from seq 1 chained under it") || !strings.Contains(out, "(keyed)") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, stderr)
	}
	// Without the key (a user who cannot read it), the keyed chain cannot
	// be checked, and verify says so.
	key := filepath.Join(dir, "audit.db.key")
	if err := os.Rename(key, key+".away"); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runAuditT(t, "verify", "--state-dir", dir)
	if code != 1 || !strings.HasPrefix(out, "FAILED at seq 1: key-unknown:") || !strings.Contains(out, "key:       not available") {
		t.Fatalf("verify without the key: exit %d\n%s", code, out)
	}
	if err := os.Rename(key+".away", key); err != nil {
		t.Fatal(err)
	}
	// RIGOUT_STATE_DIR and --audit-db find it too.
	t.Setenv("RIGOUT_STATE_DIR", dir)
	if code, _, stderr := runAuditT(t, "verify"); code != 0 {
		t.Fatalf("verify via RIGOUT_STATE_DIR: exit %d %s", code, stderr)
	}
	if code, _, stderr := runAuditT(t, "verify", "--audit-db", filepath.Join(dir, "audit.db"), "--state-dir", "/nonexistent"); code != 0 {
		t.Fatalf("verify via --audit-db: exit %d %s", code, stderr)
	}

	db, err := sql.Open("sqlite3", filepath.Join(dir, "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE events SET status = 'ok' WHERE seq = 6`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, _ = runAuditT(t, "verify", "--state-dir", dir)
	if code != 1 || !strings.HasPrefix(out, "FAILED at seq 6: edited:") {
		t.Fatalf("verify of an edited ledger: exit %d\n%s", code, out)
	}
	code, out, _ = runAuditT(t, "verify", "--state-dir", dir, "--json")
	var rep struct {
		OK      bool `json:"ok"`
		Rows    int  `json:"rows"`
		Problem struct {
			Seq  int64  `json:"seq"`
			Kind string `json:"kind"`
		} `json:"problem"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.OK || rep.Problem.Seq != 6 || rep.Problem.Kind != "edited" {
		t.Fatalf("verify --json: exit %d, %v\n%s", code, err, out)
	}
}

func TestAuditTailAndQuery(t *testing.T) {
	dir := auditFixture(t)
	code, out, _ := runAuditT(t, "tail", "--state-dir", dir, "-n", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "SEQ") || !strings.HasPrefix(lines[1], "6 ") || !strings.HasPrefix(lines[2], "7 ") {
		t.Fatalf("tail -n 2: exit %d\n%s", code, out)
	}
	if !strings.Contains(lines[1], "deny no-rm-rf rm -rf / is refused") {
		t.Errorf("denied row lacks its rule: %q", lines[1])
	}

	code, out, _ = runAuditT(t, "query", "--state-dir", dir, "--principal", "bob", "--json")
	var seqs []int64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e audit.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("query --json line %q: %v", line, err)
		}
		seqs = append(seqs, e.Seq)
	}
	if code != 0 || len(seqs) != 3 || seqs[0] != 4 || seqs[2] != 6 {
		t.Fatalf("query --principal bob: exit %d, seqs %v", code, seqs)
	}
	tests := []struct {
		args []string
		rows int
	}{
		{[]string{"--tool", "search_files"}, 1},
		{[]string{"--status", "error"}, 1},
		{[]string{"--host", "web1", "--type", "tool.*"}, 3},
		{[]string{"--since", "2026-05-01T10:05:00Z"}, 3},
		{[]string{"--until", "2026-05-01T10:03:00Z"}, 2},
		{[]string{"--since", "2026-05-01"}, 7},
		{[]string{"--limit", "2"}, 2},
		{[]string{"--call-id", "c2"}, 2},
		{[]string{"--tool", "nothing"}, 0},
	}
	for _, tt := range tests {
		code, out, stderr := runAuditT(t, append([]string{"query", "--state-dir", dir}, tt.args...)...)
		rows := len(strings.Split(strings.TrimSpace(out), "\n")) - 1 // minus the header
		if tt.rows == 0 && strings.TrimSpace(out) == "no events" {
			rows = 0
		}
		if code != 0 || rows != tt.rows {
			t.Errorf("query %v: exit %d, %d rows, want %d\n%s%s", tt.args, code, rows, tt.rows, out, stderr)
		}
	}
}

func TestAuditTailFollow(t *testing.T) {
	dir := auditFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	var errb bytes.Buffer
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	code := -1
	wg.Go(func() {
		code = runAudit(ctx, []string{"tail", "--state-dir", dir, "-n", "1", "--follow", "--interval", "20ms", "--json"}, &out, &errb)
	})
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The new row must come after tail's first read, or it is that read's
	// last row and the follow has nothing to show.
	for start := time.Now(); !strings.Contains(out.String(), `"seq":7`) && time.Since(start) < 10*time.Second; {
		time.Sleep(5 * time.Millisecond)
	}
	if err := l.Record(context.Background(), audit.Event{Type: audit.TypeSessionOpen, Session: "followed"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), `"session":"followed"`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[0], `"seq":7`) || !strings.Contains(lines[1], `"seq":8`) {
		t.Fatalf("tail --follow: exit %d\n%s%s", code, out.String(), errb.String())
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestAuditStats(t *testing.T) {
	dir := auditFixture(t)
	code, out, _ := runAuditT(t, "stats", "--state-dir", dir)
	want := []string{
		"TOOL             CALLS  DENIED  ERRORS  UNFINISHED  P50   P95",
		"execute_command  3      1       1       0           20ms  40ms",
		"search_files     1      0       0       0           5ms   5ms",
	}
	if code != 0 || strings.TrimSpace(out) != strings.Join(want, "\n") {
		t.Fatalf("stats: exit %d\n%s", code, out)
	}
	code, out, _ = runAuditT(t, "stats", "--state-dir", dir, "--json", "--principal", "alice")
	var st []audit.ToolStats
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || len(st) != 2 || st[0].Calls != 1 {
		t.Fatalf("stats --json: exit %d %v\n%s", code, err, out)
	}
}

func TestAuditExportAndPrune(t *testing.T) {
	dir := auditFixture(t)
	file := filepath.Join(t.TempDir(), "export.jsonl")
	code, _, stderr := runAuditT(t, "export", "--state-dir", dir, "--out", file, "--tool", "execute_command")
	if code != 0 || !strings.Contains(stderr, "exported 5 events (seq 2-6)") || !strings.Contains(stderr, "recorded as seq 8") {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil || strings.Count(string(data), "\n") != 5 {
		t.Fatalf("export file: %v\n%s", err, data)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode %04o", fi.Mode().Perm())
	}
	// The export never overwrites.
	if code, _, _ := runAuditT(t, "export", "--state-dir", dir, "--out", file); code != 1 {
		t.Errorf("export over an existing file: exit %d", code)
	}

	code, out, stderr := runAuditT(t, "prune", "--state-dir", dir, "--before", "2026-05-01T10:04:00Z")
	if code != 0 || !strings.HasPrefix(out, "pruned 3 events (seq 1-3)") {
		t.Fatalf("prune: exit %d\n%s%s", code, out, stderr)
	}
	// Both retention actions are in the ledger, and the chain still verifies.
	code, out, _ = runAuditT(t, "query", "--state-dir", dir, "--type", "audit.*", "--json")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, `"type":"audit.export"`) ||
		!strings.Contains(out, `"type":"audit.prune"`) || !strings.Contains(out, `"transport":"cli"`) {
		t.Fatalf("recorded retention actions: exit %d\n%s", code, out)
	}
	code, out, _ = runAuditT(t, "verify", "--state-dir", dir)
	if code != 0 || !strings.Contains(out, "pruned:    seq 1-3") {
		t.Fatalf("verify after prune: exit %d\n%s", code, out)
	}
}

func TestParseAuditTime(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	tests := map[string]time.Time{
		"":                     {},
		"2026-05-01T10:04:00Z": time.Date(2026, 5, 1, 10, 4, 0, 0, time.UTC),
		"2026-05-01":           time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
		"90m":                  now.Add(-90 * time.Minute),
		"30d":                  now.Add(-30 * 24 * time.Hour),
	}
	for in, want := range tests {
		got, err := parseAuditTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseAuditTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "-5m", "3x"} {
		if _, err := parseAuditTime(bad, now); err == nil {
			t.Errorf("parseAuditTime(%q) succeeded", bad)
		}
	}
}

// With audit.key_env in the configuration, rigout audit verify checks the
// chain with that key (the gateway's), and without the configuration it
// cannot: the key derived from the key file is another.
func TestAuditVerifyChainKeyFromConfig(t *testing.T) {
	dir := t.TempDir()
	key := strings.Repeat("7c", 32)
	t.Setenv("RIGOUT_TEST_AUDIT_KEY", key)
	raw, _ := hex.DecodeString(key)
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db"), ChainKey: raw})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(context.Background(), audit.Event{Type: audit.TypeServerStart, Status: audit.StatusOK}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	cfg := filepath.Join(dir, "rigout.json")
	if err := os.WriteFile(cfg, []byte(`{"audit": {"key_env": "RIGOUT_TEST_AUDIT_KEY"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runAuditT(t, "verify", "--state-dir", dir, "--config", cfg); code != 0 || !strings.Contains(out, "rows from seq 1 chained under it") {
		t.Fatalf("verify with key_env: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runAuditT(t, "verify", "--state-dir", dir); code != 1 || !strings.Contains(out, "key-unknown") {
		t.Fatalf("verify without the configured key: exit %d\n%s", code, out)
	}
}
