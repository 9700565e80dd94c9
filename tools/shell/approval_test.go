package shell_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/validate"
)

// operator holds the approve scope and nothing else.
var operator = auth.Principal{Name: "operator", Transport: "http", Scopes: auth.Scopes{Approve: true}}

// agent is a narrow token that may ask an operator for a bypass.
func agent() *auth.Principal {
	return &auth.Principal{Name: "agent", Transport: "in-process",
		Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, AskBypass: true}}
}

// waitPending waits until gw has one pending approval and returns it.
func waitPending(t *testing.T, gw *rigout.Gateway, as auth.Principal) rigout.PendingApproval {
	t.Helper()
	for range 500 {
		list, err := gw.PendingApprovals(context.Background(), as)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 {
			return list[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no pending approval appeared")
	return rigout.PendingApproval{}
}

// TestOperatorApproval: a held-back call waits for an operator; an
// approval runs exactly the approved command once, a denial and an
// expiry run nothing, and the ledger records who decided what.
func TestOperatorApproval(t *testing.T) {
	tests := []struct {
		name    string
		args    func(sentinel string) map[string]any
		decide  string // approve, deny, or "" (let it expire)
		runs    bool
		want    string
		outcome audit.Decision
	}{
		{"approve confirm rule", heldBack, "approve", true, "", audit.DecisionConfirmed},
		{"deny confirm rule", heldBack, "deny", false, "Operator operator denied it", audit.DecisionDeclined},
		{"expire", heldBack, "", false, "no operator decided within", audit.DecisionConfirm},
		{"approve asked bypass", bypassed, "approve", true, "", audit.DecisionConfirmed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			sentinel := filepath.Join(dir, "ran")
			l := openLedger(t)
			wait := 10 * time.Second
			if tt.decide == "" {
				wait = 300 * time.Millisecond
			}
			gw := newGateway(t, setup{Policy: &validate.Policy{Rules: confirmPolicy},
				Config: rigout.Config{Audit: l, Principal: agent(), Approvals: &rigout.ApprovalConfig{Wait: wait}}})
			c := connect(t, gw)
			done := make(chan *mcp.CallToolResult, 1)
			go func() { done <- callTool(t, c, "execute_command", tt.args(sentinel)) }()
			var pa rigout.PendingApproval
			if tt.decide != "" {
				pa = waitPending(t, gw, operator)
				if pa.Principal != "agent" || !strings.Contains(pa.Command, sentinel) || len(pa.Digest) != 32 {
					t.Fatalf("pending approval %+v", pa)
				}
				if _, err := gw.DecideApproval(context.Background(), operator, pa.ID, pa.Digest, tt.decide == "approve"); err != nil {
					t.Fatal(err)
				}
				// Single use: it is gone once decided.
				if _, err := gw.DecideApproval(context.Background(), operator, pa.ID, pa.Digest, true); !errors.Is(err, rigout.ErrApprovalNotFound) {
					t.Errorf("second decision: %v", err)
				}
			}
			res := <-done
			_, err := os.Stat(sentinel)
			if ran := err == nil; ran != tt.runs {
				t.Fatalf("ran = %v, want %v: %q", ran, tt.runs, text(res))
			}
			if tt.want != "" && (!res.IsError || !strings.Contains(text(res), tt.want)) {
				t.Errorf("result %q, want %q", text(res), tt.want)
			}
			var done_, decided []audit.Event
			for _, e := range events(t, l, audit.Filter{}) {
				switch {
				case e.Type == audit.TypeApprovalDecide:
					decided = append(decided, e)
				case e.Tool == "execute_command" && e.Phase == audit.PhaseDone:
					done_ = append(done_, e)
				}
			}
			if len(done_) != 1 || done_[0].Decision != tt.outcome {
				t.Fatalf("done rows %+v, want one with decision %s", done_, tt.outcome)
			}
			if tt.decide == "" {
				if len(decided) != 0 {
					t.Errorf("an expired approval has decision rows: %+v", decided)
				}
				return
			}
			if len(decided) != 1 || decided[0].Principal != "operator" || !strings.Contains(decided[0].Detail, pa.Digest) ||
				!strings.Contains(decided[0].Detail, `"for":"agent"`) {
				t.Errorf("approval.decide rows %+v", decided)
			}
			if tt.runs && !strings.Contains(done_[0].Detail, `"approved_by":"operator"`) {
				t.Errorf("done row detail %s does not name the approver", done_[0].Detail)
			}
		})
	}
}

// TestApprovalRefusals: the approve scope is required, a token cannot
// decide its own call, and the digest must be the pending command's.
func TestApprovalRefusals(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	gw := newGateway(t, setup{Policy: &validate.Policy{Rules: confirmPolicy},
		Config: rigout.Config{Principal: agent(), Approvals: &rigout.ApprovalConfig{Wait: 2 * time.Second}}})
	c := connect(t, gw)
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- callTool(t, c, "execute_command", heldBack(sentinel)) }()
	pa := waitPending(t, gw, operator)

	self := *agent()
	self.Scopes.Approve = true // even with the scope, not its own call
	noScope := operator
	noScope.Scopes.Approve = false
	var scopeErr *auth.ScopeError
	tests := []struct {
		name   string
		as     auth.Principal
		digest string
		check  func(error) bool
	}{
		{"no approve scope", noScope, pa.Digest, func(err error) bool { return errors.As(err, &scopeErr) }},
		{"own call", self, pa.Digest, func(err error) bool { return errors.Is(err, rigout.ErrSelfApproval) }},
		{"other digest", operator, strings.Repeat("0", 32), func(err error) bool { return errors.Is(err, rigout.ErrApprovalDigest) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := gw.DecideApproval(context.Background(), tt.as, pa.ID, tt.digest, true); !tt.check(err) {
				t.Errorf("DecideApproval: %v", err)
			}
		})
	}
	if _, err := gw.PendingApprovals(context.Background(), noScope); !errors.As(err, &scopeErr) {
		t.Errorf("listing without the scope: %v", err)
	}
	res := <-done // expires after 2s
	if !res.IsError {
		t.Errorf("result %q", text(res))
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("a refused decision ran the command")
	}
}

// TestApprovalQueueBounds: one principal cannot fill the queue beyond its
// cap; a call over it is refused at once.
func TestApprovalQueueBounds(t *testing.T) {
	dir := t.TempDir()
	gw := newGateway(t, setup{Policy: &validate.Policy{Rules: confirmPolicy},
		Config: rigout.Config{Principal: agent(), Approvals: &rigout.ApprovalConfig{Wait: 3 * time.Second, MaxPendingPerPrincipal: 1}}})
	c := connect(t, gw)
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- callTool(t, c, "execute_command", heldBack(filepath.Join(dir, "a"))) }()
	pa := waitPending(t, gw, operator)
	res := callTool(t, c, "execute_command", heldBack(filepath.Join(dir, "b")))
	if !res.IsError || !strings.Contains(text(res), "queue is full") {
		t.Errorf("second pending call: %q", text(res))
	}
	if _, err := gw.DecideApproval(context.Background(), operator, pa.ID, pa.Digest, false); err != nil {
		t.Fatal(err)
	}
	<-done
	for _, f := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s ran", f)
		}
	}
}
