package rigout

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MCP tasks (protocol 2025-11-25): a client may ask for a tool call to run
// as a task — tools/call answers at once with a task ID, and the client
// polls tasks/get, fetches tasks/result and may send tasks/cancel. mcp-go
// runs such a call through the same handler, so the chain (admit, limits,
// intent row, handler, done row) applies unchanged. What mcp-go does not
// do, the gateway adds here:
//
//   - Tasks bound to principals. mcp-go scopes a task to its protocol
//     session only when both sides have a session ID, and not at all in
//     stateless HTTP; the gateway refuses tasks/get, tasks/result and
//     tasks/cancel for any task ID the calling principal did not create,
//     and tasks/list shows only the principal's own.
//   - A task's life. mcp-go derives a task's context from the tools/call
//     request's, which ends when that request has been answered (with the
//     task ID), so a call would be cancelled as soon as it became a task.
//     The gateway detaches the call from that request and ends it on
//     tasks/cancel instead.
//
// The tasks table correlates the two halves: a tag the gateway writes into
// the request's _meta before dispatch (a client's own tag is removed) names
// the call; the tools/call answer names the task.

// taskTagKey is the _meta key of the gateway's tag on a task-augmented
// call.
const taskTagKey = "io.rigout/task-tag"

// maxTaskRecords bounds the finished tasks the gateway remembers owners
// of, and maxTaskRecordsPerPrincipal those of one principal. Past the
// first, the oldest finished task of the principal with the most is
// forgotten; past the second, the principal's own oldest: one principal's
// many tasks never push another's out. A forgotten task is refused to
// everyone.
const (
	maxTaskRecords             = 4096
	maxTaskRecordsPerPrincipal = 256
)

// errTaskNotFound is what a principal that does not own a task ID hears,
// whether or not the task exists.
var errTaskNotFound = errors.New("task not found")

// taskRun is one task-augmented call.
type taskRun struct {
	tag       string
	id        string // the MCP task ID, once the answer named it
	principal string
	cancel    context.CancelFunc // nil until the call is running
	canceled  bool               // tasks/cancel came before the call ran
	finished  bool
}

// taskTable maps task IDs to their principals and running calls. It is
// safe for concurrent use.
type taskTable struct {
	// mu protects the following.
	mu    sync.Mutex
	byTag map[string]*taskRun
	byID  map[string]*taskRun
	order []string // task IDs, oldest first
}

func newTaskTable() *taskTable {
	return &taskTable{byTag: map[string]*taskRun{}, byID: map[string]*taskRun{}}
}

// runLocked returns the run of tag, creating it.
func (t *taskTable) runLocked(tag string) *taskRun {
	r := t.byTag[tag]
	if r == nil {
		r = &taskRun{tag: tag}
		t.byTag[tag] = r
	}
	return r
}

// tag removes any tag the client sent and, on a call that will run as a
// task, writes a fresh one.
func (t *taskTable) tag(req *mcp.CallToolRequest, asTask bool) {
	if m := req.Params.Meta; m != nil && m.AdditionalFields != nil {
		delete(m.AdditionalFields, taskTagKey)
	}
	if !asTask {
		return
	}
	if req.Params.Meta == nil {
		req.Params.Meta = &mcp.Meta{}
	}
	if req.Params.Meta.AdditionalFields == nil {
		req.Params.Meta.AdditionalFields = map[string]any{}
	}
	req.Params.Meta.AdditionalFields[taskTagKey] = newCallID()
}

func tagOf(req *mcp.CallToolRequest) string {
	if m := req.Params.Meta; m != nil {
		s, _ := m.AdditionalFields[taskTagKey].(string)
		return s
	}
	return ""
}

// begin detaches a task's call from the request that created it: the
// returned context keeps ctx's values, ends on tasks/cancel, and end must
// be called when the call is over.
func (t *taskTable) begin(ctx context.Context, tag, principal string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if tag == "" {
		return ctx, cancel // not tagged: nothing can reach it but Close
	}
	t.mu.Lock()
	r := t.runLocked(tag)
	r.principal, r.cancel = principal, cancel
	if r.canceled {
		cancel()
	}
	t.mu.Unlock()
	return ctx, func() {
		cancel()
		t.mu.Lock()
		defer t.mu.Unlock()
		r.finished, r.cancel = true, nil
		if r.id != "" {
			delete(t.byTag, tag)
		}
	}
}

