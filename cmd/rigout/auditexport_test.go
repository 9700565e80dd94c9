package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// exporter is a running `rigout audit export --follow`.
type exporter struct {
	cmd *osexec.Cmd
	out *syncBuffer
}

func startExporter(t *testing.T, stateDir, cursor string, extra ...string) *exporter {
	t.Helper()
	args := append([]string{"audit", "export", "--follow", "--format", "jsonl", "--interval", "20ms",
		"--state-dir", stateDir, "--cursor-file", cursor}, extra...)
	cmd := osexec.Command(rigoutBinary(t), args...)
	e := &exporter{cmd: cmd, out: &syncBuffer{}}
	cmd.Stdout = e.out
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if errb.String() != "" {
			t.Logf("export stderr: %s", errb.String())
		}
	})
	return e
}

// waitFor waits until the export has written the event with seq.
func (e *exporter) waitFor(t *testing.T, seq int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		seqs, _ := eventSeqs(strings.NewReader(e.out.String()))
		if slices.Contains(seqs, seq) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("export never wrote seq %d; it wrote:\n%s", seq, e.out.String())
}

// stop ends the export with SIGTERM, as a service manager does, and
// returns the seqs it wrote.
func (e *exporter) stop(t *testing.T) []int64 {
	t.Helper()
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	if err := e.cmd.Wait(); err != nil {
		t.Fatalf("export exited: %v", err)
	}
	seqs, err := eventSeqs(strings.NewReader(e.out.String()))
	if err != nil {
		t.Fatalf("export output is not JSON lines of events: %v\n%s", err, e.out.String())
	}
	return seqs
}

// lastSeq reads the ledger's newest seq, read-only.
func lastSeq(t *testing.T, stateDir string) int64 {
	t.Helper()
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(stateDir, "audit.db"), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	evs, err := l.Query(context.Background(), audit.Filter{Limit: 1, Newest: true})
	if err != nil || len(evs) != 1 {
		t.Fatalf("newest event: %v %v", evs, err)
	}
	return evs[0].Seq
}

