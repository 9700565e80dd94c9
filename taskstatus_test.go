package rigout_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// listen opens a 2026-07-28 subscriptions/listen stream as who for the
// tasks ids, with request ID listenID, and returns a function reading its
// next JSON-RPC message (nil when the stream ended).
func listen(t *testing.T, url, who string, listenID int, ids []string) func() map[string]any {
	t.Helper()
	params := map[string]any{
		"notifications": map[string]any{"taskIds": ids},
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "ext-test", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": listenID, "method": "subscriptions/listen", "params": params})
	// A stream that never says what it should ends the test, not hangs it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, "subscriptions/listen")
	req.Header.Set("X-Principal", who)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("listen: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(resp.Body)
	return func() map[string]any {
		t.Helper()
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return nil
			}
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatalf("listen stream: %q: %v", data, err)
				}
				return m
			}
		}
	}
}

// params returns a message's params and the subscription ID they carry.
func paramsOf(m map[string]any) (map[string]any, any) {
	p, _ := m["params"].(map[string]any)
	meta, _ := p["_meta"].(map[string]any)
	return p, meta[mcp.MetaKeySubscriptionID]
}

// TestTaskStatusNotifications: a client that listens for its tasks hears
// the listen acknowledged with the IDs it may follow (its own: not another
// principal's, not an unknown one), the task's state at once, and its
// change to cancelled when it is cancelled, every message tagged with the
// listen's ID; the stream ends once the task has ended. Another principal
// listening for the same task is acknowledged with no task and hears
// nothing of it.
func TestTaskStatusNotifications(t *testing.T) {
	url, ended := extTaskServer(t)
	_, r := extPost(t, url, "alice", "tools/call", "wait", map[string]any{"name": "wait", "arguments": map[string]any{}})
	res, _ := r["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("the call did not become a task: %v", r)
	}

	bob := listen(t, url, "bob", 8, []string{id})
	ack := bob()
	p, sub := paramsOf(ack)
	n, _ := p["notifications"].(map[string]any)
	if ack["method"] != "notifications/subscriptions/acknowledged" || sub != float64(8) || len(n["taskIds"].([]any)) != 0 {
		t.Errorf("bob's acknowledgement: %v", ack)
	}
	if m := bob(); m == nil || m["id"] != float64(8) || m["result"] == nil {
		t.Errorf("bob's stream, following nothing, should end with its result: %v", m)
	}
	if m := bob(); m != nil {
		t.Errorf("bob heard more: %v", m)
	}

	next := listen(t, url, "alice", 7, []string{"no-such-task", id})
	ack = next()
	p, sub = paramsOf(ack)
	n, _ = p["notifications"].(map[string]any)
	var agreed []string
	for _, v := range n["taskIds"].([]any) {
		agreed = append(agreed, v.(string))
	}
	if ack["method"] != "notifications/subscriptions/acknowledged" || sub != float64(7) || !slices.Equal(agreed, []string{id}) {
		t.Fatalf("acknowledgement: %v, want taskIds [%s] and subscription 7", ack, id)
	}
	for _, want := range []string{"working", "cancelled"} {
		if want == "cancelled" {
			if status, r := extPost(t, url, "alice", "tasks/cancel", id, map[string]any{"taskId": id}); status != 200 {
				t.Fatalf("tasks/cancel: %d %v", status, r)
			}
		}
		m := next()
		p, sub := paramsOf(m)
		if m["method"] != "notifications/tasks" || p["taskId"] != id || p["status"] != want || sub != float64(7) {
			t.Fatalf("want notifications/tasks %s for %s on subscription 7, got %v", want, id, m)
		}
	}
	if got := <-ended; got != "cancelled" {
		t.Errorf("the call %s", got)
	}
	if m := next(); m == nil || m["id"] != float64(7) || m["result"] == nil {
		t.Errorf("the stream should end with its result once the task ended: %v", m)
	}
}
