package rigout_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
)

func setTool(name, desc string) rigout.Tool {
	return rigout.Tool{Name: name, Description: desc, Risk: rigout.Exec,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return rigout.TextResult(name), nil
		}}
}

func TestSetTools(t *testing.T) {
	gw := newGateway(t, rigout.Config{Tools: []rigout.Tool{echoTool("local_echo", nil)}})
	c := connect(t, gw)
	changed := make(chan struct{}, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed <- struct{}{}
		}
	})
	drain := func() int {
		time.Sleep(50 * time.Millisecond)
		n := 0
		for len(changed) > 0 {
			<-changed
			n++
		}
		return n
	}
	bad := setTool("d__bad", "Bad schema.")
	bad.InputSchema = json.RawMessage(`{"type":"string"}`)
	err := gw.SetTools("d__", []rigout.Tool{setTool("d__x", "X."), setTool("d__x", "X again."), bad, setTool("other", "Wrong prefix.")})
	for _, want := range []string{"d__x appears twice", "d__bad", `"other" does not begin with "d__"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SetTools error = %v, want %q", err, want)
		}
	}
	if res := callTool(t, c, "d__x", nil); res.IsError || text(res) != "d__x" {
		t.Errorf("d__x = %q", text(res))
	}
	if drain() == 0 {
		t.Error("no list_changed after adding d__x")
	}
	// The same set again changes nothing and announces nothing.
	if err := gw.SetTools("d__", []rigout.Tool{setTool("d__x", "X.")}); err != nil {
		t.Fatal(err)
	}
	if n := drain(); n != 0 {
		t.Errorf("%d list_changed for an unchanged set", n)
	}
	if err := gw.SetTools("d__", []rigout.Tool{setTool("d__y", "Y.")}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range gw.Tools() {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "local_echo,d__y" {
		t.Errorf("tools = %v", names)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "d__x"
	if res, err := c.CallTool(context.Background(), req); err == nil && !res.IsError {
		t.Error("the removed d__x still answers")
	}
	if drain() == 0 {
		t.Error("no list_changed after replacing d__x by d__y")
	}
	// The prefix belongs to the set; overlapping prefixes and names are refused.
	if err := gw.Register(setTool("d__z", "Z.")); err == nil {
		t.Error("Register took a name inside a set's prefix")
	}
	if err := gw.SetTools("d", nil); err == nil {
		t.Error("an overlapping prefix was accepted")
	}
	if err := gw.SetTools("local_", nil); err == nil {
		t.Error("a prefix over a registered tool was accepted")
	}
	gw.Close()
	if err := gw.SetTools("d__", nil); !errors.Is(err, rigout.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestHintsKeepWhatRiskDoesNotDecide(t *testing.T) {
	yes, no := true, false
	tool := setTool("hinted", "Hinted.")
	tool.Hints = &mcp.ToolAnnotation{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}
	c := connect(t, newGateway(t, rigout.Config{Tools: []rigout.Tool{tool}}))
	l, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	a := l.Tools[0].Annotations
	// Exec: not read-only and destructive, whatever the hints claim.
	if *a.ReadOnlyHint || a.DestructiveHint != nil || !*a.IdempotentHint || *a.OpenWorldHint { // destructive: the spec default, left out
		t.Errorf("annotations = %+v", a)
	}
}
