package process_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/proctest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/activity"
	"github.com/rigout/rigout/tools/hosts"
	"github.com/rigout/rigout/tools/process"
	"github.com/rigout/rigout/tools/shell"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(markers.Main(m, 5*time.Second)) }

// newManager returns a Manager closed when the test ends.
func newManager(t *testing.T, rec audit.Recorder) *sessions.Manager {
	t.Helper()
	m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true, Grace: 200 * time.Millisecond}, SpoolDir: t.TempDir(), Audit: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// connect builds a gateway with the shell and process families on m, for
// principal (full scopes unless scopes is given), and connects to it.
func connect(t *testing.T, m *sessions.Manager, principal string, scopes *auth.Scopes, ledger audit.Recorder) *client.Client {
	t.Helper()
	sh, err := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}, Processes: m})
	if err != nil {
		t.Fatal(err)
	}
	pf, err := process.New(process.Config{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	s := auth.FullScopes()
	if scopes != nil {
		s = *scopes
	}
	cfg := rigout.Config{
		Tools:     append(sh.Tools(), pf.Tools()...),
		Principal: &auth.Principal{Name: principal, Scopes: s},
	}
	if ledger != nil {
		cfg.Audit = ledger
	}
	return rigouttest.Connect(t, rigouttest.New(t, cfg))
}

func call(t *testing.T, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, string, map[string]any) {
	t.Helper()
	res := rigouttest.Call(t, c, name, args)
	return res, rigouttest.Text(res), rigouttest.Structured(t, res)
}

// markers marks the processes these tests start; none may outlive them.
var markers = proctest.NewMarkers()

func marker() string { return markers.Next() }

func survivors(arg string) int {
	return len(proctest.WithArg(arg))
}

// nextArgs decodes the "next:" call a result suggests.
// nextArgs returns the arguments of a structuredContent's next call, which
// must be a process call.
func nextArgs(t *testing.T, next any) map[string]any {
	t.Helper()
	n, ok := next.(map[string]any)
	if !ok || n["tool"] != "process" {
		t.Fatalf("next call %v", next)
	}
	args, ok := n["arguments"].(map[string]any)
	if !ok {
		t.Fatalf("next call without arguments: %v", next)
	}
	return args
}

func TestHandOffThenRead(t *testing.T) {
	ledger := rigouttest.OpenLedger(t)
	m := newManager(t, ledger)
	c := connect(t, m, "alice", nil, ledger)
	// The command runs until the test creates its gate file, so it is
	// surely handed off; whether "start" came before the hand-off is the
	// machine's timing, and the next call's offset must say which.
	gate := filepath.Join(t.TempDir(), "gate")
	res, text, sc := call(t, c, "execute_command", map[string]any{"command": "echo start; until [ -e " + gate + " ]; do sleep 0.02; done; echo done", "wait_seconds": 1})
	if res.IsError || sc["running"] != true || !strings.Contains(text, "now background process") {
		t.Fatalf("hand-off: %v %s", res.IsError, text)
	}
	args := nextArgs(t, sc["next"])
	want, offset := "done\n", float64(6)
	if !strings.Contains(text, "start") {
		want, offset = "start\ndone\n", 0
	}
	if args["offset"] != offset || args["id"] != sc["process_id"] {
		t.Fatalf("next call %v after %q", args, text)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for range 10 {
		res, text, sc = call(t, c, "process", args)
		if res.IsError {
			t.Fatal(text)
		}
		out.WriteString(sc["stdout"].(map[string]any)["text"].(string))
		if sc["running"] == false {
			break
		}
		args["offset"] = sc["next_offset"]
		args["stderr_offset"] = sc["next_stderr_offset"]
	}
	if out.String() != want || sc["exit_code"] != float64(0) || !strings.Contains(text, "exit 0") {
		t.Fatalf("read %q: %s", out.String(), text)
	}
	// The ledger has the call (handed off) and the process's own rows.
	evs := rigouttest.Events(t, ledger, audit.Filter{})
	var types []string
	for _, e := range evs {
		if e.Type == audit.TypeProcessExit && (e.ExitCode == nil || *e.ExitCode != 0 || e.StdoutBytes != 11 || e.Principal != "alice") {
			t.Errorf("exit row %+v", e)
		}
		if e.Type == audit.TypeToolCall && e.Phase == audit.PhaseDone && e.Tool == "execute_command" && e.Status != audit.StatusBackground {
			t.Errorf("done row status %q", e.Status)
		}
		types = append(types, string(e.Type))
	}
	for _, want := range []audit.EventType{audit.TypeProcessStart, audit.TypeProcessExit} {
		if !strings.Contains(strings.Join(types, " "), string(want)) {
			t.Errorf("no %s row in %v", want, types)
		}
	}
}

func TestQuickCommandIsNotHandedOff(t *testing.T) {
	m := newManager(t, nil)
	c := connect(t, m, "alice", nil, nil)
	res, text, sc := call(t, c, "execute_command", map[string]any{"command": "echo oops >&2; exit 3"})
	if !res.IsError || sc["exit_code"] != float64(3) || sc["stderr"] != "oops\n" || sc["process_id"] != nil {
		t.Fatalf("result %v: %s", sc, text)
	}
	if got := m.List("alice"); len(got) != 0 {
		t.Fatalf("finished call left %v", got)
	}
}

func TestWaitZeroFastStderr(t *testing.T) {
	m := newManager(t, nil)
	c := connect(t, m, "alice", nil, nil)
	_, text, sc := call(t, c, "execute_command", map[string]any{"command": "echo fast >&2", "wait_seconds": 0})
	id, _ := sc["process_id"].(string)
	if id == "" {
		// It finished before the zero wait was even checked.
		if sc["stderr"] != "fast\n" {
			t.Fatalf("result: %s", text)
		}
		return
	}
	_, text, sc = call(t, c, "process", map[string]any{"action": "read", "id": id, "wait_seconds": 5, "stream": "stderr"})
	for sc["running"] == true {
		_, text, sc = call(t, c, "process", map[string]any{"action": "read", "id": id, "wait_seconds": 5, "stream": "stderr"})
	}
	if sc["stderr"].(map[string]any)["text"] != "fast\n" {
		t.Fatalf("read: %s", text)
	}
}

func TestOtherPrincipalSeesNothing(t *testing.T) {
	m := newManager(t, nil)
	alice := connect(t, m, "alice", nil, nil)
	bob := connect(t, m, "bob", nil, nil)
	mk := marker()
	_, text, sc := call(t, alice, "execute_command", map[string]any{"argv": []string{"sleep", mk}, "wait_seconds": 0})
	id, _ := sc["process_id"].(string)
	if id == "" {
		t.Fatalf("not handed off: %s", text)
	}
	proctest.WaitWithArg(t, mk, 1, 10*time.Second) // running, before bob tries
	_, text, sc = call(t, bob, "process", map[string]any{"action": "list"})
	if len(sc["processes"].([]any)) != 0 {
		t.Fatalf("bob lists: %s", text)
	}
	for _, args := range []map[string]any{
		{"action": "read", "id": id},
		{"action": "write", "id": id, "input": "x"},
		{"action": "signal", "id": id},
		{"action": "signal", "id": id, "signal": "KILL"},
	} {
		res, text, _ := call(t, bob, "process", args)
		if !res.IsError || !strings.Contains(text, "no process "+id) {
			t.Fatalf("bob %v: %s", args["action"], text)
		}
	}
	if survivors(mk) != 1 {
		t.Fatal("bob's calls touched alice's process")
	}
	_, text, sc = call(t, alice, "process", map[string]any{"action": "list"})
	if len(sc["processes"].([]any)) != 1 || !strings.Contains(text, id+" running") {
		t.Fatalf("alice lists: %s", text)
	}
}

func TestWriteCatCtrlD(t *testing.T) {
	m := newManager(t, nil)
	c := connect(t, m, "alice", nil, nil)
	_, text, sc := call(t, c, "execute_command", map[string]any{"argv": []string{"cat"}, "wait_seconds": 0})
	id := sc["process_id"].(string)
	if id == "" {
		t.Fatal(text)
	}
	res, text, _ := call(t, c, "process", map[string]any{"action": "write", "id": id, "input": "hello\x01", "keys": []string{"enter", "ctrl-d"}})
	if res.IsError || !strings.Contains(text, "wrote 6 bytes; sent enter; ctrl-d: closed stdin") {
		t.Fatalf("write: %s", text)
	}
	_, text, sc = call(t, c, "process", map[string]any{"action": "read", "id": id, "stream": "stdout", "wait_seconds": 5})
	for sc["running"] == true {
		_, text, sc = call(t, c, "process", map[string]any{"action": "read", "id": id, "stream": "stdout", "wait_seconds": 5})
	}
	if sc["exit_code"] != float64(0) || !strings.HasPrefix(sc["stdout"].(map[string]any)["text"].(string), "hello") {
		t.Fatalf("read: %s", text)
	}
	// A read-only token may read, not write.
	ro := auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}
	roc := connect(t, m, "alice", &ro, nil)
	if res, text, _ := call(t, roc, "process", map[string]any{"action": "read", "id": id}); res.IsError {
		t.Fatalf("read-only read: %s", text)
	}
	if res, text, _ := call(t, roc, "process", map[string]any{"action": "write", "id": id, "input": "x"}); !res.IsError {
		t.Fatalf("read-only write: %s", text)
	}
}

func TestStopEndsIt(t *testing.T) {
	m := newManager(t, nil)
	c := connect(t, m, "alice", nil, nil)
	mk := marker()
	_, text, sc := call(t, c, "execute_command", map[string]any{"command": "sleep " + mk + " & sleep " + mk, "wait_seconds": 0})
	id, _ := sc["process_id"].(string)
	if id == "" {
		t.Fatal(text)
	}
	deadline := time.Now().Add(5 * time.Second)
	for survivors(mk) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	res, text, sc := call(t, c, "process", map[string]any{"action": "signal", "id": id})
	if res.IsError || sc["running"] != false || !strings.Contains(text, "killed by SIGTERM (stopped)") {
		t.Fatalf("stop: %s", text)
	}
	for survivors(mk) > 0 {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("%d left running", survivors(mk))
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, text, _ = call(t, c, "process", map[string]any{"action": "signal", "id": id, "signal": "INT"})
	if !strings.Contains(text, "already finished") {
		t.Fatalf("second signal: %s", text)
	}
}

func TestCapRefusesClearly(t *testing.T) {
	m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true}, MaxPerPrincipal: 1, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	c := connect(t, m, "alice", nil, nil)
	if _, text, sc := call(t, c, "execute_command", map[string]any{"argv": []string{"sleep", marker()}, "wait_seconds": 0}); sc["process_id"] == nil {
		t.Fatal(text)
	}
	res, text, _ := call(t, c, "execute_command", map[string]any{"argv": []string{"sleep", marker()}, "wait_seconds": 0})
	if !res.IsError || !strings.Contains(text, "alice already runs 1 background processes") {
		t.Fatalf("over the cap: %s", text)
	}
}

// TestToolListStaysSmall: every family on, SSH hosts included, tools/list
// stays within its 10 KiB budget.
func TestToolListStaysSmall(t *testing.T) {
	m := newManager(t, nil)
	ledger := rigouttest.OpenLedger(t)
	r, err := remote.NewRouter(remote.RouterConfig{
		HostKeyPolicy: remote.HostKeyStrict,
		Hosts:         []remote.HostConfig{{Name: "web1", Address: "127.0.0.1", Port: 2222, Labels: []string{"web"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	sh, err := shell.New(shell.Config{Processes: m, Hosts: r})
	if err != nil {
		t.Fatal(err)
	}
	pf, _ := process.New(process.Config{Manager: m})
	hf, _ := hosts.New(hosts.Config{Router: r})
	af, _ := activity.New(activity.Config{Ledger: ledger})
	tools := append(append(append(sh.Tools(), pf.Tools()...), hf.Tools()...), af.Tools()...)
	c := rigouttest.Connect(t, rigouttest.New(t, rigout.Config{Tools: tools, Audit: ledger}))
	l, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(l)
	if len(b) > 10<<10 {
		t.Fatalf("tools/list is %d bytes, budget 10 KiB", len(b))
	}
	t.Logf("tools/list: %d tools, %d bytes", len(l.Tools), len(b))
}
