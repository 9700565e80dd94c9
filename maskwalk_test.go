package rigout_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/redact"
)

type maskInner struct {
	Note string `json:"note"`
}

type maskOuter struct {
	Host   string            `json:"host"`
	Out    string            `json:"stdout"`
	Nested *maskInner        `json:"nested,omitempty"`
	List   []maskInner       `json:"list,omitempty"`
	Tags   map[string]string `json:"tags,omitempty"`
	Raw    json.RawMessage   `json:"raw,omitempty"`
	Blob   []byte            `json:"blob,omitempty"`
	Any    any               `json:"any,omitempty"`
	hidden string
}

// shouted marshals itself: its JSON is not its field.
type shouted struct{ v string }

func (s shouted) MarshalJSON() ([]byte, error) { return json.Marshal(strings.ToUpper(s.v)) }

// TestMaskStructured: a gateway secret is masked wherever it sits in a
// result's structuredContent — a struct field, behind a pointer, in a
// slice, as a map key or value, inside raw JSON, in bytes (base64), in a
// value that marshals itself — and a result that holds none is passed on
// as the handler built it, not re-encoded.
func TestMaskStructured(t *testing.T) {
	const secret = "gateway-secret-value-31337"
	big := strings.Repeat("ordinary output line\n", 50000)
	cases := []struct {
		name  string
		value any
	}{
		{"field", maskOuter{Host: "h", Out: big + secret}},
		{"pointer", maskOuter{Nested: &maskInner{Note: secret}}},
		{"slice", maskOuter{List: []maskInner{{"a"}, {secret}}}},
		{"map value", maskOuter{Tags: map[string]string{"k": secret}}},
		{"map key", map[string]any{secret: 1}},
		{"raw JSON", maskOuter{Raw: json.RawMessage(`{"x":"` + secret + `"}`)}},
		{"bytes", maskOuter{Blob: []byte(secret)}},
		{"marshaler", map[string]any{"v": shouted{"gateway-secret-value-31337"}}},
		{"interface", maskOuter{Any: []any{map[string]any{"deep": secret}}}},
		{"pointer to struct", &maskOuter{Out: secret}},
	}
	set, err := redact.New(secret, strings.ToUpper(secret))
	if err != nil {
		t.Fatal(err)
	}
	var tools []rigout.Tool
	for i, c := range cases {
		tools = append(tools, rigout.Tool{
			Name: "t" + string(rune('a'+i)), Description: c.name, Risk: rigout.ReadOnly,
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}, StructuredContent: c.value}, nil
			},
		})
	}
	clean := maskOuter{Host: "h", Out: big, Nested: &maskInner{"n"}, Tags: map[string]string{"a": "b"}, hidden: secret}
	tools = append(tools, rigout.Tool{
		Name: "clean", Description: "no secret", Risk: rigout.ReadOnly,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}, StructuredContent: clean}, nil
		},
	})
	seen := make(chan any, len(tools))
	hooks := &server.Hooks{}
	hooks.AddAfterCallTool(func(_ context.Context, _ any, m *mcp.CallToolRequest, result any) {
		if r, ok := result.(*mcp.CallToolResult); ok && m.Params.Name == "clean" {
			seen <- r.StructuredContent
		}
	})
	gw := newGateway(t, rigout.Config{Secrets: set, Tools: tools, MCPOptions: []server.ServerOption{server.WithHooks(hooks)}})
	c := connect(t, gw)
	for i, tc := range cases {
		res := callTool(t, c, "t"+string(rune('a'+i)), nil)
		b, _ := json.Marshal(res.StructuredContent)
		for _, leak := range []string{secret, strings.ToUpper(secret), base64.StdEncoding.EncodeToString([]byte(secret))} {
			if strings.Contains(string(b), leak) {
				t.Errorf("%s: the secret is in structuredContent: %.200s", tc.name, b)
			}
		}
		if !strings.Contains(string(b), redact.Mask) && tc.name != "bytes" {
			t.Errorf("%s: nothing masked: %.200s", tc.name, b)
		}
	}
	// A clean result leaves the gateway as the handler built it.
	if res := callTool(t, c, "clean", nil); res.IsError {
		t.Fatalf("clean: %s", text(res))
	}
	if got, ok := (<-seen).(maskOuter); !ok || got.Out != big {
		t.Fatalf("a clean result was re-encoded: %T", got)
	}
}
