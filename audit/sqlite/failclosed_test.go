//go:build linux

package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

const fullEnvDB = "RIGOUT_AUDIT_FULL_DB"

// TestDiskFullChild is the child process of TestFailClosedDiskFull. It
// lowers RLIMIT_FSIZE, which root obeys too, so writes past the limit fail
// with EFBIG as on a full disk. It runs calls the way the gateway does: the
// command (creating a sentinel file) runs only after its intent row is
// committed.
func TestDiskFullChild(t *testing.T) {
	path := os.Getenv(fullEnvDB)
	if path == "" {
		t.Skip("helper process for TestFailClosedDiskFull")
	}
	say := func(format string, args ...any) { fmt.Fprintf(os.Stdout, format+"\n", args...) }
	ctx := context.Background()
	l, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		say("open-error %v", err)
		return
	}
	defer l.Close()
	var size int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			size = fi.Size()
		}
	}
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(size + 256<<10), Max: old.Max}); err != nil {
		say("setrlimit-error %v", err)
		return
	}
	sentinels := filepath.Join(filepath.Dir(path), "ran")
	os.Mkdir(sentinels, 0o700)
	failed := false
	for i := range 10000 {
		intent, done := call(i)
		intent.Args = strings.Repeat("x", 2000) // dropped: StoreArgs is off
		intent.Error = strings.Repeat("e", 2000)
		if err := l.Record(ctx, intent); err != nil {
			var we *sqlite.WriteError
			say("intent-failed %d %t %v", i, errors.As(err, &we), err)
			say("healthy %v", l.Healthy())
			failed = true
			break
		}
		// The "command": it runs only because its intent is on disk.
		os.WriteFile(filepath.Join(sentinels, intent.CallID), nil, 0o600)
		if err := l.Record(ctx, done); err != nil {
			// The command ran; its outcome could not be recorded. The
			// next intent meets the same full disk.
			say("done-failed %d %v", i, err)
			continue
		}
		say("ack %s", intent.CallID)
	}
	if !failed {
		say("never-failed")
		return
	}
	// Space comes back: the ledger recovers without a restart.
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	if err := l.Record(ctx, audit.Event{Type: audit.TypeServerStop}); err != nil {
		say("still-failing %v", err)
		return
	}
	say("recovered %v", l.Healthy())
}

func TestFailClosedDiskFull(t *testing.T) {
	if os.Getenv(fullEnvDB) != "" {
		t.Skip("in the child")
	}
	path := filepath.Join(t.TempDir(), "audit.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fullEnvDB+"="+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var acked []string
	var failLine, healthLine, recovered string
	for _, line := range lines {
		switch f := strings.Fields(line); {
		case len(f) == 0:
		case f[0] == "ack":
			acked = append(acked, f[1])
		case f[0] == "intent-failed":
			failLine = line
		case f[0] == "healthy":
			healthLine = line
		case f[0] == "recovered":
			recovered = line
		}
	}
	if failLine == "" {
		t.Fatalf("Record never failed under RLIMIT_FSIZE:\n%s", out)
	}
	t.Logf("%d calls acknowledged, then: %s", len(acked), failLine)
	if !strings.Contains(failLine, " true ") {
		t.Errorf("want the intent to fail with a *WriteError, got %q", failLine)
	}
	if healthLine == "" || strings.HasSuffix(healthLine, "<nil>") {
		t.Errorf("Healthy after a failed write: %q", healthLine)
	}
	if recovered != "recovered <nil>" {
		t.Errorf("after space returned: %q\n%s", recovered, out)
	}
	// The call whose intent failed never ran.
	failedID := "call-" + strings.Fields(failLine)[1]
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "ran", failedID)); err == nil {
		t.Errorf("the command of %s ran although its intent was not recorded", failedID)
	}
	// Everything acknowledged is on disk and the chain is intact.
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	evs, err := l.Query(context.Background(), audit.Filter{Phase: audit.PhaseDone})
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, e := range evs {
		present[e.CallID] = true
	}
	for _, id := range acked {
		if !present[id] {
			t.Errorf("acknowledged call %s lost", id)
		}
	}
	if _, err := l.Verify(context.Background()); err != nil {
		t.Errorf("Verify after the disk filled: %v", err)
	}
	var ic string
	if err := rawDB(t, path).QueryRow(`PRAGMA integrity_check`).Scan(&ic); err != nil || ic != "ok" {
		t.Errorf("integrity_check = %q, %v", ic, err)
	}
}
