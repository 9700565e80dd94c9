package postgres_test

import (
	"bytes"
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
	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/rigouttest"
)

// TestApprovalsAcrossReplicas: two gateways share one PostgreSQL ledger,
// its approval queue and an approval key derived from the chain key. A
// call held back on gateway A is listed on gateway B, and an operator's
// decision made on B reaches A: an approval runs exactly the held command
// once, a denial runs nothing, the caller's own token cannot decide it on
// B, and a decision written into the table by hand (no gateway's MAC) runs
// nothing. The held command writes a sentinel file: harmless if the
// guarantee regresses.
func TestApprovalsAcrossReplicas(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("approvals")
	key := rigout.DeriveApprovalKey(testChainKey)
	dir := t.TempDir()
	var runs int
	held := func(sentinel string) rigout.Tool {
		return rigout.Tool{
			Name: "held", Description: "Waits for an operator, then appends to a sentinel.", Risk: rigout.Exec,
			Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
				if _, err := call.AwaitApproval(ctx, rigout.ApprovalRequest{Host: "local", Command: "touch " + sentinel, Rule: "test", Reason: "held"}); err != nil {
					return rigout.ErrorResult("not approved: %v", err), nil
				}
				runs++
				f, err := os.OpenFile(sentinel, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
				if err != nil {
					return nil, err
				}
				defer f.Close()
				_, err = f.WriteString("ran\n")
				return rigout.TextResult("ran"), err
			},
		}
	}
	agent := auth.Principal{Name: "agent", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, Approve: true}} // may approve, but never its own call
	operator := auth.Principal{Name: "operator", Scopes: auth.Scopes{Approve: true}}
	sentinel := filepath.Join(dir, "ran")
	gateway := func(name string) *rigout.Gateway {
		l := open(t, dsn, name, nil)
		return rigouttest.New(t, rigout.Config{Audit: l, Tools: []rigout.Tool{held(sentinel)}, Principal: &agent, ApprovalKey: key,
			ApprovalStore: l, Approvals: &rigout.ApprovalConfig{Wait: 20 * time.Second}})
	}
	a, b := gateway("gw-a"), gateway("gw-b")
	ca := rigouttest.Connect(t, a)
	ctx := context.Background()

	// wait starts a held call on A and returns the approval B lists.
	wait := func() (rigout.PendingApproval, chan *mcp.CallToolResult) {
		t.Helper()
		done := make(chan *mcp.CallToolResult, 1)
		go func() { done <- rigouttest.Call(t, ca, "held", nil) }()
		for range 500 {
			list, err := b.PendingApprovals(ctx, operator)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) == 1 {
				return list[0], done
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("gateway B never listed the call held on A")
		return rigout.PendingApproval{}, nil
	}
	ran := func() int {
		b, err := os.ReadFile(sentinel)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("ran\n"))
	}

	// Approved on B: runs once on A.
	pa, done := wait()
	if _, err := b.DecideApproval(ctx, agent, pa.ID, pa.Digest, true); !errors.Is(err, rigout.ErrSelfApproval) {
		t.Errorf("the caller's own token deciding on B: %v, want ErrSelfApproval", err)
	}
	if _, err := b.DecideApproval(ctx, operator, pa.ID, strings.Repeat("ab", 16), true); !errors.Is(err, rigout.ErrApprovalDigest) {
		t.Errorf("another digest: %v, want ErrApprovalDigest", err)
	}
	if ran() != 0 {
		t.Fatal("the held call ran before a decision")
	}
	if _, err := b.DecideApproval(ctx, operator, pa.ID, pa.Digest, true); err != nil {
		t.Fatalf("approve on B: %v", err)
	}
	if res := <-done; res.IsError {
		t.Fatalf("the approved call on A: %s", rigouttest.Text(res))
	}
	if _, err := b.DecideApproval(ctx, operator, pa.ID, pa.Digest, true); !errors.Is(err, rigout.ErrApprovalNotFound) {
		t.Errorf("a second approval: %v, want ErrApprovalNotFound", err)
	}
	if n := ran(); n != 1 {
		t.Fatalf("the approved command ran %d times, want 1", n)
	}

	// Denied on B: nothing runs on A.
	pa, done = wait()
	if _, err := b.DecideApproval(ctx, operator, pa.ID, pa.Digest, false); err != nil {
		t.Fatalf("deny on B: %v", err)
	}
	if res := <-done; !res.IsError || !strings.Contains(rigouttest.Text(res), "denied by operator") {
		t.Errorf("the denied call on A: %v %s", res.IsError, rigouttest.Text(res))
	}

	// A decision written by hand, without a gateway's MAC: nothing runs.
	pa, done = wait()
	srv.Psql("approvals", `UPDATE rigout_approvals SET decided = true, approved = true, approver = 'mallory', mac = '\x00'::bytea WHERE id = '`+pa.ID+`'`)
	if res := <-done; !res.IsError || !strings.Contains(rigouttest.Text(res), "bad MAC") {
		t.Errorf("the call with a forged decision: %v %s", res.IsError, rigouttest.Text(res))
	}
	if n := ran(); n != 1 {
		t.Fatalf("the command ran %d times after a denial and a forged approval, want 1 (the approved one)", n)
	}
	// The two decisions are in the shared ledger.
	decided := 0
	lb := open(t, dsn, "gw-reader", nil)
	evs, err := lb.Query(ctx, audit.Filter{Type: audit.TypeApprovalDecide})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Principal == "operator" {
			decided++
		}
	}
	if decided != 2 {
		t.Errorf("%d approval.decide rows of the operator, want 2: %+v", decided, evs)
	}
	if got := srv.Psql("approvals", `SELECT count(*) FROM rigout_approvals`); got != "0" {
		t.Errorf("%s approvals left in the table after every call ended", got)
	}

	// A shared queue needs the shared key.
	if _, err := rigout.New(rigout.Config{ApprovalStore: lb}); err == nil {
		t.Error("a gateway with a shared queue and no ApprovalKey was built")
	}
}
