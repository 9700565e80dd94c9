package rigout

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The MCP tasks extension (io.modelcontextprotocol/tasks, SEP-2663), for
// clients at protocol 2026-07-28 that declare it in a request's
// capabilities. Task creation is the server's choice: a tools/call of a
// tool with [Tool.Tasks] that has not answered within
// [Config.TaskAfter] becomes a task, and the client gets
// {"resultType":"task","taskId":…} at once; a call that answers sooner
// (a short command, a refusal, a confirmation question) answers in full as
// it would without the extension. The client polls tasks/get, which inlines
// the result once the call is over, and may send tasks/cancel, which ends
// the call (its process group is killed). tasks/update is acknowledged;
// rigout's tasks never wait for input (a confirmation is asked before the
// call becomes a task).
//
// mcp-go v1.2.1 implements the 2025-11-25 tasks (client-requested,
// tasks/result) but not the extension, so the gateway serves it over HTTP
// in front of mcp-go ([Gateway.TasksHTTP]): the call itself still goes
// through mcp-go and the whole chain (policy, limits, the ledger), replayed
// on a context detached from the HTTP request, and the gateway keeps the
// answer. A task is in the table before the reply naming it is written, is
// bound to the principal that created it (anyone else hears "task not
// found", as for an unknown ID), lives in memory as long as the gateway,
// and is forgotten TaskTTL after it ends.

// tasksExtension is the extension's identifier, in capabilities.
const tasksExtension = "io.modelcontextprotocol/tasks"

const (
	// defaultTaskAfter is how long a call may take before it becomes a
	// task, when Config.TaskAfter is zero.
	defaultTaskAfter = 2 * time.Second
	// extTaskTTL is how long a finished task is kept, and the ttlMs the
	// client is told.
	extTaskTTL = time.Hour
	// extTaskPoll is the pollIntervalMs the client is told.
	extTaskPoll = time.Second
	// maxExtTasksPerPrincipal bounds the finished tasks kept per
	// principal; past it the principal's oldest finished task is
	// forgotten.
	maxExtTasksPerPrincipal = 64
	// maxExtTaskBody bounds the request body the gateway reads to decide
	// whether the extension applies; larger bodies pass to mcp-go
	// untouched (and meet its own limit there).
	maxExtTaskBody = 4 << 20
)

// Task statuses of the extension.
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// extTask is one task of the extension.
type extTask struct {
	id        string
	principal string
	created   time.Time
	cancel    context.CancelFunc

	// The following are protected by extTasks.mu.
	status  string
	message string
	updated time.Time
	result  json.RawMessage // completed: the CallToolResult
	rpcErr  json.RawMessage // failed: the JSON-RPC error
}

// extTasks holds the extension's tasks. It is safe for concurrent use.
type extTasks struct {
	// closing is closed by cancelAll: listen streams end (taskstatus.go).
	closing chan struct{}

	// mu protects the following.
	mu       sync.Mutex
	byID     map[string]*extTask
	order    []string // task IDs, oldest first
	watchers map[*taskWatcher]struct{}
	closed   bool
}

func newExtTasks() *extTasks {
	return &extTasks{byID: map[string]*extTask{}, closing: make(chan struct{})}
}

// add records a new working task.
func (t *extTasks) add(task *extTask, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forgetLocked(task.principal, now)
	task.status, task.updated = taskWorking, now
	t.byID[task.id] = task
	t.order = append(t.order, task.id)
}

// forgetLocked drops tasks that ended more than extTaskTTL ago, and
// principal's oldest finished tasks beyond maxExtTasksPerPrincipal. The
// caller holds mu.
func (t *extTasks) forgetLocked(principal string, now time.Time) {
	mine := 0
	for _, id := range t.order {
		if task := t.byID[id]; task.principal == principal && task.status != taskWorking {
			mine++
		}
	}
	t.order = slices.DeleteFunc(t.order, func(id string) bool {
		task := t.byID[id]
		done := task.status != taskWorking
		drop := done && now.Sub(task.updated) > extTaskTTL
		if !drop && done && task.principal == principal && mine >= maxExtTasksPerPrincipal {
			drop = true
			mine--
		}
		if drop {
			delete(t.byID, id)
		}
		return drop
	})
}

// get returns principal's task id.
func (t *extTasks) get(principal, id string) (*extTask, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	task := t.byID[id]
	if task == nil || task.principal != principal {
		return nil, false
	}
	return task, true
}

