package credentials_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	credstore "github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/credentials"
)

const value = "reveal-me-0a1b2c3d4e5f"

func newStore(t *testing.T) *credstore.Store {
	t.Helper()
	f := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(f, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := credstore.New(credstore.Config{Aliases: map[string]credstore.Spec{
		"db":      {File: f, Tools: []string{"execute_command", "credentials"}},
		"useonly": {File: f},
		"broken":  {File: filepath.Join(t.TempDir(), "missing")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gateway(t *testing.T, l audit.Recorder, scopes auth.Scopes) *rigout.Gateway {
	t.Helper()
	cf, err := credentials.New(credentials.Config{Store: newStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	return rigouttest.New(t, rigout.Config{Tools: cf.Tools(), Audit: l, AuditArgValues: true,
		Principal: &auth.Principal{Name: "agent", Scopes: scopes}})
}

func call(t *testing.T, gw *rigout.Gateway, args map[string]any) (string, bool) {
	t.Helper()
	res := rigouttest.Call(t, rigouttest.Connect(t, gw), "credentials", args)
	b, _ := json.Marshal(res)
	return rigouttest.Text(res) + string(b), res.IsError
}

// TestListCheckGet: list and check never show the value; get without the
// reveal_secrets scope is refused, even with FullScopes; with it, get
// needs a reason and an alias that allows the credentials tool; every call
// is a ledger row with the alias and the reason, never the value.
func TestListCheckGet(t *testing.T) {
	l := rigouttest.OpenLedger(t)
	full := gateway(t, l, auth.FullScopes())
	reveal := auth.FullScopes()
	reveal.RevealSecrets = true
	rv := gateway(t, l, reveal)

	out, isErr := call(t, full, map[string]any{"action": "list"})
	if isErr || strings.Contains(out, value) || !strings.Contains(out, `"alias": "db"`) || !strings.Contains(out, `"kind": "file"`) {
		t.Fatalf("list: %s", out)
	}
	out, isErr = call(t, full, map[string]any{"action": "check", "alias": "db"})
	if isErr || strings.Contains(out, value) || !strings.Contains(out, `"resolvable": true`) {
		t.Fatalf("check db: %s", out)
	}
	out, _ = call(t, full, map[string]any{"action": "check", "alias": "broken"})
	if !strings.Contains(out, `"resolvable": false`) || !strings.Contains(out, "no such file") {
		t.Fatalf("check broken: %s", out)
	}
	out, isErr = call(t, full, map[string]any{"action": "get", "alias": "db", "reason": "debugging"})
	if !isErr || strings.Contains(out, value) || !strings.Contains(out, "reveal_secrets") {
		t.Fatalf("get without reveal_secrets: %s", out)
	}
	out, isErr = call(t, rv, map[string]any{"action": "get", "alias": "db"})
	if !isErr || !strings.Contains(out, "needs a `reason`") {
		t.Fatalf("get without reason: %s", out)
	}
	out, isErr = call(t, rv, map[string]any{"action": "get", "alias": "useonly", "reason": "x"})
	if !isErr || strings.Contains(out, value) || !strings.Contains(out, "may not be revealed") {
		t.Fatalf("get of a use-only alias: %s", out)
	}
	out, isErr = call(t, rv, map[string]any{"action": "get", "alias": "db", "reason": "rotate the replica password"})
	if isErr || !strings.Contains(out, value) {
		t.Fatalf("get with reveal_secrets: %s", out)
	}

	evs := rigouttest.Events(t, l, audit.Filter{Tool: "credentials"})
	reasons := 0
	for _, e := range evs {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), value) {
			t.Fatalf("ledger row holds the value: %s", b)
		}
		if strings.Contains(e.Detail, `"reason":"rotate the replica password"`) && strings.Contains(e.Detail, `"credential":"db"`) {
			reasons++
		}
	}
	// The reveal is a privileged call: an intent row and a done row.
	if reasons < 1 || len(evs) < 7 {
		t.Fatalf("%d rows, %d with the reveal's alias and reason", len(evs), reasons)
	}
	raw, _ := os.ReadFile(l.Path())
	if strings.Contains(string(raw), value) {
		t.Fatal("the ledger file holds the value")
	}
}
