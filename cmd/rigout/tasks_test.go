package main

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestE2ETasksIgnoredForModernClients: a 2026-07-28 client's params.task
// is ignored (that revision's servers must; mcp-go would make a task whose
// result such a client cannot fetch), so the call answers in full.
func TestE2ETasksIgnoredForModernClients(t *testing.T) {
	s := startStdio(t)
	resp, err := s.client.GetTransport().SendRequest(context.Background(), mcptransport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(9100)), Method: string(mcp.MethodToolsCall),
		Params: map[string]any{"name": "execute_command", "arguments": map[string]any{"command": "echo whole"}, "task": map[string]any{},
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
				mcp.MetaKeyClientInfo:         map[string]any{"name": "modern-e2e", "version": "1"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			}},
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("tools/call: %v %+v", err, resp.Error)
	}
	var res struct {
		Task              *mcp.Task      `json:"task"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.Task != nil || res.StructuredContent["stdout"] != "whole\n" {
		t.Fatalf("not a whole result (%v): %s", err, resp.Result)
	}
}

// startTask sends a task-augmented tools/call through the client's
// transport (mcp-go's client has no call for it) and returns the task.
func startTask(t *testing.T, c *client.Client, id int, args map[string]any) mcp.Task {
	t.Helper()
	resp, err := c.GetTransport().SendRequest(context.Background(), mcptransport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(id)), Method: string(mcp.MethodToolsCall),
		Params: map[string]any{"name": "execute_command", "arguments": args, "task": map[string]any{}},
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("tools/call as a task: %v %+v", err, resp)
	}
	var ct mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &ct); err != nil || ct.Task.TaskId == "" {
		t.Fatalf("not a task (%v): %s", err, resp.Result)
	}
	return ct.Task
}

// TestE2ETasks drives the binary as a client that speaks tasks (protocol
// 2025-11-25), over stdio and over HTTP: a task runs `sleep 1; echo ok`
// and is polled to its result; another is cancelled and its process
// (found by PID through process list) ends.
func TestE2ETasks(t *testing.T) {
	for _, tr := range []struct {
		name  string
		start func(testing.TB, string, ...string) *server
	}{{"stdio", startStdioVersion}, {"http", startHTTPVersion}} {
		t.Run(tr.name, func(t *testing.T) {
			s := tr.start(t, mcp.ProtocolVersion20251125)
			c := s.client
			if caps := c.GetServerCapabilities(); caps.Tasks == nil || caps.Tasks.Requests == nil {
				t.Fatalf("no task capability: %+v", caps)
			}
			task := startTask(t, c, 9001, map[string]any{"command": "sleep 1; echo ok"})
			var req mcp.GetTaskRequest
			req.Params.TaskId = task.TaskId
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got, err := c.WaitForTask(ctx, req, 100*time.Millisecond)
			if err != nil || got.Status != mcp.TaskStatusCompleted {
				t.Fatalf("task: %+v %v", got, err)
			}
			var rr mcp.TaskResultRequest
			rr.Params.TaskId = task.TaskId
			res, err := c.TaskResult(context.Background(), rr)
			if err != nil {
				t.Fatal(err)
			}
			if sc, _ := res.StructuredContent.(map[string]any); res.IsError || sc["stdout"] != "ok\n" {
				t.Fatalf("result %+v", res)
			}

			mk := markers.Next()
			task2 := startTask(t, c, 9002, map[string]any{"argv": []string{"sleep", mk}})
			pid := 0
			for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				var list struct {
					Processes []struct {
						Command string `json:"command"`
						Pid     int    `json:"pid"`
						Running bool   `json:"running"`
					} `json:"processes"`
				}
				r := call(t, c, "process", map[string]any{"action": "list"})
				b, _ := json.Marshal(r.StructuredContent)
				_ = json.Unmarshal(b, &list)
				for _, p := range list.Processes {
					if strings.Contains(p.Command, mk) && p.Running {
						pid = p.Pid
					}
				}
			}
			if pid <= 1 || syscall.Kill(pid, 0) != nil {
				t.Fatalf("the task's process is not running (pid %d)", pid)
			}
			var cr mcp.CancelTaskRequest
			cr.Params.TaskId = task2.TaskId
			if cres, err := c.CancelTask(context.Background(), cr); err != nil || cres.Status != mcp.TaskStatusCancelled {
				t.Fatalf("cancel: %+v %v", cres, err)
			}
			for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("pid %d still runs after tasks/cancel", pid)
				}
			}
		})
	}
}
