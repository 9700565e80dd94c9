package shell_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/validate"
)

// person answers elicitation requests as a person at the client would.
type person struct {
	answer   mcp.ElicitationResponseAction
	confirm  bool
	asked    atomic.Int64
	question atomic.Value
}

func (p *person) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.asked.Add(1)
	p.question.Store(req.Params.Message)
	res := &mcp.ElicitationResult{}
	res.Action = p.answer
	if p.answer == mcp.ElicitationResponseActionAccept {
		res.Content = map[string]any{"confirm": p.confirm}
	}
	return res, nil
}

// connectWithPerson returns a client that declares elicitation and lets p
// answer, over the 2025-11-25 handshake (mcp-go relays the gateway's input
// request as elicitation/create).
func connectWithPerson(t *testing.T, gw *rigout.Gateway, p *person) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClientWithOptions(gw.MCPServer(), client.WithElicitationHandler(p))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// interactive is a principal whose client the operator declared a
// person's own interactive client, without the bypass scope.
func interactive() *auth.Principal {
	return &auth.Principal{Name: "person", Transport: "in-process",
		Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, InteractiveClient: true}}
}

func TestConfirmRuleAsksThePerson(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	pol := &validate.Policy{Rules: map[string]validate.Action{validate.RuleSudo: validate.Confirm}}
	// sudo -V only prints its version; the rule holds back any sudo.
	args := map[string]any{"command": "sudo -V >/dev/null 2>&1; touch " + sentinel}

	tests := []struct {
		name    string
		answer  mcp.ElicitationResponseAction
		confirm bool
		runs    bool
		want    string
	}{
		{"accepted", mcp.ElicitationResponseActionAccept, true, true, ""},
		{"unchecked", mcp.ElicitationResponseActionAccept, false, false, "did not approve"},
		{"declined", mcp.ElicitationResponseActionDecline, false, false, "did not approve"},
		{"cancelled", mcp.ElicitationResponseActionCancel, false, false, "did not approve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(sentinel)
			l := openLedger(t)
			p := &person{answer: tt.answer, confirm: tt.confirm}
			c := connectWithPerson(t, newGateway(t, setup{Config: rigout.Config{Audit: l, Principal: interactive()}, Policy: pol}), p)
			res := callTool(t, c, "execute_command", args)
			if p.asked.Load() != 1 || !strings.Contains(p.question.Load().(string), "rule sudo") {
				t.Fatalf("person asked %d times: %v", p.asked.Load(), p.question.Load())
			}
			_, err := os.Stat(sentinel)
			if ran := err == nil; ran != tt.runs {
				t.Fatalf("command ran = %v, want %v (result %q)", ran, tt.runs, text(res))
			}
			if tt.want != "" && (!res.IsError || !strings.Contains(text(res), tt.want)) {
				t.Errorf("result = %q", text(res))
			}
			var decisions []string
			for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
				if e.Phase == audit.PhaseDone {
					decisions = append(decisions, string(e.Decision)+"/"+string(e.Status))
				}
			}
			want := "confirm/awaiting-confirmation,declined/denied"
			if tt.runs {
				want = "confirm/awaiting-confirmation,confirmed/ok"
			}
			if strings.Join(decisions, ",") != want {
				t.Errorf("ledger decisions = %v, want %s", decisions, want)
			}
		})
	}
}

func TestConfirmNeedsAClientThatCanAsk(t *testing.T) {
	pol := &validate.Policy{Rules: map[string]validate.Action{validate.RuleSudo: validate.Confirm}}
	c := connect(t, newGateway(t, setup{Policy: pol}))
	res := callTool(t, c, "execute_command", map[string]any{"command": "sudo -V"})
	if !res.IsError || !strings.Contains(text(res), "cannot be asked") {
		t.Errorf("confirm without elicitation: %q", text(res))
	}
}

// TestBypassIsNeverPutToTheClient: a token without the bypass scope that
// sets bypass_security is refused, even when its client is a person's own
// interactive client that would approve: a bypass is the operator's.
func TestBypassIsNeverPutToTheClient(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	p := &person{answer: mcp.ElicitationResponseActionAccept, confirm: true}
	l := openLedger(t)
	c := connectWithPerson(t, newGateway(t, setup{Config: rigout.Config{Audit: l, Principal: interactive()}}), p)
	res := callTool(t, c, "execute_command", bypassed(sentinel))
	if !res.IsError || p.asked.Load() != 0 || !strings.Contains(text(res), "ask_bypass") {
		t.Fatalf("bypass without the scope: asked %d, %q", p.asked.Load(), text(res))
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("the bypass ran on the client's word")
	}
	for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
		if e.Phase == audit.PhaseDone && (e.Status != audit.StatusDenied || e.Bypassed) {
			t.Errorf("done row %s/%s bypassed=%v, want denied", e.Decision, e.Status, e.Bypassed)
		}
	}
}

// TestConfirmOverModernHTTP runs the confirmation over streamable HTTP with
// protocol 2026-07-28, where the client answers the input request and
// retries the call itself.
func TestConfirmOverModernHTTP(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	pol := &validate.Policy{Rules: map[string]validate.Action{validate.RuleSudo: validate.Confirm}}
	gw := newGateway(t, setup{Policy: pol, Config: rigout.Config{Principal: interactive()}})
	url := serveHTTP(t, gw)
	ctx := context.Background()

	p := &person{answer: mcp.ElicitationResponseActionAccept, confirm: true}
	tr, err := mcptransport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithElicitationHandler(p))
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	res := callTool(t, c, "execute_command", map[string]any{"command": "sudo -V >/dev/null 2>&1; touch " + sentinel})
	if res.IsError || p.asked.Load() != 1 {
		t.Fatalf("asked %d: %q", p.asked.Load(), text(res))
	}
	if _, err := os.Stat(sentinel); err != nil {
		t.Error("confirmed command did not run")
	}
}
