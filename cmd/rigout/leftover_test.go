package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/internal/proctest"
)

// TestLeftoversOfAKilledGatewayAreEnded: the real binary, without
// per-principal views (whose processes the kernel would end with the
// gateway), runs a command that starts `sleep <unique>` twice, once in a
// session of its own (setsid), and is killed with SIGKILL while the call
// runs. Both sleeps outlive it. The next start on the same state directory
// reconciles the call as aborted, ends both sleeps, found by the call's
// cgroup or by its RIGOUT_CALL_ID marker, and says so on the aborted row.
//
// Run as root, the gateway tracks calls with cgroups where cgroup v2 is
// writable; run as a uid of its own (setpriv), it cannot create cgroups and
// tracks by marker. What runs is sleep: harmless if the guarantee
// regresses, and the test ends whatever it left.
func TestLeftoversOfAKilledGatewayAreEnded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway four times")
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to run the gateway as an unprivileged uid too")
	}
	setpriv, err := osexec.LookPath("setpriv")
	if err != nil {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatal("setpriv (util-linux) is required here")
		}
		t.Skip("SKIP: setpriv (util-linux) is not installed")
	}
	for _, c := range []struct {
		name string
		uid  int // 0: root
	}{
		{"root", 0},
		{"unprivileged-uid-marker", freeUID(t)},
	} {
		t.Run(c.name, func(t *testing.T) {
			testLeftoversEnded(t, setpriv, c.uid)
		})
	}
}

// leftoverRE finds the PIDs an aborted row says were ended.
var leftoverRE = regexp.MustCompile(`"left_over":"ended \d+ process\(es\) the call left running \(PIDs \[([0-9 ]+)\]`)

func testLeftoversEnded(t *testing.T, setpriv string, uid int) {
	// The binary and state directory must be reachable by the uid.
	dir, err := os.MkdirTemp("", "rigout-leftover-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(rigoutBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rigout")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(state, uid, uid); err != nil {
		t.Fatal(err)
	}
	const token = "leftover-test-token-0123456789abcdef"
	sleepArg := fmt.Sprintf("%d.%06d", 3000+rand.IntN(600), rand.IntN(1e6))
	t.Cleanup(func() {
		for _, pid := range proctest.WithArg(sleepArg) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // a sleep this test started
		}
	})

	start := func() (*osexec.Cmd, string, func() string) {
		argv := []string{bin}
		if uid != 0 {
			id := strconv.Itoa(uid)
			argv = []string{setpriv, "--reuid=" + id, "--regid=" + id, "--clear-groups", "--", bin}
		}
		argv = append(argv, "serve", "--addr", "127.0.0.1:0", "--no-ssh", "--unsafe-no-views")
		cmd := osexec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "RIGOUT_STATE_DIR=" + state,
			"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_WORK_AREAS=" + os.TempDir()}
		cmd.Dir = dir
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		})
		var mu sync.Mutex
		var logged strings.Builder
		urls := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			sent := false
			for sc.Scan() {
				mu.Lock()
				logged.WriteString(sc.Text() + "\n")
				mu.Unlock()
				if m := listenRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
					urls <- m[1]
					sent = true
				}
			}
			if !sent {
				close(urls)
			}
		}()
		log := func() string { mu.Lock(); defer mu.Unlock(); return logged.String() }
		select {
		case url, ok := <-urls:
			if !ok {
				t.Fatalf("rigout serve exited before listening:\n%s", log())
			}
			return cmd, url, log
		case <-time.After(20 * time.Second):
			t.Fatalf("rigout serve did not start listening:\n%s", log())
		}
		return nil, "", nil
	}

	gw, url, _ := start()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := dialHTTP(ctx, url, token, mcp.LATEST_PROTOCOL_VERSION)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"command": "setsid sleep " + sleepArg + " & sleep " + sleepArg}
	errc := make(chan string, 1)
	go func() {
		res, err := c.CallTool(ctx, req)
		switch {
		case err != nil:
			errc <- err.Error()
		case res.IsError:
			errc <- fmt.Sprint(res.Content)
		default:
			errc <- "the call returned"
		}
	}()
	deadline := time.Now().Add(15 * time.Second)
	for len(proctest.WithArg(sleepArg)) < 2 {
		select {
		case e := <-errc:
			t.Fatalf("the call ended before both sleeps ran: %s", e)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sleeps never started: %v", proctest.WithArg(sleepArg))
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed := gw.Process.Pid
	if err := gw.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = gw.Wait()
	cancel()
	time.Sleep(100 * time.Millisecond)
	left := proctest.WithArg(sleepArg)
	if len(left) != 2 {
		t.Fatalf("after SIGKILL of the gateway, %d sleep(s) of the call run (%v); want both, or this test proves nothing", len(left), left)
	}

	gw2, _, log2 := start() // listening: the reconciliation is done
	deadline = time.Now().Add(5 * time.Second)
	for len(proctest.WithArg(sleepArg)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if still := proctest.WithArg(sleepArg); len(still) > 0 {
		t.Fatalf("the next start left the dead gateway's sleeps running: %v\n%s", still, log2())
	}
	if !strings.Contains(log2(), "ended the processes it left running") {
		t.Errorf("the next start does not say it ended them:\n%s", log2())
	}
	_ = gw2.Process.Signal(syscall.SIGTERM)
	_ = gw2.Wait()

	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(state, "audit.db"), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	evs, err := l.Query(context.Background(), audit.Filter{Tool: "execute_command"})
	if err != nil {
		t.Fatal(err)
	}
	var aborted *audit.Event
	for i, e := range evs {
		if e.Phase == audit.PhaseDone && e.Status == audit.StatusAborted {
			aborted = &evs[i]
		}
	}
	if aborted == nil {
		t.Fatalf("no aborted row for the interrupted call: %+v", evs)
	}
	if !strings.Contains(aborted.Error, fmt.Sprintf("(PID %d)", killed)) {
		t.Errorf("the aborted row does not name the killed gateway %d: %s", killed, aborted.Error)
	}
	// The shell that started the sleeps is ended with them: at least
	// the two sleeps, each named.
	m := leftoverRE.FindStringSubmatch(aborted.Detail)
	if m == nil {
		t.Fatalf("the aborted row's detail does not say what was ended: %s", aborted.Detail)
	}
	ended := strings.Fields(m[1])
	for _, pid := range left {
		if !slices.Contains(ended, strconv.Itoa(pid)) {
			t.Errorf("the aborted row does not name sleep PID %d among those it ended: %s", pid, aborted.Detail)
		}
	}
	t.Logf("aborted row detail: %s", aborted.Detail)
}