// finish records the end of a task's call: its JSON-RPC result or error.
// A cancelled task stays cancelled.
func (t *extTasks) finish(task *extTask, result, rpcErr json.RawMessage, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if task.status != taskWorking {
		return
	}
	task.updated = now
	switch {
	case result != nil:
		task.status, task.result = taskCompleted, result
	default:
		task.status, task.rpcErr = taskFailed, rpcErr
		task.message = "the call ended with a JSON-RPC error"
	}
	t.changedLocked(task)
}

// cancelTask ends a working task's call and marks it cancelled.
func (t *extTasks) cancelTask(task *extTask, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if task.status != taskWorking {
		return
	}
	task.status, task.updated = taskCancelled, now
	task.message = "cancelled by the client (tasks/cancel); the command's processes were killed"
	task.cancel()
	t.changedLocked(task)
}

// cancelAll ends every working task's call, for Close.
func (t *extTasks) cancelAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		close(t.closing)
	}
	for _, task := range t.byID {
		if task.status == taskWorking {
			task.cancel()
		}
	}
}

// detailed is the task as tasks/get shows it (a DetailedTask with
// resultType "complete"), or as CreateTaskResult when create is set.
func (t *extTasks) detailed(task *extTask, create bool) map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := map[string]any{
		"taskId":         task.id,
		"status":         task.status,
		"createdAt":      task.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  task.updated.UTC().Format(time.RFC3339Nano),
		"ttlMs":          extTaskTTL.Milliseconds(),
		"pollIntervalMs": extTaskPoll.Milliseconds(),
		"resultType":     "complete",
	}
	if create {
		m["resultType"] = "task"
		if task.message == "" {
			m["statusMessage"] = "the call is running; poll tasks/get with this taskId for its result, or send tasks/cancel to end it"
		}
	}
	if task.message != "" {
		m["statusMessage"] = task.message
	}
	if create {
		return m
	}
	switch task.status {
	case taskCompleted:
		m["result"] = task.result
	case taskFailed:
		m["error"] = task.rpcErr
	}
	return m
}

// extTaskKey marks the context of a call the tasks extension runs.
type extTaskKey struct{}

// inExtTask reports whether ctx is that of a tasks-extension call.
func inExtTask(ctx context.Context) bool {
	v, _ := ctx.Value(extTaskKey{}).(bool)
	return v
}

// rpcRequest is what the gateway reads of a JSON-RPC request.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name   string `json:"name"`
		TaskID string `json:"taskId"`
		Meta   *struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
			Capabilities    *struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

func (r *rpcRequest) protocolVersion() string {
	if r.Params.Meta == nil {
		return ""
	}
	return r.Params.Meta.ProtocolVersion
}

// declaresTasks reports whether the request's capabilities declare the
// tasks extension.
func (r *rpcRequest) declaresTasks() bool {
	m := r.Params.Meta
	if m == nil || m.Capabilities == nil {
		return false
	}
	_, ok := m.Capabilities.Extensions[tasksExtension]
	return ok
}

