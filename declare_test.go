package rigout_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/redact"
)

// copyTool is a tool whose hosts are source_host and destination_host: the
// chain must check both, though neither is called "host".
func copyTool(ran *atomic.Int64) rigout.Tool {
	return rigout.Tool{
		Name:        "copy_between",
		Description: "Copy a file between hosts.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"source_host":{"type":"string"},"destination_host":{"type":"string"},"path":{"type":"string"}},"required":["source_host","destination_host"],"additionalProperties":false}`),
		Risk:        rigout.Mutating,
		Hosts:       []rigout.HostArg{{Name: "source_host"}, {Name: "destination_host"}},
		Paths:       []rigout.PathArg{{Name: "path"}},
		Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			ran.Add(1)
			return rigout.TextResult("copied between " + strings.Join(call.Hosts(), " and ")), nil
		},
	}
}

func TestDeclaredHostArgumentsAreScoped(t *testing.T) {
	var ran atomic.Int64
	l := openLedger(t)
	p := auth.Principal{Name: "web-only", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"web*"}, Roots: []string{"/srv/app"}}}
	c := connect(t, newGateway(t, rigout.Config{Audit: l, Principal: &p, Tools: []rigout.Tool{copyTool(&ran)}}))

	res := callTool(t, c, "copy_between", map[string]any{"source_host": "web1", "destination_host": "web2"})
	if res.IsError || text(res) != "copied between web1 and web2" {
		t.Fatalf("in scope: %q", text(res))
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"destination outside", map[string]any{"source_host": "web1", "destination_host": "db1"}, "missing scope hosts:db1"},
		{"source outside", map[string]any{"source_host": "db1", "destination_host": "web1"}, "missing scope hosts:db1"},
		{"path outside roots", map[string]any{"source_host": "web1", "destination_host": "web2", "path": "/srv/app-evil/x"}, "missing scope roots:/srv/app-evil/x"},
		{"dotdot out of roots", map[string]any{"source_host": "web1", "destination_host": "web2", "path": "/srv/app/../etc"}, "missing scope roots:/srv/etc"},
		{"relative path under roots", map[string]any{"source_host": "web1", "destination_host": "web2", "path": "x"}, "is relative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := ran.Load()
			res := callTool(t, c, "copy_between", tt.args)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("result = %q, want %q", text(res), tt.want)
			}
			if ran.Load() != before {
				t.Error("the handler ran")
			}
		})
	}
	rows := events(t, l, audit.Filter{Type: audit.TypeToolDenied})
	if len(rows) != 4 || rows[0].Host != "web1,db1" || rows[1].Host != "db1,web1" || rows[2].Host != "web1,web2" {
		t.Errorf("denied rows = %+v", rows)
	}
}

func TestRegistrationRefusesUndeclaredHosts(t *testing.T) {
	gw := newGateway(t, rigout.Config{})
	var ran atomic.Int64
	tool := copyTool(&ran)
	tool.Hosts = tool.Hosts[:1] // destination_host undeclared
	if err := gw.Register(tool); err == nil || !strings.Contains(err.Error(), `"destination_host" names a host but is not declared`) {
		t.Errorf("Register = %v", err)
	}
	tool = copyTool(&ran)
	tool.Paths = []rigout.PathArg{{Name: "no_such_argument"}}
	if err := gw.Register(tool); err == nil {
		t.Error("a declared path argument missing from the schema was accepted")
	}
	tool = copyTool(&ran)
	tool.Action, tool.Actions = "mode", map[string]rigout.Risk{"x": rigout.ReadOnly}
	if err := gw.Register(tool); err == nil {
		t.Error("an action argument missing from the schema was accepted")
	}
}

// actionTool has a read-only action and a mutating one.
func actionTool(ran *atomic.Int64) rigout.Tool {
	return rigout.Tool{
		Name:        "thing",
		Description: "Look at or change a thing.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"force":{"type":"boolean"}},"required":["action"]}`),
		Action:      "action",
		Actions:     map[string]rigout.Risk{"look": rigout.ReadOnly, "change": rigout.Mutating},
		Needs:       []rigout.Need{{Capability: rigout.Terminals, When: "force", Actions: []string{"change"}}},
		Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			ran.Add(1)
			return rigout.TextResult(call.Action() + " as " + call.Risk().String()), nil
		},
	}
}

