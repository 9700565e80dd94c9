package rigout_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/rigouttest"
)

// TestBindRefusesWhatTheFieldCannotHold: an argument the input schema
// admits (any integer) but the handler's field cannot hold (beyond int64,
// or a string where the schema allows any type) is a refusal of kind
// "argument" naming the argument, recorded as invalid, and the handler's
// work does not start.
func TestBindRefusesWhatTheFieldCannotHold(t *testing.T) {
	ran := 0
	srv := rigouttest.NewServer(t, rigout.Config{Tools: []rigout.Tool{{
		Name:        "sleep_for",
		Description: "Take a number of seconds.",
		Risk:        rigout.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"integer"},"label":{}},"additionalProperties":false}`),
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			var a struct {
				Seconds int64 `json:"seconds"`
				Label   int   `json:"label"`
			}
			if err := call.Bind(&a); err != nil {
				return nil, err
			}
			ran++
			return rigout.TextResult("ok"), nil
		},
	}}})
	for _, tc := range []struct {
		args map[string]any
		why  string
	}{
		{map[string]any{"seconds": json.Number("100000000000000000000")}, "seconds: number 100000000000000000000 does not fit an integer of 64 bits"},
		{map[string]any{"seconds": 1e300}, "seconds: number 1e+300 does not fit an integer of 64 bits"},
		{map[string]any{"label": "x"}, "label: string does not fit an integer of 64 bits"},
	} {
		res := srv.Call(t, "sleep_for", tc.args)
		st := rigouttest.Structured(t, res)
		refused, _ := st["refused"].(map[string]any)
		if !res.IsError || refused["kind"] != "argument" || refused["why"] != tc.why {
			t.Errorf("sleep_for %v: %s (structured %v), want an argument refusal %q", tc.args, rigouttest.Text(res), st, tc.why)
		}
	}
	if ran != 0 {
		t.Errorf("the handler went on %d times after Bind failed", ran)
	}
	if res := srv.Call(t, "sleep_for", map[string]any{"seconds": 3}); res.IsError || ran != 1 {
		t.Fatalf("a value that fits: %s", rigouttest.Text(res))
	}
	var invalid int
	for _, e := range srv.Events(t, audit.Filter{Tool: "sleep_for"}) {
		if e.Phase == audit.PhaseDone && e.Status == audit.StatusInvalid {
			invalid++
			if !strings.Contains(e.Error, "does not fit") {
				t.Errorf("ledger row error %q, want the problem", e.Error)
			}
		}
	}
	if invalid != 3 {
		t.Errorf("%d calls recorded invalid, want 3", invalid)
	}
}
