package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

const (
	crashEnvDB    = "RIGOUT_AUDIT_CRASH_DB"
	crashEnvRound = "RIGOUT_AUDIT_CRASH_ROUND"
)

// TestCrashChild is the child process of TestCrashKill. It records calls
// from 8 goroutines, each an intent row then a done row, and prints one line
// per acknowledged row, until it is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnvDB)
	if path == "" {
		t.Skip("helper process for TestCrashKill")
	}
	round := os.Getenv(crashEnvRound)
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("r%s-g%d-%d", round, g, i)
				intent, done := call(i)
				intent.CallID, done.CallID = id, id
				for _, e := range []audit.Event{intent, done} {
					if err := l.Record(context.Background(), e); err != nil {
						fmt.Fprintln(os.Stderr, "record:", err)
						os.Exit(4)
					}
					// One write per line: a pipe write under PIPE_BUF
					// is atomic, so lines from goroutines never mix.
					os.Stdout.WriteString(id + " " + string(e.Phase) + "\n")
				}
			}
		})
	}
	wg.Wait()
}

// TestCrashKill runs the child, SIGKILLs it at a random moment, reopens the
// ledger and checks that every acknowledged row is there, SQLite's integrity
// check passes and the chain verifies. Acknowledged ⊆ persisted, not
// equality: rows committed just before the kill may lack their ack line.
func TestCrashKill(t *testing.T) {
	if os.Getenv(crashEnvDB) != "" {
		t.Skip("in the child")
	}
	rounds := 20
	if testing.Short() {
		rounds = 4
	}
	path := filepath.Join(t.TempDir(), "audit.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var totalAcked, totalRows, lastSeq int64
	for round := range rounds {
		acked := runAndKill(t, path, round, time.Duration(100+rng.IntN(600))*time.Millisecond)
		totalAcked += int64(len(acked))

		l, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		evs, err := l.Query(context.Background(), audit.Filter{AfterSeq: lastSeq})
		if err != nil {
			t.Fatal(err)
		}
		present := make(map[string]bool, len(evs))
		for _, e := range evs {
			present[e.CallID+" "+string(e.Phase)] = true
			lastSeq = e.Seq
		}
		totalRows += int64(len(evs))
		lost := 0
		for _, a := range acked {
			if !present[a] {
				lost++
				if lost < 5 {
					t.Errorf("round %d: acknowledged row %q is not in the ledger", round, a)
				}
			}
		}
		if lost > 0 {
			t.Fatalf("round %d: %d of %d acknowledged rows lost", round, lost, len(acked))
		}
		if mm, _ := l.Query(context.Background(), audit.Filter{Type: audit.TypeHeadMismatch}); len(mm) != 0 {
			t.Fatalf("round %d: reopen recorded a head mismatch: %s", round, mm[0].Error)
		}
		if _, err := l.Verify(context.Background()); err != nil {
			t.Fatalf("round %d: Verify: %v", round, err)
		}
		var ic string
		if err := rawDB(t, path).QueryRow(`PRAGMA integrity_check`).Scan(&ic); err != nil || ic != "ok" {
			t.Fatalf("round %d: integrity_check = %q, %v", round, ic, err)
		}
		l.Close()
	}
	t.Logf("%d rounds: %d rows acknowledged, %d rows persisted, 0 lost", rounds, totalAcked, totalRows)
}

// runAndKill starts the child, lets it run for d, kills it with SIGKILL and
// returns the rows it acknowledged.
func runAndKill(t *testing.T, path string, round int, d time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnvDB+"="+path, fmt.Sprintf("%s=%d", crashEnvRound, round))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "r") && strings.Count(line, " ") == 1 {
				acked = append(acked, line)
			}
		}
	}()
	time.Sleep(d)
	if err := cmd.Process.Kill(); err != nil { // SIGKILL, to this PID only
		t.Fatal(err)
	}
	<-readDone
	cmd.Wait()
	if strings.Contains(stderr.String(), "record:") || strings.Contains(stderr.String(), "open:") {
		t.Fatalf("round %d: child failed: %s", round, stderr.String())
	}
	return acked
}
