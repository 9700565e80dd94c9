package process_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/process"
	"github.com/rigout/rigout/tools/shell"
	rtransport "github.com/rigout/rigout/transport"
)

// serveTasks serves a gateway with the shell and process families on m
// over streamable HTTP (stateless, where mcp-go itself scopes tasks to
// nothing), with three bearer tokens: "alice-token" and "bob-token" (full
// scopes) and "carol-token" (read-only).
func serveTasks(t *testing.T, ledger audit.Recorder) string {
	t.Helper()
	return serveTasksWith(t, ledger, newManager(t, ledger), nil)
}

// serveTasksWith is serveTasks on m, with a credential store.
func serveTasksWith(t *testing.T, ledger audit.Recorder, m *sessions.Manager, creds *credentials.Store) string {
	t.Helper()
	sh, err := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}, Processes: m, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	pf, err := process.New(process.Config{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	gw := rigouttest.New(t, rigout.Config{Tools: append(sh.Tools(), pf.Tools()...), Audit: ledger})
	principals := map[string]string{"Bearer alice-token": "alice", "Bearer bob-token": "bob", "Bearer carol-token": "carol"}
	return rigouttest.ServeHTTPConfig(t, gw, rtransport.HTTPConfig{
		Stateless: true,
		Auth: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				name, ok := principals[r.Header.Get("Authorization")]
				if !ok {
					http.Error(w, "no", http.StatusUnauthorized)
					return
				}
				p := auth.Principal{Name: name, Scopes: auth.FullScopes()}
				if name == "carol" {
					p.Scopes = auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}
				}
				next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), p)))
			})
		},
	})
}

// taskClient is an mcp-go client speaking protocol 2025-11-25 with token.
func taskClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "tasks-test", Version: "1"}
	res, err := c.Initialize(context.Background(), init)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != mcp.ProtocolVersion20251125 || res.Capabilities.Tasks == nil || res.Capabilities.Tasks.Requests == nil {
		t.Fatalf("server: protocol %s, tasks %+v", res.ProtocolVersion, res.Capabilities.Tasks)
	}
	return c
}

var reqID atomic.Int64

// callAsTask sends a task-augmented tools/call (mcp-go's client has no
// call for it, so it goes through the client's transport) and returns
// the task it created.
func callAsTask(t *testing.T, c *client.Client, name string, args, meta map[string]any) mcp.Task {
	t.Helper()
	params := map[string]any{"name": name, "arguments": args, "task": map[string]any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(1000 + reqID.Add(1)), Method: string(mcp.MethodToolsCall),
		Params: params,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("tools/call as a task: %+v", resp.Error)
	}
	var ct mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &ct); err != nil || ct.Task.TaskId == "" {
		t.Fatalf("not a task (%v): %s", err, resp.Result)
	}
	return ct.Task
}

func getTask(c *client.Client, id string) (*mcp.GetTaskResult, error) {
	var req mcp.GetTaskRequest
	req.Params.TaskId = id
	return c.GetTask(context.Background(), req)
}

