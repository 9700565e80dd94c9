package rigout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/transport"
)

// extTaskServer serves a gateway with one Tasks tool, "wait", over the
// real HTTP transport on a loopback listener, with the tasks extension in
// front of mcp-go. Its Auth names the principal from the X-Principal
// header (the test's stand-in for bearer tokens). The tool runs until its
// context ends or 20s pass, and reports on ended why it stopped.
func extTaskServer(t *testing.T) (url string, ended <-chan string) {
	t.Helper()
	stopped := make(chan string, 4)
	gw, err := rigout.New(rigout.Config{TaskAfter: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	err = gw.Register(rigout.Tool{
		Name: "wait", Description: "Waits.", Risk: rigout.ReadOnly, Tasks: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				stopped <- "cancelled"
				return rigout.ErrorResult("cancelled"), nil
			case <-time.After(20 * time.Second):
				stopped <- "finished"
				return rigout.TextResult("waited"), nil
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	principal := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := auth.Principal{Name: r.Header.Get("X-Principal"), Transport: auth.TransportHTTP, Scopes: auth.FullScopes()}
			next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), p)))
		})
	}
	h, err := transport.NewHTTP(gw.MCPServer(), transport.HTTPConfig{
		Auth: func(next http.Handler) http.Handler { return principal(gw.TasksHTTP(next)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ts := httptest.NewServer(h.Handler())
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", stopped
}

// extPost sends one 2026-07-28 request as principal who, declaring the
// tasks extension unless who ends in "/noext", and returns the HTTP status
// and the JSON-RPC answer.
func extPost(t *testing.T, url, who, method, name string, params map[string]any) (int, map[string]any) {
	t.Helper()
	caps := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	if w, ok := strings.CutSuffix(who, "/noext"); ok {
		who, caps = w, map[string]any{}
	}
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "ext-test", "version": "1"},
		mcp.MetaKeyClientCapabilities: caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, method)
	req.Header.Set(mcp.HeaderName, name)
	req.Header.Set("X-Principal", who)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: HTTP %d, not JSON: %s", method, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// TestTasksExtensionBoundToPrincipal: a task belongs to the principal that
// created it. Another principal's tasks/get and tasks/cancel hear what an
// unknown task ID hears (-32602, HTTP 400) and leave the task running, as
// does the owner's own request without the extension (-32021, with the
// missing capability in the error's data); the owner's tasks/cancel ends
// the call's context.
func TestTasksExtensionBoundToPrincipal(t *testing.T) {
	url, ended := extTaskServer(t)
	_, r := extPost(t, url, "alice", "tools/call", "wait", map[string]any{"name": "wait", "arguments": map[string]any{}})
	res, _ := r["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("the call did not become a task: %v", r)
	}
	tests := []struct {
		who, method string
		wantStatus  int
		wantCode    float64 // 0: a result
	}{
		{"bob", "tasks/get", 400, -32602},
		{"bob", "tasks/cancel", 400, -32602},
		{"bob", "tasks/update", 400, -32602},
		{"alice/noext", "tasks/get", 400, -32021},
		{"alice/noext", "tasks/cancel", 400, -32021},
		{"alice", "tasks/get", 200, 0},
		{"alice", "tasks/cancel", 200, 0},
	}
	for _, tt := range tests {
		status, r := extPost(t, url, tt.who, tt.method, id, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
		e, _ := r["error"].(map[string]any)
		code, _ := e["code"].(float64)
		if status != tt.wantStatus || code != tt.wantCode {
			t.Errorf("%s %s: HTTP %d %v, want HTTP %d code %v", tt.who, tt.method, status, r, tt.wantStatus, tt.wantCode)
		}
		if code == -32021 {
			data, _ := e["data"].(map[string]any)
			req, _ := data["requiredCapabilities"].(map[string]any)
			ext, _ := req["extensions"].(map[string]any)
			if _, ok := ext["io.modelcontextprotocol/tasks"]; !ok {
				t.Errorf("%s %s: -32021 without data.requiredCapabilities.extensions: %v", tt.who, tt.method, r)
			}
		}
		if tt.who != "alice" {
			select {
			case why := <-ended:
				t.Fatalf("the call ended (%s) after %s's %s", why, tt.who, tt.method)
			default:
			}
		}
	}
	select {
	case why := <-ended:
		if why != "cancelled" {
			t.Errorf("the call ended by %s, want cancelled", why)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call still runs 5s after its owner's tasks/cancel")
	}
	_, r = extPost(t, url, "alice", "tasks/get", id, map[string]any{"taskId": id})
	if res, _ := r["result"].(map[string]any); res["status"] != "cancelled" {
		t.Errorf("tasks/get after cancel: %v", r)
	}
}
