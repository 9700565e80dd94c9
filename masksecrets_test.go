package rigout_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/redact"
)

// TestCallMaskSecrets: values a handler adds with Call.MaskSecrets are
// masked in that call's result (text, structured content), in the error
// the ledger records and in the done row's detail — and only in that call:
// another call's result is untouched. A short value is refused.
func TestCallMaskSecrets(t *testing.T) {
	const secret = "call-scoped-secret-4242"
	tool := rigout.Tool{
		Name: "uses", Description: "Uses a credential.", Risk: rigout.Mutating,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"mask":{"type":"boolean"}}}`),
		Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			if err := call.MaskSecrets("short"); !errors.Is(err, redact.ErrShortSecret) {
				t.Errorf("short value: %v", err)
			}
			if call.Args["mask"] == true {
				if err := call.MaskSecrets(secret); err != nil {
					t.Error(err)
				}
			}
			call.Outcome.Error = "failed with " + secret
			call.Outcome.Detail = map[string]string{"used": "alias x", "leak": secret}
			res := rigout.ErrorResult("out: %s / %s", secret, base64.StdEncoding.EncodeToString([]byte(secret)))
			res.StructuredContent = map[string]any{"v": secret}
			return res, nil
		},
	}
	l := openLedger(t)
	c := connect(t, newGateway(t, rigout.Config{Audit: l, Tools: []rigout.Tool{tool}}))
	res := callTool(t, c, "uses", map[string]any{"mask": true})
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), secret) || strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte(secret))) || !strings.Contains(text(res), "out: *** / ***") {
		t.Fatalf("masked call: %s", b)
	}
	if res := callTool(t, c, "uses", nil); !strings.Contains(text(res), secret) {
		t.Fatalf("the mask leaked into another call: %s", text(res))
	}
	evs := events(t, l, audit.Filter{Tool: "uses"})
	masked := 0
	for _, e := range evs {
		if e.Phase == audit.PhaseDone && strings.Contains(e.Detail, `"used":"alias x"`) && !strings.Contains(e.Detail, secret) && !strings.Contains(e.Error, secret) {
			masked++
		}
	}
	if masked != 1 {
		t.Fatalf("%d done rows masked, want 1 (the masked call's): %+v", masked, evs)
	}
}

// TestRevealSecretsScope: the scope round-trips through the scope string,
// is not part of FullScopes, and a RevealSecrets need refuses without it.
func TestRevealSecretsScope(t *testing.T) {
	s, err := auth.ParseScopes("tools:* reveal_secrets")
	if err != nil || !s.RevealSecrets || s.String() != "tools:* reveal_secrets" {
		t.Fatalf("ParseScopes: %+v, %v", s, err)
	}
	if auth.FullScopes().RevealSecrets {
		t.Fatal("FullScopes includes reveal_secrets")
	}
	tool := rigout.Tool{Name: "peek", Description: "Reveals.", Risk: rigout.ReadOnly,
		Needs: []rigout.Need{{Capability: rigout.RevealSecrets}},
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return rigout.TextResult("shown"), nil
		}}
	for _, sc := range []auth.Scopes{auth.FullScopes(), s} {
		p := auth.Principal{Name: "p", Scopes: sc}
		res := callTool(t, connect(t, newGateway(t, rigout.Config{Principal: &p, Tools: []rigout.Tool{tool}})), "peek", nil)
		if got, want := res.IsError, !sc.RevealSecrets; got != want || (want && !strings.Contains(text(res), "reveal_secrets")) {
			t.Fatalf("scopes %v: %s", sc, text(res))
		}
	}
}
