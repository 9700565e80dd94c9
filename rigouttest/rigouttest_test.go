package rigouttest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/rigouttest"
)

func whoami() rigout.Tool {
	return rigout.Tool{
		Name:        "whoami",
		Description: "Say who calls.",
		Risk:        rigout.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			return rigout.TextResult(call.Principal().Name), nil
		},
	}
}

// TestNewServer: the chain is the real one (the principal's scopes
// refuse a tool it lacks), the rows are in the Server's ledger, and
// closing removes the ledger's directory.
func TestNewServer(t *testing.T) {
	tests := []struct {
		name      string
		principal *auth.Principal
		wantErr   bool
		wantText  string
		wantRow   audit.Status
	}{
		{"default principal", nil, false, "local", audit.StatusOK},
		{"scoped to the tool", &auth.Principal{Name: "ci", Scopes: auth.Scopes{Tools: []string{"whoami"}}}, false, "ci", audit.StatusOK},
		{"scoped to another tool", &auth.Principal{Name: "ci", Scopes: auth.Scopes{Tools: []string{"other"}}}, true, "", audit.StatusDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := rigouttest.NewServer(t, rigout.Config{Tools: []rigout.Tool{whoami()}, Principal: tt.principal})
			res := s.Call(t, "whoami", nil)
			if res.IsError != tt.wantErr || !tt.wantErr && rigouttest.Text(res) != tt.wantText {
				t.Fatalf("whoami = %v %q, want error %v, text %q", res.IsError, rigouttest.Text(res), tt.wantErr, tt.wantText)
			}
			rows := s.Events(t, audit.Filter{Tool: "whoami"})
			if len(rows) == 0 || rows[len(rows)-1].Status != tt.wantRow {
				t.Errorf("rows = %+v, want the last one %s", rows, tt.wantRow)
			}
		})
	}
}

func TestCloseRemovesTheLedger(t *testing.T) {
	s, err := rigouttest.Start(rigout.Config{Tools: []rigout.Tool{whoami()}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(s.Ledger.Path())
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("ledger directory: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Close, %s: %v, want it gone", dir, err)
	}
}

// TestOwnRecorder: with the Config's own Audit, the Server opens no
// ledger, the rows go to the Recorder, and Query says where they are.
func TestOwnRecorder(t *testing.T) {
	rec := &audittest.Recorder{}
	s := rigouttest.NewServer(t, rigout.Config{Tools: []rigout.Tool{whoami()}, Audit: rec})
	s.Call(t, "whoami", nil)
	if s.Ledger != nil {
		t.Error("the Server opened a ledger beside the Config's Audit")
	}
	if len(rec.Events()) == 0 {
		t.Error("the Config's Recorder recorded nothing")
	}
	if _, err := s.Query(context.Background(), audit.Filter{}); err == nil {
		t.Error("Query without a ledger of the Server's own succeeded")
	}
}

func TestStartRefusesABadConfig(t *testing.T) {
	bad := whoami()
	bad.InputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"no such type"}}}`)
	s, err := rigouttest.Start(rigout.Config{Tools: []rigout.Tool{bad}})
	if err == nil {
		s.Close()
		t.Fatal("Start with a tool whose schema does not compile succeeded")
	}
}