// link records the task ID the tools/call answer gave the tagged call.
func (t *taskTable) link(tag, id, principal string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.runLocked(tag)
	r.id, r.principal = id, principal
	t.byID[id] = r
	t.order = append(t.order, id)
	if r.finished {
		delete(t.byTag, tag)
	}
	// Forget the oldest finished tasks; running ones stay reachable (their
	// number is bounded by the gateway's concurrency caps).
	count := map[string]int{}
	for _, tid := range t.order {
		if r := t.byID[tid]; r != nil {
			count[r.principal]++
		}
	}
	for count[principal] > maxTaskRecordsPerPrincipal && t.forgetOldestLocked(principal) {
		count[principal]--
	}
	for len(t.byID) > maxTaskRecords {
		hog := principal
		for who, n := range count {
			if n > count[hog] {
				hog = who
			}
		}
		if !t.forgetOldestLocked(hog) {
			break
		}
		count[hog]--
	}
}

// forgetOldestLocked forgets principal's oldest finished task and reports
// whether there was one. The caller holds mu.
func (t *taskTable) forgetOldestLocked(principal string) bool {
	i := slices.IndexFunc(t.order, func(tid string) bool {
		r := t.byID[tid]
		return r != nil && r.principal == principal && r.finished
	})
	if i < 0 {
		return false
	}
	delete(t.byID, t.order[i])
	t.order = slices.Delete(t.order, i, i+1)
	return true
}

// owns reports whether principal created task id.
func (t *taskTable) owns(principal, id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.byID[id]
	return r != nil && r.principal == principal
}

// cancel ends task id's call.
func (t *taskTable) cancel(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.byID[id]
	if r == nil {
		return
	}
	if r.cancel != nil {
		r.cancel()
	} else {
		r.canceled = true
	}
}

// cancelAll ends every running task's call, for Close.
func (t *taskTable) cancelAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.byTag {
		if r.cancel != nil {
			r.cancel()
		}
		r.canceled = true
	}
}

// enableTasks declares the task capability and installs the hooks that
// bind tasks to principals. It runs once, when the first tool with
// [Tool.Tasks] is registered.
func (g *Gateway) enableTasks() {
	g.taskOnce.Do(func() {
		server.WithTaskCapabilities(true, true, true)(g.srv)
		g.advertiseTasksExtension()
		h := g.srv.GetHooks()
		h.AddOnRequestInitialization(g.checkTaskRequest)
		h.AddBeforeCallTool(func(ctx context.Context, _ any, req *mcp.CallToolRequest) {
			if server.IsModernRequest(ctx) {
				// 2026-07-28 moved tasks to an extension whose servers
				// must ignore params.task, and removed tasks/result: a
				// task made here could never be collected. The call
				// answers in full (with the hand-off) instead.
				req.Params.Task = nil
			}
			g.tasks.tag(req, req.Params.Task != nil && g.taskTool(req.Params.Name))
		})
		h.AddAfterCallTool(func(ctx context.Context, _ any, req *mcp.CallToolRequest, result any) {
			if ct, ok := result.(*mcp.CreateTaskResult); ok {
				if tag := tagOf(req); tag != "" {
					g.tasks.link(tag, ct.Task.TaskId, g.principalOf(ctx).Name)
				}
			}
		})
		h.AddAfterCancelTask(func(_ context.Context, _ any, req *mcp.CancelTaskRequest, _ *mcp.CancelTaskResult) {
			g.tasks.cancel(req.Params.TaskId)
		})
		h.AddAfterListTasks(func(ctx context.Context, _ any, _ *mcp.ListTasksRequest, res *mcp.ListTasksResult) {
			who := g.principalOf(ctx).Name
			res.Tasks = slices.DeleteFunc(res.Tasks, func(task mcp.Task) bool { return !g.tasks.owns(who, task.TaskId) })
		})
	})
}

// taskTool reports whether the named tool runs as a task when asked.
func (g *Gateway) taskTool(name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	r := g.tools[name]
	return r != nil && r.tool.Tasks
}

// checkTaskRequest refuses tasks/get, tasks/result and tasks/cancel for a
// task the caller's principal did not create, before mcp-go looks it up.
func (g *Gateway) checkTaskRequest(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil // mcp-go answers malformed messages itself
	}
	switch mcp.MCPMethod(m.Method) {
	case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel:
		if !g.tasks.owns(g.principalOf(ctx).Name, m.Params.TaskID) {
			return errTaskNotFound
		}
	}
	return nil
}

// Task reports whether the call runs as an MCP task: the tool declares
// [Tool.Tasks] and the client asked for a task (2025-11-25) or declared
// the tasks extension (2026-07-28, where the gateway turns the call into a
// task if it runs long: see [Gateway.TasksHTTP]). Such a call has no
// client timeout to fit in; its context ends on tasks/cancel.
func (c *Call) Task() bool { return c.Tool.Tasks && (c.Request.Params.Task != nil || c.extTask) }
