package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// modernClient speaks protocol 2026-07-28 to `rigout serve` over plain
// HTTP, as a client of the tasks extension (SEP-2663) would: each request
// carries its version, client info and capabilities in _meta, and the
// routing headers.
type modernClient struct {
	t      *testing.T
	url    string
	token  string
	tasks  bool // declare the tasks extension
	nextID int
}

// rpcReply is a JSON-RPC answer with the HTTP status it came with.
type rpcReply struct {
	Status int
	Result map[string]any
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

// send posts one request; name is the Mcp-Name header (the tool or task).
func (c *modernClient) send(method, name string, params map[string]any) rpcReply {
	c.t.Helper()
	return c.sendHeaders(method, name, params, nil)
}

func (c *modernClient) sendHeaders(method, name string, params map[string]any, headers map[string]string) rpcReply {
	c.t.Helper()
	c.nextID++
	caps := map[string]any{}
	if c.tasks {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-ext-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The last data line is the answer (notifications come first).
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok && strings.Contains(d, `"id"`) {
				raw = []byte(d)
			}
		}
	}
	var out rpcReply
	if err := json.Unmarshal(raw, &out); err != nil {
		c.t.Fatalf("%s: HTTP %d, not JSON-RPC: %s", method, resp.StatusCode, raw)
	}
	out.Status = resp.StatusCode
	return out
}

// TestE2ETasksExtension drives the real binary as a client of the tasks
// extension at protocol 2026-07-28, over HTTP: a long command becomes a
// task that tasks/get resolves at once (durable before the reply) and
// then returns with its result inlined; a short one answers in full; a
// task cancelled with tasks/cancel ends its process; unknown tasks,
// removed methods and a wrong Mcp-Name get the spec's error codes; and a
// client that does not declare the extension never gets a task.
func TestE2ETasksExtension(t *testing.T) {
	_, url, token := startServe(t)
	c := &modernClient{t: t, url: url, token: token, tasks: true}

	d := c.send("server/discover", "", map[string]any{})
	caps, _ := d.Result["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if _, ok := ext["io.modelcontextprotocol/tasks"]; !ok {
		t.Fatalf("server/discover does not declare the tasks extension: %v %+v", d.Result, d.Error)
	}
	if _, ok := caps["tasks"]; ok {
		t.Errorf("server/discover keeps the 2025-11-25 capabilities.tasks slot the extension forbids: %v", caps)
	}

	// A long command becomes a task.
	r := c.send("tools/call", "execute_command", map[string]any{"name": "execute_command", "arguments": map[string]any{"command": "sleep 3; echo finished"}})
	if r.Error != nil || r.Result["resultType"] != "task" {
		t.Fatalf("a 3 s command did not become a task: %+v %v", r.Error, r.Result)
	}
	id, _ := r.Result["taskId"].(string)
	if id == "" || r.Result["status"] != "working" || r.Result["content"] != nil {
		t.Fatalf("CreateTaskResult = %v", r.Result)
	}
	if g := c.send("tasks/get", id, map[string]any{"taskId": id}); g.Error != nil || g.Result["taskId"] != id || g.Result["resultType"] != "complete" {
		t.Fatalf("tasks/get right after the reply: %+v %v", g.Error, g.Result)
	}
	var final map[string]any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		g := c.send("tasks/get", id, map[string]any{"taskId": id})
		if g.Error != nil {
			t.Fatalf("tasks/get: %+v", g.Error)
		}
		if g.Result["status"] != "working" {
			final = g.Result
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task still works after 30s: %v", g.Result)
		}
	}
	res, _ := final["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if final["status"] != "completed" || res["isError"] == true || sc["stdout"] != "finished\n" {
		t.Fatalf("completed task = %v", final)
	}
	if u := c.send("tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{"nothing": map[string]any{}}}); u.Error != nil || u.Result["resultType"] != "complete" {
		t.Errorf("tasks/update ack = %+v %v", u.Error, u.Result)
	}

	// A short command answers in full.
	r = c.send("tools/call", "execute_command", map[string]any{"name": "execute_command", "arguments": map[string]any{"command": "echo quick"}})
	sc, _ = r.Result["structuredContent"].(map[string]any)
	if r.Error != nil || r.Result["resultType"] != "complete" || sc["stdout"] != "quick\n" {
		t.Fatalf("a short command: %+v %v", r.Error, r.Result)
	}

	// tasks/cancel ends the command's process.
	mk := markers.Next()
	r = c.send("tools/call", "execute_command", map[string]any{"name": "execute_command", "arguments": map[string]any{"argv": []string{"sleep", mk}}})
	cid, _ := r.Result["taskId"].(string)
	if r.Result["resultType"] != "task" || cid == "" {
		t.Fatalf("sleep %s did not become a task: %+v %v", mk, r.Error, r.Result)
	}
	pid := 0
	for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		l := c.send("tools/call", "process", map[string]any{"name": "process", "arguments": map[string]any{"action": "list"}})
		b, _ := json.Marshal(l.Result["structuredContent"])
		var list struct {
			Processes []struct {
				Command string `json:"command"`
				Pid     int    `json:"pid"`
				Running bool   `json:"running"`
			} `json:"processes"`
		}
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
	if x := c.send("tasks/cancel", cid, map[string]any{"taskId": cid}); x.Error != nil || x.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %+v %v", x.Error, x.Result)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs after tasks/cancel", pid)
		}
	}
	if g := c.send("tasks/get", cid, map[string]any{"taskId": cid}); g.Result["status"] != "cancelled" {
		t.Errorf("tasks/get after cancel: %+v %v", g.Error, g.Result)
	}

	// The spec's errors.
	errs := []struct {
		name       string
		method     string
		mcpName    string
		params     map[string]any
		wantStatus int
		wantCode   int
	}{
		{"unknown task", "tasks/get", "no-such-task", map[string]any{"taskId": "no-such-task"}, 400, -32602},
		{"cancel of an unknown task", "tasks/cancel", "no-such-task", map[string]any{"taskId": "no-such-task"}, 400, -32602},
		{"Mcp-Name not the task", "tasks/get", "another", map[string]any{"taskId": id}, 400, -32020},
		{"tasks/result removed", "tasks/result", id, map[string]any{"taskId": id}, 404, -32601},
		{"tasks/list removed", "tasks/list", "", map[string]any{}, 404, -32601},
	}
	for _, e := range errs {
		got := c.send(e.method, e.mcpName, e.params)
		if got.Error == nil || got.Error.Code != e.wantCode || got.Status != e.wantStatus {
			t.Errorf("%s: HTTP %d %+v %v, want HTTP %d and code %d", e.name, got.Status, got.Error, got.Result, e.wantStatus, e.wantCode)
		}
	}

	// Without the extension a long call is never a task.
	plain := &modernClient{t: t, url: url, token: token}
	r = plain.send("tools/call", "execute_command", map[string]any{"name": "execute_command", "arguments": map[string]any{"command": "sleep 3; echo whole"}})
	if r.Error != nil || r.Result["resultType"] != "complete" || r.Result["taskId"] != nil {
		t.Fatalf("a client without the extension got %+v %v", r.Error, r.Result)
	}
}