func TestRiskPerAction(t *testing.T) {
	var ran atomic.Int64
	l := openLedger(t)
	ro := auth.Principal{Name: "reader", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}}
	gw := newGateway(t, rigout.Config{Audit: l, Principal: &ro, Tools: []rigout.Tool{actionTool(&ran)}})
	if tl := gw.Tools(); tl[0].Risk != rigout.Mutating {
		t.Errorf("tool risk = %s, want the riskiest action's", tl[0].Risk)
	}
	c := connect(t, gw)
	if res := callTool(t, c, "thing", map[string]any{"action": "look"}); res.IsError || text(res) != "look as read-only" {
		t.Errorf("read-only action: %q", text(res))
	}
	if res := callTool(t, c, "thing", map[string]any{"action": "change"}); !res.IsError || !strings.Contains(text(res), "missing scope write") {
		t.Errorf("mutating action by a read-only token: %q", text(res))
	}
	if res := callTool(t, c, "thing", map[string]any{"action": "explode"}); !res.IsError || !strings.Contains(text(res), `unknown action "explode"`) {
		t.Errorf("unknown action: %q", text(res))
	}
	if ran.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", ran.Load())
	}
	// The read-only action wrote its intent and done rows; the refused
	// ones, one row each.
	rows := events(t, l, audit.Filter{Tool: "thing"})
	if len(rows) != 4 || rows[0].Phase != audit.PhaseIntent || rows[1].Phase != audit.PhaseDone || rows[2].Type != audit.TypeToolDenied || rows[3].Status != audit.StatusInvalid {
		t.Errorf("rows = %+v", rows)
	}

	// A capability needed only by one action, only when an argument is set.
	rw := auth.Principal{Name: "writer", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}}}
	c = connect(t, newGateway(t, rigout.Config{Principal: &rw, Tools: []rigout.Tool{actionTool(&ran)}}))
	if res := callTool(t, c, "thing", map[string]any{"action": "change"}); res.IsError {
		t.Errorf("change without force: %q", text(res))
	}
	if res := callTool(t, c, "thing", map[string]any{"action": "change", "force": true}); !res.IsError || !strings.Contains(text(res), "missing scope terminals") {
		t.Errorf("change with force, no terminals scope: %q", text(res))
	}
	if res := callTool(t, c, "thing", map[string]any{"action": "look", "force": true}); res.IsError {
		t.Errorf("look with force: %q", text(res))
	}
}

