package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// TestCrashLosesNoAcknowledgedCall serves audited calls from the real
// binary while clients count every acknowledged result, kills the gateway
// with SIGKILL at a random moment, and checks after every round that each
// acknowledged call has its done row in the ledger, that SQLite's integrity
// check passes and that the hash chain verifies. The kill comes after a
// random number of acknowledged calls (and a jitter of a few milliseconds,
// so it can land mid-call), never after a fixed time: a busy machine slows
// the round, not the verdict. Bounded: five rounds of at most 30 calls.
func TestCrashLosesNoAcknowledgedCall(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	stateDir := t.TempDir()
	cfg := filepath.Join(stateDir, "rigout.json")
	if err := os.WriteFile(cfg, []byte(`{"audit": {"store_args": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "crash-test-token-0123456789abcdef"
	env := []string{"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_STATE_DIR=" + stateDir}
	rounds := 5
	acked := map[string]bool{}
	for round := 0; round < rounds; round++ {
		cmd, url, _ := startServeEnv(t, env, "--config", cfg, "--no-ssh")
		var mu sync.Mutex
		target, roundAcked, reached := 1+rand.IntN(30), 0, make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Go(func() {
				c, err := dialHTTP(ctx, url, token, mcp.LATEST_PROTOCOL_VERSION)
				if err != nil {
					return
				}
				defer c.Close()
				for i := 0; ctx.Err() == nil; i++ {
					marker := fmt.Sprintf("m-%d-%d-%d", round, w, i)
					var req mcp.CallToolRequest
					req.Params.Name = "execute_command"
					req.Params.Arguments = map[string]any{"argv": []string{"echo", marker}}
					res, err := c.CallTool(ctx, req)
					if err != nil || res.IsError {
						return // the gateway died mid-call: not acknowledged
					}
					mu.Lock()
					acked[marker] = true
					if roundAcked++; roundAcked == target {
						close(reached)
					}
					mu.Unlock()
				}
			})
		}
		select {
		case <-reached:
		case <-time.After(2 * time.Minute):
			t.Fatalf("round %d: %d calls were not acknowledged within 2 minutes", round, target)
		}
		time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond) // where the kill lands, not what comes first
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cancel()
		wg.Wait()

		l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(stateDir, "audit.db"), ReadOnly: true})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		rep, err := l.Verify(context.Background())
		if err != nil || !rep.OK() {
			t.Fatalf("round %d: verify: %+v %v", round, rep, err)
		}
		rows, err := l.Query(context.Background(), audit.Filter{Tool: "execute_command", Phase: audit.PhaseDone})
		l.Close()
		if err != nil {
			t.Fatal(err)
		}
		done := map[string]bool{}
		for _, e := range rows {
			if i := strings.Index(e.Args, "m-"); i >= 0 {
				done[strings.Trim(strings.Fields(e.Args[i:])[0], `"],}`)] = true
			}
		}
		lost := 0
		for m := range acked {
			if !done[m] {
				lost++
			}
		}
		if lost > 0 {
			t.Fatalf("round %d: %d of %d acknowledged calls have no done row", round, lost, len(acked))
		}
		t.Logf("round %d: %d acknowledged so far, all in the ledger; %d done rows", round, len(acked), len(rows))
	}
}