// TestE2EAuditExportFollowResumes: an export followed across a gateway
// restart, stopped and resumed from its cursor file, and resumed again
// after the gateway stopped, writes every event of the ledger exactly
// once, in order.
func TestE2EAuditExportFollowResumes(t *testing.T) {
	stateDir := t.TempDir()
	cursor := filepath.Join(t.TempDir(), "export.cursor")
	env := []string{"RIGOUT_STATE_DIR=" + stateDir, "RIGOUT_AUTH_TOKEN=" + fullToken}

	gw1, url, _ := startServeEnv(t, env)
	c := httpClient(t, url, fullToken, mcp.LATEST_PROTOCOL_VERSION)
	call(t, c, "execute_command", map[string]any{"command": "echo one"})
	exp := startExporter(t, stateDir, cursor)
	exp.waitFor(t, lastSeq(t, stateDir))

	// The gateway restarts while the export follows.
	c.Close()
	stopGateway(t, gw1)
	gw2, url, _ := startServeEnv(t, env)
	c = httpClient(t, url, fullToken, mcp.LATEST_PROTOCOL_VERSION)
	call(t, c, "execute_command", map[string]any{"command": "echo two"})
	exp.waitFor(t, lastSeq(t, stateDir))
	first := exp.stop(t)
	firstText := exp.out.String()

	// The export restarts from its cursor while the gateway keeps writing.
	call(t, c, "execute_command", map[string]any{"command": "echo three"})
	b, err := os.ReadFile(cursor)
	if err != nil || strings.TrimSpace(string(b)) != jsonInt(first[len(first)-1]) {
		t.Fatalf("cursor file %q (%v), want the last seq written, %d", b, err, first[len(first)-1])
	}
	exp = startExporter(t, stateDir, cursor)
	call(t, c, "execute_command", map[string]any{"command": "echo four"})
	exp.waitFor(t, lastSeq(t, stateDir))
	second := exp.stop(t)
	secondText := exp.out.String()

	// Once more after the gateway stopped (its stop row), into a file.
	c.Close()
	stopGateway(t, gw2)
	out := filepath.Join(t.TempDir(), "audit.jsonl")
	tip := lastSeq(t, stateDir)
	if tip <= second[len(second)-1] {
		t.Fatalf("the gateway's stop wrote no row after seq %d", tip)
	}
	exp = startExporter(t, stateDir, cursor, "--out", out)
	var third []int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(out) // created by the export once it starts
		third, _ = eventSeqs(bytes.NewReader(b))
		if len(third) > 0 && third[len(third)-1] == tip {
			break
		}
	}
	if rest := exp.stop(t); len(rest) != 0 {
		t.Errorf("with --out, the export wrote to stdout: %v", rest)
	}

	all := append(append(slices.Clone(first), second...), third...)
	if len(first) == 0 || len(second) == 0 {
		t.Fatalf("a run exported nothing: %v | %v | %v", first, second, third)
	}
	tip = lastSeq(t, stateDir)
	for i, s := range all {
		if s != int64(i+1) {
			t.Fatalf("exported seqs are not 1..%d each once: %v | %v | %v", tip, first, second, third)
		}
	}
	if int64(len(all)) != tip {
		t.Fatalf("exported %d events, the ledger has %d: %v | %v | %v", len(all), tip, first, second, third)
	}
	// Both gateway runs are in it: two server.start rows, one server.stop.
	text := firstText + secondText + readAll(t, out)
	if n := strings.Count(text, `"type":"server.start"`); n != 2 {
		t.Errorf("%d server.start rows exported, want 2", n)
	}
	if n := strings.Count(text, `"type":"server.stop"`); n != 2 {
		t.Errorf("%d server.stop rows exported, want 2", n)
	}
}

// stopGateway ends a `rigout serve` with SIGTERM and waits for it.
func stopGateway(t *testing.T, cmd *osexec.Cmd) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("rigout serve exited: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("rigout serve did not stop on SIGTERM")
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func readAll(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuditExportFlags: bad formats, a cursor without --follow and a
// corrupt cursor file are refused with what to do.
func TestAuditExportFlags(t *testing.T) {
	dir := auditFixture(t)
	bad := filepath.Join(t.TempDir(), "cursor")
	if err := os.WriteFile(bad, []byte("seven\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"export", "--state-dir", dir, "--format", "csv"}, 2, "the export format is jsonl"},
		{[]string{"export", "--state-dir", dir, "--cursor-file", bad}, 2, "--cursor-file needs --follow"},
		{[]string{"export", "--state-dir", dir, "--follow", "--cursor-file", bad}, 1, "delete it to export from the start"},
	} {
		code, out, errs := runAuditT(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q (stdout %q); want %d and %q", tt.args, code, errs, out, tt.code, tt.want)
		}
	}
}

// TestAuditExportFollowCursor: in process, a follow from a cursor writes
// only the later events and leaves the cursor at the last one.
func TestAuditExportFollowCursor(t *testing.T) {
	dir := auditFixture(t)
	cursor := filepath.Join(t.TempDir(), "cursor")
	if err := os.WriteFile(cursor, []byte("4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	var errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- runAudit(ctx, []string{"export", "--state-dir", dir, "--follow", "--interval", "10ms", "--cursor-file", cursor}, &out, &errb)
	}()
	want := lastSeq(t, dir)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(cursor); strings.TrimSpace(string(b)) == jsonInt(want) {
			break
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	seqs, err := eventSeqs(strings.NewReader(out.String()))
	if err != nil || len(seqs) == 0 || seqs[0] != 5 || seqs[len(seqs)-1] != want || int64(len(seqs)) != want-4 {
		t.Fatalf("seqs %v (%v), want 5..%d", seqs, err, want)
	}
}