// execTool stands for any tool that runs something.
func execTool(name string) rigout.Tool {
	return rigout.Tool{
		Name: name, Description: "Runs something.", Risk: rigout.Exec,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"host":{"type":"string"}}}`),
		Hosts:       []rigout.HostArg{{Name: "host"}},
		DefaultHost: "local",
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return rigout.TextResult("ran"), nil
		},
	}
}

func TestRateLimitPerPrincipal(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	l := openLedger(t)
	cfg := rigout.Config{
		Audit:     l,
		RateLimit: rigout.RateLimits{PerPrincipal: rigout.Rate{Calls: 5, Per: time.Minute}},
		Tools:     []rigout.Tool{execTool("run"), echoTool("echo", nil)},
		Now:       func() time.Time { return time.Unix(0, clock.Load()) },
	}
	alice := auth.Principal{Name: "alice", Scopes: auth.FullScopes()}
	bob := auth.Principal{Name: "bob", Scopes: auth.FullScopes()}
	gw := newGateway(t, cfg)
	c := connect(t, gw)
	call := func(who auth.Principal, tool string) *mcp.CallToolResult {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name = tool
		if tool == "echo" {
			req.Params.Arguments = map[string]any{"msg": "hi"}
		}
		res, err := c.CallTool(auth.NewContext(context.Background(), who), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range 5 {
		if res := call(alice, "run"); res.IsError {
			t.Fatalf("call %d refused: %q", i+1, text(res))
		}
	}
	res := call(alice, "run")
	if !res.IsError || !strings.Contains(text(res), "rate limited: principal alice may start 5 a minute") || !strings.Contains(text(res), "retry in 12s") {
		t.Errorf("sixth call: %q", text(res))
	}
	if res := call(alice, "echo"); res.IsError {
		t.Errorf("a read-only call was rate limited: %q", text(res))
	}
	if res := call(bob, "run"); res.IsError {
		t.Errorf("another principal was limited: %q", text(res))
	}
	clock.Add(int64(12 * time.Second))
	if res := call(alice, "run"); res.IsError {
		t.Errorf("after the retry time: %q", text(res))
	}
	rows := events(t, l, audit.Filter{Status: audit.StatusLimited})
	if len(rows) != 1 || rows[0].Principal != "alice" {
		t.Errorf("limited rows = %+v", rows)
	}
}

func TestRateLimitPerHost(t *testing.T) {
	gw := newGateway(t, rigout.Config{
		RateLimit: rigout.RateLimits{PerHost: rigout.Rate{Calls: 2, Per: time.Hour}},
		Tools:     []rigout.Tool{execTool("run")},
	})
	c := connect(t, gw)
	for range 2 {
		callTool(t, c, "run", map[string]any{"host": "web1"})
	}
	if res := callTool(t, c, "run", map[string]any{"host": "web1"}); !res.IsError || !strings.Contains(text(res), "host web1 may start 2 an hour") {
		t.Errorf("third call to web1: %q", text(res))
	}
	if res := callTool(t, c, "run", map[string]any{"host": "web2"}); res.IsError {
		t.Errorf("web2 limited by web1's bucket: %q", text(res))
	}
	if _, err := rigout.New(rigout.Config{RateLimit: rigout.RateLimits{PerHost: rigout.Rate{Calls: -1}}}); err == nil {
		t.Error("a negative rate was accepted")
	}
}

func TestPanickingMutatingToolLeavesItsDoneRow(t *testing.T) {
	l := openLedger(t)
	boom := rigout.Tool{
		Name: "boom", Description: "Changes something, then panics.", Risk: rigout.Mutating,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) { panic("kaboom") },
	}
	c := connect(t, newGateway(t, rigout.Config{Audit: l, Tools: []rigout.Tool{boom}}))
	res := callTool(t, c, "boom", nil)
	if !res.IsError || !strings.Contains(text(res), "internal error in boom") {
		t.Errorf("result = %q", text(res))
	}
	rows := events(t, l, audit.Filter{Tool: "boom"})
	if len(rows) != 2 || rows[0].Phase != audit.PhaseIntent || rows[1].Phase != audit.PhaseDone ||
		rows[1].Status != audit.StatusError || rows[1].CallID != rows[0].CallID {
		t.Fatalf("rows = %+v", rows)
	}
	if rep, err := l.Verify(context.Background()); err != nil || !rep.OK() {
		t.Errorf("chain does not verify: %+v %v", rep, err)
	}
}

func TestAuthEventsKeepTheirMeaning(t *testing.T) {
	l := openLedger(t)
	gw := newGateway(t, rigout.Config{Audit: l})
	tests := []struct {
		typ  auth.EventType
		want audit.Status
	}{
		{auth.EventGrant, audit.StatusOK},
		{auth.EventConsent, audit.StatusOK},
		{auth.EventSetupUsed, audit.StatusOK},
		{auth.EventRefresh, audit.StatusOK},
		{auth.EventRegister, audit.StatusOK},
		{auth.EventRevoke, audit.StatusOK},
		{auth.EventDenied, audit.StatusDenied},
		{auth.EventThrottled, audit.StatusDenied},
		{auth.EventRejected, audit.StatusDenied},
	}
	for _, tt := range tests {
		gw.RecordAuthEvent(context.Background(), auth.Event{Type: tt.typ, ClientID: "claude", RemoteAddr: "127.0.0.1:9"})
	}
	rows := events(t, l, audit.Filter{})
	if len(rows) != len(tests) {
		t.Fatalf("rows = %d, want %d", len(rows), len(tests))
	}
	for i, tt := range tests {
		if rows[i].Status != tt.want {
			t.Errorf("%s recorded as %s, want %s", tt.typ, rows[i].Status, tt.want)
		}
	}
	if rows[0].Type != "oauth.grant" || rows[6].Type != audit.TypeAuthFailed {
		t.Errorf("types = %s, %s", rows[0].Type, rows[6].Type)
	}
}

func TestConfigIsCopied(t *testing.T) {
	p := auth.Principal{Name: "narrow", Scopes: auth.Scopes{Tools: []string{"echo"}, Hosts: []string{"local"}}}
	tools := []rigout.Tool{echoTool("echo", nil), execTool("run")}
	cfg := rigout.Config{Principal: &p, Tools: tools}
	gw := newGateway(t, cfg)
	// Changing what the caller passed, or what Config returns, changes nothing.
	p.Scopes.Tools[0] = "*"
	p.Name = "changed"
	tools[0].Description = "changed"
	got := gw.Config()
	got.Principal.Scopes.Tools[0] = "*"
	got.Tools[0].Description = "changed again"
	c := connect(t, gw)
	if res := callTool(t, c, "run", nil); !res.IsError || !strings.Contains(text(res), "missing scope tools:run") {
		t.Errorf("the principal's scopes changed after New: %q", text(res))
	}
	if d := gw.Config().Tools[0].Description; d != "Echo the message." {
		t.Errorf("tool description = %q", d)
	}
	if n := gw.Config().Principal.Name; n != "narrow" {
		t.Errorf("principal = %q", n)
	}
}

func TestKnownSecretsAreMaskedEverywhere(t *testing.T) {
	const secret = "s3cr3t-gateway-token-value"
	set, err := redact.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	leaky := rigout.Tool{
		Name: "leaky", Description: "Shows what it should not.", Risk: rigout.Mutating,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			enc := base64.StdEncoding.EncodeToString([]byte("prefix " + secret + " suffix"))
			res := rigout.ErrorResult("plain %s, encoded %s, hex %x", secret, enc, secret)
			res.StructuredContent = map[string]any{"out": []any{"x " + secret}, "n": 1}
			return res, nil
		},
	}
	l := openLedger(t)
	c := connect(t, newGateway(t, rigout.Config{Audit: l, Secrets: set, Tools: []rigout.Tool{leaky}}))
	res := callTool(t, c, "leaky", nil)
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), secret) || strings.Contains(string(b), hex.EncodeToString([]byte(secret))) {
		t.Errorf("the result shows the secret: %s", b)
	}
	enc := base64.StdEncoding.EncodeToString([]byte("prefix " + secret + " suffix"))
	if strings.Contains(string(b), enc) {
		t.Errorf("the result shows the secret in base64: %s", b)
	}
	if !strings.Contains(text(res), "plain ***") {
		t.Errorf("text = %q", text(res))
	}
	for _, e := range events(t, l, audit.Filter{Tool: "leaky"}) {
		if strings.Contains(e.Error, secret) {
			t.Errorf("the ledger holds the secret: %+v", e)
		}
	}
}