func TestTasksRunPollResultCancel(t *testing.T) {
	ledger := rigouttest.OpenLedger(t)
	url := serveTasks(t, ledger)
	alice := taskClient(t, url, "alice-token")
	bob := taskClient(t, url, "bob-token")

	// The tool list declares task support on execute_command.
	tools, err := alice.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		want := tool.Name == "execute_command"
		if got := tool.Execution != nil && tool.Execution.TaskSupport == mcp.TaskSupportOptional; got != want {
			t.Errorf("%s: task support %+v", tool.Name, tool.Execution)
		}
	}

	// Run `sleep 3; echo ok` as a task, and poll it. It asks for progress
	// (and a forged gateway tag, which is dropped): notifications to a
	// request already answered must not hold the task up.
	task := callAsTask(t, alice, "execute_command", map[string]any{"command": "sleep 3; echo ok"},
		map[string]any{"progressToken": "p1", "io.rigout/task-tag": "forged"})
	if task.Status != mcp.TaskStatusWorking {
		t.Fatalf("created %+v", task)
	}
	polls := 0
	var got *mcp.GetTaskResult
	for deadline := time.Now().Add(20 * time.Second); ; polls++ {
		if got, err = getTask(alice, task.TaskId); err != nil {
			t.Fatal(err)
		}
		if got.Status.IsTerminal() || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got.Status != mcp.TaskStatusCompleted || polls < 5 {
		t.Fatalf("after %d polls: %+v", polls, got.Task)
	}
	var rr mcp.TaskResultRequest
	rr.Params.TaskId = task.TaskId
	res, err := alice.TaskResult(context.Background(), rr)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if res.IsError || sc["stdout"] != "ok\n" || sc["exit_code"] != float64(0) {
		t.Fatalf("result: %+v", res)
	}
	// The task's process is in the process table, as alice's.
	if id, _ := sc["process_id"].(string); id == "" {
		t.Fatalf("no process: %+v", sc)
	} else if r := rigouttest.Call(t, alice, "process", map[string]any{"action": "read", "id": id}); r.IsError {
		t.Fatalf("process read: %s", rigouttest.Text(r))
	}

	// Bob sees none of alice's tasks: not by ID, not in the list.
	if _, err := getTask(bob, task.TaskId); err == nil || !strings.Contains(err.Error(), "task not found") {
		t.Fatalf("bob got alice's task: %v", err)
	}
	if _, err := bob.TaskResult(context.Background(), rr); err == nil {
		t.Fatal("bob got alice's task result")
	}
	if l, err := bob.ListTasks(context.Background(), mcp.ListTasksRequest{}); err != nil || len(l.Tasks) != 0 {
		t.Fatalf("bob lists %+v (%v)", l, err)
	}
	if l, err := alice.ListTasks(context.Background(), mcp.ListTasksRequest{}); err != nil || len(l.Tasks) != 1 {
		t.Fatalf("alice lists %+v (%v)", l, err)
	}

	// Cancel another: its process ends (counted by PID).
	mk := marker()
	task2 := callAsTask(t, alice, "execute_command", map[string]any{"argv": []string{"sleep", mk}}, nil)
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); {
		list := rigouttest.Structured(t, rigouttest.Call(t, alice, "process", map[string]any{"action": "list"}))
		procs, _ := list["processes"].([]any)
		for _, p := range procs {
			p := p.(map[string]any)
			if strings.Contains(p["command"].(string), mk) && p["running"] == true {
				pid = int(p["pid"].(float64))
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid <= 1 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("the task's process is not running (pid %d)", pid)
	}
	var cr mcp.CancelTaskRequest
	cr.Params.TaskId = task2.TaskId
	if _, err := bob.CancelTask(context.Background(), cr); err == nil {
		t.Fatal("bob cancelled alice's task")
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("bob's cancel ended alice's process")
	}
	if c, err := alice.CancelTask(context.Background(), cr); err != nil || c.Status != mcp.TaskStatusCancelled {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs after tasks/cancel", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := survivors(mk); n != 0 {
		t.Fatalf("%d processes of the cancelled task survive", n)
	}

	// Each task call went through the chain: an intent and a done row,
	// by alice; the cancelled one is recorded as canceled.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var done []audit.Event
		for _, e := range rigouttest.Events(t, ledger, audit.Filter{}) {
			if e.Type == audit.TypeToolCall && e.Tool == "execute_command" && e.Phase == audit.PhaseDone {
				done = append(done, e)
			}
		}
		if len(done) == 2 {
			if done[0].Principal != "alice" || done[1].Principal != "alice" {
				t.Fatalf("done rows %+v", done)
			}
			statuses := string(done[0].Status) + " " + string(done[1].Status)
			if !strings.Contains(statuses, string(audit.StatusOK)) || !strings.Contains(statuses, string(audit.StatusCanceled)) {
				t.Fatalf("done statuses %s", statuses)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d done rows", len(done))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A task is refused exactly as the call would be: a read-only token's
// task-augmented execute_command is denied by the chain, nothing runs, and
// the ledger records the refusal.
func TestTaskPassesTheChain(t *testing.T) {
	ledger := rigouttest.OpenLedger(t)
	url := serveTasks(t, ledger)
	carol := taskClient(t, url, "carol-token")
	sentinel := filepath.Join(t.TempDir(), "ran")
	task := callAsTask(t, carol, "execute_command", map[string]any{"argv": []string{"touch", sentinel}}, nil)
	var rr mcp.TaskResultRequest
	rr.Params.TaskId = task.TaskId
	res, err := carol.TaskResult(context.Background(), rr)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Fatalf("a read-only token's task ran: %+v", res)
	}
	if _, err := os.Stat(sentinel); !os.IsNotExist(err) {
		t.Fatalf("the command ran: %v", err)
	}
	var denied bool
	for _, e := range rigouttest.Events(t, ledger, audit.Filter{}) {
		if e.Tool == "execute_command" && e.Principal == "carol" && e.Status == audit.StatusDenied {
			denied = true
		}
	}
	if !denied {
		for _, e := range rigouttest.Events(t, ledger, audit.Filter{}) {
			t.Logf("%s %s %s %s %s", e.Type, e.Tool, e.Phase, e.Principal, e.Status)
		}
		t.Fatal("no denied row for carol's task")
	}
}
