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
			call.Outcome.Detail = map[audit.DetailKey]string{"used": "alias x", "leak": secret}
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

// TestCallMaskSecretsEveryContentKind: a value is masked wherever a result
// can carry it — an embedded resource's text, URI and (base64) blob, a
// resource link — and an image or audio block whose bytes hold it is
// withheld whole. Downstream servers return all of these.
func TestCallMaskSecretsEveryContentKind(t *testing.T) {
	const secret = "kind-scoped-secret-7373"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tool := rigout.Tool{
		Name: "kinds", Description: "Returns every content kind.", Risk: rigout.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			if err := call.MaskSecrets(secret); err != nil {
				t.Error(err)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///" + secret, Text: "key=" + secret}),
				mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "file:///blob", Blob: b64("\x00\x01key=" + secret + "\xff")}),
				mcp.NewResourceLink("file:///link/"+secret, "link "+secret, "holds "+secret, "text/plain"),
				mcp.NewImageContent(b64("\x89PNG"+secret), "image/png"),
				mcp.NewAudioContent(b64("RIFF"+secret), "audio/wav"),
				mcp.NewImageContent(b64("\x89PNG clean"), "image/png"),
			}}, nil
		},
	}
	c := connect(t, newGateway(t, rigout.Config{Tools: []rigout.Tool{tool}}))
	res := callTool(t, c, "kinds", nil)
	b, _ := json.Marshal(res)
	for _, form := range []string{secret, b64(secret), b64("\x00\x01key=" + secret + "\xff"), b64("\x89PNG" + secret)} {
		if strings.Contains(string(b), form) {
			t.Fatalf("the result holds %q: %s", form, b)
		}
	}
	if len(res.Content) != 6 {
		t.Fatalf("%d content blocks, want 6: %s", len(res.Content), b)
	}
	blob, ok := res.Content[1].(mcp.EmbeddedResource).Resource.(mcp.BlobResourceContents)
	if !ok {
		t.Fatalf("block 2 is %T", res.Content[1])
	}
	if raw, err := base64.StdEncoding.DecodeString(blob.Blob); err != nil || string(raw) != "\x00\x01key=***\xff" {
		t.Errorf("blob = %q, %v; want the value masked in the decoded bytes", raw, err)
	}
	for _, i := range []int{3, 4} {
		if tc, ok := res.Content[i].(mcp.TextContent); !ok || !strings.Contains(tc.Text, "withheld") {
			t.Errorf("block %d = %#v, want a text block saying it was withheld", i+1, res.Content[i])
		}
	}
	if img, ok := res.Content[5].(mcp.ImageContent); !ok || img.Data != b64("\x89PNG clean") {
		t.Errorf("the clean image changed: %#v", res.Content[5])
	}
}
