package shell_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/validate"
)

// TestElicitationAnswerAcrossReplicas: two gateways share a PostgreSQL
// ledger and the approval key derived from its chain key. The question
// one asks (a confirm rule, a client the operator declared interactive)
// is answered on the other, where it counts, once: the same answer sent
// again to either gateway runs nothing. A gateway with another key does
// not take it. The held command only touches a sentinel.
func TestElicitationAnswerAcrossReplicas(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("replicas")
	chain := bytes.Repeat([]byte{0x5a}, 32)
	sentinel := filepath.Join(t.TempDir(), "ran")
	args := heldBack(sentinel)
	gateway := func(name string, key []byte) string {
		l, err := postgres.Open(t.Context(), postgres.Config{DSN: dsn, Gateway: name, ChainKey: chain})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		gw := newGateway(t, setup{Policy: &validate.Policy{Rules: confirmPolicy},
			Config: rigout.Config{Audit: l, Principal: interactive(), ApprovalKey: key, ApprovalStore: l}})
		return serveHTTP(t, gw)
	}
	key := rigout.DeriveApprovalKey(chain)
	a, b := gateway("gw-a", key), gateway("gw-b", bytes.Clone(key))
	other := gateway("gw-other", rigout.DeriveApprovalKey(bytes.Repeat([]byte{1}, 32)))

	ask := func() string {
		t.Helper()
		r := modernCall(t, a, args, nil, "")
		st, _ := r["requestState"].(string)
		if r["resultType"] != "input_required" || st == "" {
			t.Fatalf("no question asked: %v", r)
		}
		return st
	}
	st := ask()
	if r := modernCall(t, other, args, accept(), st); r["isError"] != true {
		t.Errorf("a gateway with another key took the answer: %v", r)
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("the held command ran on an answer signed with another key")
	}
	if r := modernCall(t, b, args, accept(), st); r["isError"] == true {
		t.Fatalf("the answer on the other replica was refused: %v", r)
	}
	if err := os.Remove(sentinel); err != nil {
		t.Fatal("the confirmed command did not run")
	}
	for name, url := range map[string]string{"the replica that asked": a, "the replica that took it": b} {
		if r := modernCall(t, url, args, accept(), st); r["isError"] != true {
			t.Errorf("the answer replayed to %s: %v", name, r)
		}
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("a replayed answer ran the command again")
	}
}
