package rigout

import (
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// Task status notifications of the tasks extension (SEP-2663, protocol
// 2026-07-28): a client that declares the extension opens a
// subscriptions/listen stream naming, in params.notifications.taskIds, the
// tasks it wants to hear of; the gateway acknowledges the IDs it agrees to
// (the principal's own tasks: another's, like an unknown ID, is left out
// without a word), sends each one's current state at once, and then a
// notifications/tasks (the task as tasks/get shows it) whenever its status
// changes, every message tagged with the listen request's ID. Only the
// owning principal's streams hear of a task. Clients still poll: a stream
// whose buffer is full misses an update, never blocks the task.
//
// A listen that asks for task IDs only is served here, and stays open until
// every task it follows has ended and been reported, or the client leaves,
// or the gateway closes. A listen that also asks for other notifications
// is left to mcp-go, without task IDs (it does not know them).

// taskStatusMethod is the extension's status notification.
const taskStatusMethod = "notifications/tasks"

// taskWatcher is one listen stream's interest in tasks.
type taskWatcher struct {
	principal string
	ids       map[string]bool
	updates   chan *extTask
}

// watch registers w; the returned func removes it.
func (t *extTasks) watch(w *taskWatcher) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.watchers == nil {
		t.watchers = map[*taskWatcher]struct{}{}
	}
	t.watchers[w] = struct{}{}
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.watchers, w)
	}
}

// changedLocked tells the watchers of task's principal that follow it that
// its status changed. The caller holds mu.
func (t *extTasks) changedLocked(task *extTask) {
	for w := range t.watchers {
		if w.principal != task.principal || !w.ids[task.id] {
			continue
		}
		select {
		case w.updates <- task:
		default: // the client polls; never block a task on a slow stream
		}
	}
}

// listenRequest is what the gateway reads of a subscriptions/listen.
type listenRequest struct {
	Params struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	} `json:"params"`
}

// taskIDsOnly returns the task IDs a listen asks for, and whether it asks
// for nothing else.
func taskIDsOnly(body []byte) (ids []string, only bool) {
	var req listenRequest
	if json.Unmarshal(body, &req) != nil {
		return nil, false
	}
	raw, ok := req.Params.Notifications["taskIds"]
	if !ok || json.Unmarshal(raw, &ids) != nil || len(ids) == 0 {
		return nil, false
	}
	for k, v := range req.Params.Notifications {
		if k != "taskIds" && string(v) != "false" && string(v) != "null" && string(v) != "[]" {
			return ids, false
		}
	}
	return ids, true
}

// serveTaskListen serves a subscriptions/listen that asks for task status
// notifications only.
func (g *Gateway) serveTaskListen(w http.ResponseWriter, r *http.Request, req *rpcRequest, ids []string) {
	if req.protocolVersion() != r.Header.Get(mcp.HeaderProtocolVersion) {
		writeRPCError(w, req.ID, mcp.HEADER_MISMATCH, mcp.HeaderProtocolVersion+" header does not match _meta "+mcp.MetaKeyProtocolVersion, nil)
		return
	}
	principal := g.principalOf(r.Context()).Name
	var id any
	_ = json.Unmarshal(req.ID, &id)
	meta := map[string]any{mcp.MetaKeySubscriptionID: id}

	watcher := &taskWatcher{principal: principal, ids: map[string]bool{}, updates: make(chan *extTask, 64)}
	agreed := []string{}
	var now []*extTask
	for _, tid := range ids {
		if task, ok := g.xtasks.get(principal, tid); ok && !watcher.ids[tid] {
			watcher.ids[tid] = true
			agreed = append(agreed, tid)
			now = append(now, task)
		}
	}
	stop := g.xtasks.watch(watcher)
	defer stop()

	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(msg map[string]any) {
		b, err := json.Marshal(msg)
		if err != nil {
			return
		}
		_, _ = w.Write(append(append([]byte("event: message\ndata: "), b...), '\n', '\n'))
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{
		"notifications": map[string]any{"taskIds": agreed}, "_meta": meta,
	}})
	open := map[string]bool{}
	report := func(task *extTask) {
		d := g.xtasks.detailed(task, false)
		d["_meta"] = meta
		send(map[string]any{"jsonrpc": "2.0", "method": taskStatusMethod, "params": d})
		if d["status"] == taskWorking {
			open[task.id] = true
		} else {
			delete(open, task.id)
		}
	}
	for _, task := range now {
		report(task)
	}
	for len(open) > 0 {
		select {
		case task := <-watcher.updates:
			report(task)
		case <-r.Context().Done():
			return
		case <-g.xtasks.closing:
			open = nil
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(req.ID), "result": map[string]any{
		"resultType": "complete", "_meta": meta,
	}})
}
