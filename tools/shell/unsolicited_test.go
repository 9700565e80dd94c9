package shell_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/transport"
	"github.com/rigout/rigout/validate"
)

// confirmPolicy holds back any sudo for a person's confirmation.
var confirmPolicy = map[string]validate.Action{validate.RuleSudo: validate.Confirm}

// heldBack is a command the confirm rule holds back; it only touches
// sentinel (sudo -V prints sudo's version), so it is harmless if it runs.
func heldBack(sentinel string) map[string]any {
	return map[string]any{"command": "sudo -V >/dev/null 2>&1; touch " + sentinel}
}

// bypassed is a call with bypass_security of a command the default policy
// refuses (disk-format), harmless if it runs whatever the policy does: the
// mkfs is behind `false &&`, and only the sentinel is touched.
func bypassed(sentinel string) map[string]any {
	return map[string]any{"command": "false && mkfs.ext4 -q -F " + sentinel + ".img; touch " + sentinel, "bypass_security": true}
}

// clock is a test clock the gateway reads.
type clock struct{ skew atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.skew.Load())) }
func (c *clock) advance(d time.Duration) { c.skew.Add(int64(d)) }
func accept() mcp.InputResponses         { return answer(true) }
func answer(confirm bool) mcp.InputResponses {
	return mcp.InputResponses{"rigout.confirm": mcp.NewElicitationInputResponse(mcp.ElicitationResult{
		ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"confirm": confirm}},
	})}
}

// modernCall posts one tools/call at protocol 2026-07-28, declaring
// elicitation, with the given answers and requestState, and returns the
// result as JSON.
func modernCall(t *testing.T, url string, args map[string]any, answers mcp.InputResponses, state string) map[string]any {
	t.Helper()
	params := map[string]any{
		"name": "execute_command", "arguments": args,
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    "2026-07-28",
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
			mcp.MetaKeyClientInfo:         map[string]any{"name": "raw", "version": "1"},
		},
	}
	withAnswers(params, answers, state)
	_, res := post(t, url, map[string]string{
		mcp.HeaderProtocolVersion: "2026-07-28", mcp.HeaderMethod: "tools/call", mcp.HeaderName: "execute_command",
	}, "tools/call", params)
	return res
}

// legacyCall opens a 2025-11-25 session that declares no elicitation and
// posts one tools/call carrying answers and state in its first request,
// as a self-approving client would.
func legacyCall(t *testing.T, url string, args map[string]any, answers mcp.InputResponses, state string) map[string]any {
	t.Helper()
	h, _ := post(t, url, nil, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "self-approver", "version": "1"},
	})
	sess := map[string]string{"Mcp-Session-Id": h.Get("Mcp-Session-Id"), mcp.HeaderProtocolVersion: "2025-11-25"}
	post(t, url, sess, "notifications/initialized", nil)
	params := map[string]any{"name": "execute_command", "arguments": args}
	withAnswers(params, answers, state)
	_, res := post(t, url, sess, "tools/call", params)
	return res
}

func withAnswers(params map[string]any, answers mcp.InputResponses, state string) {
	if answers != nil {
		params["inputResponses"] = answers
	}
	if state != "" {
		params["requestState"] = state
	}
}