// TasksHTTP serves the tasks extension in front of next, the MCP endpoint
// (mcp-go's streamable HTTP handler): tasks/get, tasks/update and
// tasks/cancel at protocol 2026-07-28 are answered here, and a tools/call
// of a tool with [Tool.Tasks] from a client that declares the extension
// becomes a task when it runs longer than [Config.TaskAfter]. Every other
// request passes to next unchanged. It must run after authentication
// (the principal in the request's context owns the tasks it creates).
func (g *Gateway) TasksHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxExtTaskBody+1))
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		// What was read, then the rest: mcp-go reads the same body.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		var req rpcRequest
		if len(body) > maxExtTaskBody || json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
			next.ServeHTTP(w, r) // mcp-go answers what it makes of it
			return
		}
		switch req.Method {
		case "tasks/get", "tasks/update", "tasks/cancel":
			g.serveTaskMethod(w, r, &req)
		case string(mcp.MethodServerDiscover):
			g.serveDiscover(w, r, next)
		case string(mcp.MethodSubscriptionsListen):
			if ids, only := taskIDsOnly(body); only && req.declaresTasks() {
				g.serveTaskListen(w, r, &req, ids)
				return
			}
			next.ServeHTTP(w, r)
		case "tasks/result", "tasks/list":
			writeRPCError(w, req.ID, mcp.METHOD_NOT_FOUND, req.Method+" is not a method of protocol 2026-07-28 (the tasks extension inlines the result in tasks/get)", nil)
		case string(mcp.MethodToolsCall):
			if req.declaresTasks() && g.taskTool(req.Params.Name) {
				g.serveTaskCall(w, r, body, &req, next)
				return
			}
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// serveDiscover passes server/discover to next and removes the 2025-11-25
// capabilities.tasks slot mcp-go reports there: at 2026-07-28 tasks are
// the extension, declared under capabilities.extensions, and the extension
// forbids the old slot.
func (g *Gateway) serveDiscover(w http.ResponseWriter, r *http.Request, next http.Handler) {
	rec := newResponseRecorder()
	next.ServeHTTP(rec, r)
	var msg map[string]any
	if strings.HasPrefix(rec.header.Get("Content-Type"), "application/json") && json.Unmarshal(rec.body.Bytes(), &msg) == nil {
		if res, ok := msg["result"].(map[string]any); ok {
			if caps, ok := res["capabilities"].(map[string]any); ok {
				delete(caps, "tasks")
				if b, err := json.Marshal(msg); err == nil {
					rec.body.Reset()
					rec.body.Write(append(b, '\n'))
					rec.header.Del("Content-Length")
				}
			}
		}
	}
	rec.copyTo(w)
}

// serveTaskMethod answers tasks/get, tasks/update and tasks/cancel.
func (g *Gateway) serveTaskMethod(w http.ResponseWriter, r *http.Request, req *rpcRequest) {
	// The routing headers of SEP-2243, as mcp-go checks them for the
	// methods it serves: Mcp-Method names the method and Mcp-Name the
	// task, and the version header matches _meta.
	switch {
	case req.protocolVersion() != r.Header.Get(mcp.HeaderProtocolVersion):
		writeRPCError(w, req.ID, mcp.HEADER_MISMATCH, mcp.HeaderProtocolVersion+" header does not match _meta "+mcp.MetaKeyProtocolVersion, nil)
		return
	case strings.TrimSpace(r.Header.Get(mcp.HeaderMethod)) != req.Method:
		writeRPCError(w, req.ID, mcp.HEADER_MISMATCH, mcp.HeaderMethod+" header does not match the method "+req.Method, nil)
		return
	case req.Params.TaskID == "":
		writeRPCError(w, req.ID, mcp.INVALID_PARAMS, req.Method+" needs params.taskId", nil)
		return
	case strings.TrimSpace(r.Header.Get(mcp.HeaderName)) != req.Params.TaskID:
		writeRPCError(w, req.ID, mcp.HEADER_MISMATCH, mcp.HeaderName+" header does not match params.taskId", nil)
		return
	case !req.declaresTasks():
		// SEP-2663: the task methods are gated on the request declaring
		// the extension.
		writeRPCError(w, req.ID, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, req.Method+" needs the "+tasksExtension+" extension in the request's client capabilities",
			map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}})
		return
	}
	task, ok := g.xtasks.get(g.principalOf(r.Context()).Name, req.Params.TaskID)
	if !ok {
		writeRPCError(w, req.ID, mcp.INVALID_PARAMS, errTaskNotFound.Error()+": "+req.Params.TaskID, nil)
		return
	}
	switch req.Method {
	case "tasks/get":
		writeRPCResult(w, req.ID, g.xtasks.detailed(task, false))
	case "tasks/update":
		// rigout's tasks never wait for input: nothing is outstanding, and
		// responses to keys that are not outstanding are ignored.
		writeRPCResult(w, req.ID, map[string]any{"resultType": "complete"})
	case "tasks/cancel":
		g.xtasks.cancelTask(task, g.cfg.Now())
		writeRPCResult(w, req.ID, map[string]any{"resultType": "complete"})
	}
}

