package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/internal/proctest"
)

// TestKilledMidCallIsReconciled: the real binary runs a read-only command
// (tail -f, which the policy classifies read-only, as the done row of a cat
// of the same file shows) and is killed with SIGKILL while it runs. The call's intent row is in the
// ledger, naming the killed process; the next start records the call's
// done row as aborted (interrupted), and a call that finished normally is
// left alone.
func TestKilledMidCallIsReconciled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway twice")
	}
	stateDir := t.TempDir()
	const token = "interrupt-test-token-0123456789abcdef"
	env := []string{"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_STATE_DIR=" + stateDir}
	// The followed file's path finds the command's process.
	marker := filepath.Join(t.TempDir(), fmt.Sprintf("followed-%09d", rand.IntN(1e9)))
	if err := os.WriteFile(marker, []byte("a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range proctest.WithArg(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // a tail this test started
		}
	})

	gw, url, _ := startServeEnv(t, env, "--no-ssh")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := dialHTTP(ctx, url, token, mcp.LATEST_PROTOCOL_VERSION)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(ctx context.Context, argv ...string) (*mcp.CallToolResult, error) {
		var req mcp.CallToolRequest
		req.Params.Name = "execute_command"
		req.Params.Arguments = map[string]any{"argv": argv}
		return c.CallTool(ctx, req)
	}
	if res, err := call(ctx, "cat", marker); err != nil || res.IsError {
		t.Fatalf("cat: %v %+v", err, res)
	}
	go call(ctx, "tail", "-f", marker) // dies with the gateway
	deadline := time.Now().Add(10 * time.Second)
	for len(proctest.WithArg(marker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slow command never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed := gw.Process.Pid
	if err := gw.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = gw.Wait()
	cancel()
	t.Logf("after SIGKILL, %d process(es) of the call left running", len(proctest.WithArg(marker)))

	db := filepath.Join(stateDir, "audit.db")
	rows := func() map[string][]audit.Event {
		t.Helper()
		l, err := sqlite.Open(context.Background(), sqlite.Config{Path: db, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		evs, err := l.Query(context.Background(), audit.Filter{Tool: "execute_command"})
		if err != nil {
			t.Fatal(err)
		}
		byCall := map[string][]audit.Event{}
		for _, e := range evs {
			byCall[e.CallID] = append(byCall[e.CallID], e)
		}
		return byCall
	}
	var finished, cut string
	for id, evs := range rows() {
		switch {
		case len(evs) == 2 && strings.Contains(evs[1].Detail, `"class":"read-only"`) && evs[1].Status == audit.StatusOK:
			finished = id
		case len(evs) == 1 && evs[0].Phase == audit.PhaseIntent:
			cut = id
			if !strings.Contains(evs[0].Detail, `"gateway":"`+strconv.Itoa(killed)+"/") {
				t.Errorf("the intent row does not name the gateway (PID %d): %s", killed, evs[0].Detail)
			}
		default:
			t.Errorf("call %s: rows %+v", id, evs)
		}
	}
	if finished == "" || cut == "" {
		t.Fatalf("want a finished read-only call and an intent row alone; finished %q, cut %q", finished, cut)
	}

	startServeEnv(t, env, "--no-ssh") // listening: the reconciliation is done
	after := rows()
	if len(after[finished]) != 2 {
		t.Errorf("the finished call changed: %+v", after[finished])
	}
	evs := after[cut]
	if len(evs) != 2 {
		t.Fatalf("the interrupted call after the restart: %+v", evs)
	}
	done := evs[1]
	if done.Phase != audit.PhaseDone || done.Status != audit.StatusAborted ||
		!strings.Contains(done.Error, fmt.Sprintf("interrupted: the gateway (PID %d)", killed)) || !strings.Contains(done.Detail, `"interrupted"`) {
		t.Fatalf("the interrupted call's done row: %+v", done)
	}
}