// TestE2ETaskStatusNotifications drives the real binary as a tasks
// extension client that listens for its task instead of polling: the
// subscriptions/listen stream acknowledges the task, reports it working,
// then completed with the command's output inlined, and ends.
func TestE2ETaskStatusNotifications(t *testing.T) {
	_, url, token := startServe(t)
	c := &modernClient{t: t, url: url, token: token, tasks: true}
	r := c.send("tools/call", "execute_command", map[string]any{"name": "execute_command", "arguments": map[string]any{"command": "sleep 3; echo finished"}})
	id, _ := r.Result["taskId"].(string)
	if r.Error != nil || r.Result["resultType"] != "task" || id == "" {
		t.Fatalf("a 3 s command did not become a task: %+v %v", r.Error, r.Result)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": map[string]any{
		"notifications": map[string]any{"taskIds": []string{id}},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-ext-test", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		},
	}})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body) // the stream ends once the task has
	if err != nil {
		t.Fatalf("listen stream: %v (read %q)", err, raw)
	}
	var got []string
	var last map[string]any
	for _, line := range strings.Split(string(raw), "\n") {
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("not JSON: %q", d)
		}
		p, _ := m["params"].(map[string]any)
		meta, _ := p["_meta"].(map[string]any)
		if m["method"] != nil && meta["io.modelcontextprotocol/subscriptionId"] != "listen-1" {
			t.Errorf("not tagged with the listen's ID: %s", d)
		}
		switch m["method"] {
		case "notifications/subscriptions/acknowledged":
			n, _ := p["notifications"].(map[string]any)
			got = append(got, fmt.Sprint("ack ", n["taskIds"]))
		case "notifications/tasks":
			got = append(got, fmt.Sprint(p["status"]))
			last = p
		default:
			got = append(got, fmt.Sprint("end ", m["id"]))
		}
	}
	want := []string{fmt.Sprintf("ack [%s]", id), "working", "completed", "end listen-1"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("listen stream carried %q, want %q", got, want)
	}
	res, _ := last["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if sc["stdout"] != "finished\n" {
		t.Errorf("the completed task's result is not inlined: %v", last)
	}
}