// serveTaskCall runs a tools/call through next on a context of its own.
// If next answers within TaskAfter, that answer is the reply; otherwise
// the call becomes a task and the reply names it.
func (g *Gateway) serveTaskCall(w http.ResponseWriter, r *http.Request, body []byte, req *rpcRequest, next http.Handler) {
	now := g.cfg.Now()
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), extTaskKey{}, true))
	task := &extTask{id: newCallID() + newCallID(), principal: g.principalOf(r.Context()).Name, created: now, cancel: cancel}
	inner := r.Clone(ctx)
	inner.Body = io.NopCloser(bytes.NewReader(body))
	rec := newResponseRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		next.ServeHTTP(rec, inner)
	}()
	after := time.NewTimer(g.cfg.TaskAfter)
	defer after.Stop()
	select {
	case <-done:
		rec.copyTo(w)
		return
	case <-r.Context().Done():
		cancel() // the client left before the call became a task
		<-done
		return
	case <-after.C:
	}
	g.xtasks.add(task, now)
	go func() {
		<-done
		result, rpcErr := rec.answer(req.ID)
		if result != nil && resultType(result) == string(mcp.ResultTypeInputRequired) {
			// An input request after the call became a task cannot reach
			// the client: rigout asks before a call runs, so this is not
			// expected; say so rather than hand back a question.
			result, rpcErr = nil, rpcErrorJSON(mcp.INTERNAL_ERROR, "the call asked for input after it became a task; call the tool again")
		}
		if result == nil && rpcErr == nil {
			rpcErr = rpcErrorJSON(mcp.INTERNAL_ERROR, "the call ended without an answer")
		}
		g.xtasks.finish(task, result, rpcErr, g.cfg.Now())
	}()
	g.log.Info("tool call became a task", "tool", req.Params.Name, "task", task.id, "principal", task.principal)
	writeRPCResult(w, req.ID, g.xtasks.detailed(task, true))
}

// resultType returns a result's resultType.
func resultType(result json.RawMessage) string {
	var r struct {
		ResultType string `json:"resultType"`
	}
	_ = json.Unmarshal(result, &r)
	return r.ResultType
}

func rpcErrorJSON(code int, message string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"code": code, "message": message})
	return b
}

// writeRPCResult writes a JSON-RPC result.
func writeRPCResult(w http.ResponseWriter, id json.RawMessage, result any) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if err != nil {
		writeRPCError(w, id, mcp.INTERNAL_ERROR, "encoding the result: "+err.Error(), nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}

// writeRPCError writes a JSON-RPC error with the HTTP status protocol
// 2026-07-28 gives its code.
func writeRPCError(w http.ResponseWriter, id json.RawMessage, code int, message string, data any) {
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	status := http.StatusOK
	switch code {
	case mcp.METHOD_NOT_FOUND:
		status = http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// responseRecorder keeps what mcp-go writes for a call that may become a
// task: a JSON body or an SSE stream. It is safe for concurrent use (mcp-go
// may write notifications from another goroutine).
type responseRecorder struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   bytes.Buffer
}

func newResponseRecorder() *responseRecorder { return &responseRecorder{header: http.Header{}} }

func (rr *responseRecorder) Header() http.Header { return rr.header }

func (rr *responseRecorder) WriteHeader(status int) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.status == 0 {
		rr.status = status
	}
}

func (rr *responseRecorder) Write(p []byte) (int, error) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.status == 0 {
		rr.status = http.StatusOK
	}
	return rr.body.Write(p)
}

// Flush lets mcp-go stream server-sent events into the recorder.
func (rr *responseRecorder) Flush() {}

// copyTo writes the recorded response to w.
func (rr *responseRecorder) copyTo(w http.ResponseWriter) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for k, v := range rr.header {
		w.Header()[k] = v
	}
	status := rr.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(rr.body.Bytes())
}

// answer finds the JSON-RPC response to id in the recorded body, a JSON
// message or an SSE stream of them, and returns its result or its error.
func (rr *responseRecorder) answer(id json.RawMessage) (result, rpcErr json.RawMessage) {
	rr.mu.Lock()
	body := slices.Clone(rr.body.Bytes())
	rr.mu.Unlock()
	var msgs [][]byte
	if strings.HasPrefix(rr.header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 64<<10), len(body)+1)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
				msgs = append(msgs, bytes.TrimSpace(data))
			}
		}
	} else {
		msgs = [][]byte{body}
	}
	for _, m := range msgs {
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(m, &resp) != nil || !bytes.Equal(bytes.TrimSpace(resp.ID), bytes.TrimSpace(id)) {
			continue
		}
		if len(resp.Result) > 0 {
			return resp.Result, nil
		}
		if len(resp.Error) > 0 {
			return nil, resp.Error
		}
	}
	return nil, nil
}

// advertiseTasksExtension declares the extension in the capabilities
// server/discover reports.
func (g *Gateway) advertiseTasksExtension() {
	server.WithExtensions(map[string]any{tasksExtension: map[string]any{}})(g.srv)
}
