package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/rigouttest"
)

// TestGatedToolRefusesAProtectedRoot points the embedder's rm -rf tool at
// a sentinel protected root under a temp dir (harmless if the gate failed:
// the worst it could delete is the sentinel), then at a release inside it.
func TestGatedToolRefusesAProtectedRoot(t *testing.T) {
	l := rigouttest.OpenLedger(t)
	releases := filepath.Join(t.TempDir(), "releases")
	old := filepath.Join(releases, "v1")
	keep := filepath.Join(releases, "v2", "keep")
	for _, d := range []string{old, filepath.Dir(keep)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gw, err := newGateway(slog.New(slog.DiscardHandler), l, releases)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	c := rigouttest.Connect(t, gw)

	res := rigouttest.Call(t, c, "prune_release", map[string]any{"path": releases})
	if got := rigouttest.Text(res); !res.IsError || !strings.Contains(got, "refused by policy rule recursive-delete-root") || !strings.Contains(got, "Nothing ran.") {
		t.Errorf("protected root: %q", got)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the protected root was emptied: %v", err)
	}
	res = rigouttest.Call(t, c, "prune_release", map[string]any{"path": old})
	if res.IsError {
		t.Fatalf("a release inside the root: %q", rigouttest.Text(res))
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s still exists: %v", old, err)
	}

	denied := rigouttest.Events(t, l, audit.Filter{Type: audit.TypeToolDenied})
	if len(denied) != 1 || denied[0].Tool != "prune_release" || denied[0].Rule != "recursive-delete-root" || denied[0].Decision != audit.DecisionDeny {
		t.Errorf("denied rows = %+v", denied)
	}
	var done []audit.Event
	for _, e := range rigouttest.Events(t, l, audit.Filter{Tool: "prune_release"}) {
		if e.Phase == audit.PhaseDone {
			done = append(done, e)
		}
	}
	if len(done) != 2 || done[1].Status != audit.StatusOK || done[1].Decision != audit.DecisionAllow || done[1].ExitCode == nil {
		t.Errorf("done rows = %+v", done)
	}
	// The built-in family reads the same ledger.
	res = rigouttest.Call(t, c, "get_server_activity", map[string]any{"lines": 10})
	if !strings.Contains(rigouttest.Text(res), `"rule": "recursive-delete-root"`) {
		t.Errorf("activity does not show the refusal:\n%s", rigouttest.Text(res))
	}
}