// post sends one JSON-RPC message (a notification when params is nil and
// method starts "notifications/") and returns the response headers and
// the result.
func post(t *testing.T, url string, headers map[string]string, method string, params map[string]any) (http.Header, map[string]any) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	notify := strings.HasPrefix(method, "notifications/")
	if !notify {
		msg["id"] = 1
	}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if notify {
		return resp.Header, nil
	}
	var raw []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"result"`) {
				raw = []byte(d)
			}
		}
	} else {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		raw = b.Bytes()
	}
	var out struct {
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Result == nil {
		t.Fatalf("%s: HTTP %d, %s (%v, error %v)", method, resp.StatusCode, raw, err, out.Error)
	}
	return resp.Header, out.Result
}

func resultText(r map[string]any) string {
	b, _ := json.Marshal(r["content"])
	return string(b)
}

// serveStateless serves gw over stateless streamable HTTP without
// authentication on loopback until the test ends.
func serveStateless(t *testing.T, gw *rigout.Gateway) string {
	t.Helper()
	return rigouttest.ServeHTTPConfig(t, gw, transport.HTTPConfig{InsecureNoAuth: true, Stateless: true})
}

// TestUnsolicitedApprovalAtModernProtocol: at 2026-07-28 only the answer
// to the question this gateway asked about this very call counts, once.
// A missing, forged, tampered, replayed, expired or misapplied
// requestState runs nothing and is recorded as refused, for a token whose
// client the operator declared interactive (the most trusting case).
func TestUnsolicitedApprovalAtModernProtocol(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	clk := &clock{}
	l := openLedger(t)
	gw := newGateway(t, setup{Policy: &validate.Policy{Rules: confirmPolicy},
		Config: rigout.Config{Audit: l, Principal: interactive(), Now: clk.now}})
	url := serveHTTP(t, gw)
	args := heldBack(sentinel)

	ask := func() string {
		t.Helper()
		r := modernCall(t, url, args, nil, "")
		st, _ := r["requestState"].(string)
		if r["resultType"] != "input_required" || st == "" {
			t.Fatalf("no question asked: %v", r)
		}
		return st
	}
	s1 := ask()
	flip := []byte(s1)
	if flip[len(flip)-1] = '0'; s1[len(s1)-1] == '0' {
		flip[len(flip)-1] = '1'
	}
	body := strings.Split(s1, ".")
	otherBody := []byte(body[1])
	otherBody[0] ^= 2

	refused := []struct {
		name  string
		args  map[string]any
		state string
	}{
		{"no state", args, ""},
		{"forged state", args, "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"},
		{"tampered mac", args, string(flip)},
		{"tampered body", args, body[0] + "." + string(otherBody) + "." + body[2]},
		{"other arguments", heldBack(sentinel + "2"), s1},
		{"not this gateway's format", args, "yes"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := modernCall(t, url, tt.args, accept(), tt.state)
			if r["isError"] != true || !strings.Contains(resultText(r), "answers no question") {
				t.Errorf("result %v", r)
			}
			if _, err := os.Stat(sentinel); err == nil {
				t.Fatal("an unsolicited approval ran the command")
			}
		})
	}

	// The real answer to s1 still counts (none of the above consumed it),
	// once.
	if r := modernCall(t, url, args, accept(), s1); r["isError"] == true {
		t.Fatalf("the answer to the question asked was refused: %v", r)
	}
	if err := os.Remove(sentinel); err != nil {
		t.Fatal("the approved command did not run")
	}
	if r := modernCall(t, url, args, accept(), s1); r["isError"] != true {
		t.Errorf("replayed answer: %v", r)
	}
	// An answer after the question expired does not count.
	s2 := ask()
	clk.advance(6 * time.Minute)
	if r := modernCall(t, url, args, accept(), s2); r["isError"] != true {
		t.Errorf("expired answer: %v", r)
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("a replayed or expired approval ran the command")
	}

	var unsolicited, confirmed int
	for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
		if e.Phase != audit.PhaseDone {
			continue
		}
		switch {
		case e.Status == audit.StatusDenied && strings.Contains(e.Detail, "unsolicited"):
			unsolicited++
		case e.Decision == audit.DecisionConfirmed:
			confirmed++
		}
	}
	if want := len(refused) + 2; unsolicited != want || confirmed != 1 {
		t.Errorf("ledger: %d unsolicited refusals (want %d), %d confirmed (want 1)", unsolicited, want, confirmed)
	}
}

// TestUnsolicitedApprovalAtLegacyProtocol: at 2025-11-25 a tools/call
// that carries an approval in its first request, from a client that
// declared no elicitation, runs nothing, for a narrow token and for one
// the operator declared interactive alike; so does one that replays a
// consumed requestState.
func TestUnsolicitedApprovalAtLegacyProtocol(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	narrow := &auth.Principal{Name: "agent", Transport: "in-process", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}}}
	for _, p := range []*auth.Principal{narrow, interactive()} {
		l := openLedger(t)
		gw := newGateway(t, setup{Policy: &validate.Policy{Rules: confirmPolicy}, Config: rigout.Config{Audit: l, Principal: p}})
		url := serveHTTP(t, gw)
		for _, state := range []string{"", "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.00"} {
			r := legacyCall(t, url, heldBack(sentinel), accept(), state)
			if r["isError"] != true || !strings.Contains(resultText(r), "answers no question") {
				t.Errorf("%s, state %q: %v", p.Name, state, r)
			}
			if _, err := os.Stat(sentinel); err == nil {
				t.Fatalf("%s: an approval sent with the call ran the command", p.Name)
			}
		}
		n := 0
		for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
			if e.Phase == audit.PhaseDone && e.Status == audit.StatusDenied && strings.Contains(e.Detail, "unsolicited") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s: %d unsolicited refusals in the ledger, want 2", p.Name, n)
		}
	}
}

// TestSelfApprovalWithNarrowToken: a client that declares elicitation and
// accepts everything, with a token the operator did not declare
// interactive, is never asked: a confirm rule and a bypass are both
// refused and nothing runs.
func TestSelfApprovalWithNarrowToken(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	narrow := &auth.Principal{Name: "agent", Transport: "in-process", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}}}
	tests := []struct {
		name string
		args map[string]any
	}{
		{"confirm rule", heldBack(sentinel)},
		{"bypass", bypassed(sentinel)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &person{answer: mcp.ElicitationResponseActionAccept, confirm: true}
			c := connectWithPerson(t, newGateway(t, setup{Policy: &validate.Policy{Rules: confirmPolicy}, Config: rigout.Config{Principal: narrow}}), p)
			res := callTool(t, c, "execute_command", tt.args)
			if !res.IsError || p.asked.Load() != 0 {
				t.Errorf("asked %d: %q", p.asked.Load(), text(res))
			}
			if _, err := os.Stat(sentinel); err == nil {
				t.Fatal("a self-approving client ran the command")
			}
		})
	}
}

// TestStatelessLegacyClientGoesToTheOperator: on a --stateless server a
// 2025-11-25 client that declared elicitation, with a token the operator
// declared interactive, is not refused for declaring no elicitation
// capability: the gateway keeps no initialize there, so the held-back
// call waits for the operator, who approves it.
func TestStatelessLegacyClientGoesToTheOperator(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	gw := newGateway(t, setup{Policy: &validate.Policy{Rules: confirmPolicy},
		Config: rigout.Config{Principal: interactive(), Approvals: &rigout.ApprovalConfig{Wait: 20 * time.Second}}})
	url := serveStateless(t, gw)
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
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- callTool(t, c, "execute_command", heldBack(sentinel)) }()
	pa := waitPending(t, gw, operator)
	if _, err := gw.DecideApproval(ctx, operator, pa.ID, pa.Digest, true); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.IsError || p.asked.Load() != 0 {
		t.Fatalf("asked %d: %q", p.asked.Load(), text(res))
	}
	if _, err := os.Stat(sentinel); err != nil {
		t.Error("the approved command did not run")
	}
}
