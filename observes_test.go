package rigout_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
)

// TestToolObserves: an embedder's Mutating tool whose Observes hook
// classifies a call read-only has its intent row, its done row says
// read-only, and a read-only token may make it; the other calls need the
// write scope.
func TestToolObserves(t *testing.T) {
	var ran []string
	tool := rigout.Tool{
		Name:        "store",
		Description: "get or put a value",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string"}},"required":["op"]}`),
		Risk:        rigout.Mutating,
		Observes: func(_ context.Context, call *rigout.Call) bool {
			call.State = "seen"
			return call.Args["op"] == "get"
		},
		Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			if call.State != "seen" {
				t.Errorf("the handler did not get the hook's State: %v", call.State)
			}
			ran = append(ran, call.Args["op"].(string))
			return rigout.TextResult("ok"), nil
		},
	}
	l := openLedger(t)
	ro := auth.Principal{Name: "reader", Transport: "stdio", Scopes: auth.Scopes{Tools: []string{"*"}, ReadOnly: true}}
	c := connect(t, newGateway(t, rigout.Config{Tools: []rigout.Tool{tool}, Audit: l, Principal: &ro}))
	if res := callTool(t, c, "store", map[string]any{"op": "get"}); res.IsError {
		t.Errorf("read-only token, read-only call: %s", text(res))
	}
	if res := callTool(t, c, "store", map[string]any{"op": "put"}); !res.IsError || !strings.Contains(text(res), "missing scope write") {
		t.Errorf("read-only token, writing call: %s", text(res))
	}
	if strings.Join(ran, ",") != "get" {
		t.Errorf("ran %v, want get alone", ran)
	}
	full := auth.Principal{Name: "admin", Transport: "stdio", Scopes: auth.FullScopes()}
	c2 := connect(t, newGateway(t, rigout.Config{Tools: []rigout.Tool{tool}, Audit: l, Principal: &full}))
	if res := callTool(t, c2, "store", map[string]any{"op": "put"}); res.IsError {
		t.Errorf("full token, writing call: %s", text(res))
	}
	byCall := map[string][]audit.Event{}
	for _, e := range events(t, l, audit.Filter{Tool: "store"}) {
		byCall[e.CallID] = append(byCall[e.CallID], e)
	}
	var shapes []string
	for _, rows := range byCall {
		var s []string
		for _, e := range rows {
			s = append(s, e.Principal+":"+string(e.Phase)+":"+string(e.Status)+":"+e.Detail)
		}
		shapes = append(shapes, strings.Join(s, " "))
	}
	want := map[string]bool{
		`reader:intent:started: reader:done:ok:{"class":"read-only"}`: true,
		`reader::denied:`:                      true,
		`admin:intent:started: admin:done:ok:`: true,
	}
	if len(shapes) != len(want) {
		t.Fatalf("ledger calls %q, want %d", shapes, len(want))
	}
	for _, s := range shapes {
		if !want[s] {
			t.Errorf("unexpected ledger rows %q (all: %q)", s, shapes)
		}
	}
}
