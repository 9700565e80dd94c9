package rigout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
)

// outputValidator compiles a listed output schema as a client does.
func outputValidator(t *testing.T, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("listed output schema is not JSON: %v: %s", err, raw)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://out.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://out.json")
	if err != nil {
		t.Fatalf("listed output schema does not compile: %v: %s", err, raw)
	}
	return s
}

// listedOutputs returns the output schema of each of gw's tools as
// tools/list puts them on the wire (HTTP, protocol 2026-07-28).
func listedOutputs(t *testing.T, gw *rigout.Gateway) map[string]json.RawMessage {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": map[string]any{
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "schema-test", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		},
	}})
	req, _ := http.NewRequest(http.MethodPost, serveHTTP(t, gw), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msg struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatalf("tools/list: HTTP %d: %v", resp.StatusCode, err)
	}
	out := map[string]json.RawMessage{}
	for _, tool := range msg.Result.Tools {
		out[tool.Name] = tool.OutputSchema
	}
	return out
}

// asJSON returns v as encoding/json decodes it.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestListedOutputSchemasAdmitRefusals: the output schema a tool declares
// is listed so that a refusal's structuredContent validates against it
// (the TypeScript SDK checks it even on error results), unchanged when it
// already does, and no looser for anything else: what it rejected that is
// not a refusal it still rejects.
func TestListedOutputSchemasAdmitRefusals(t *testing.T) {
	refusal := map[string]any{"refused": map[string]any{"kind": "argument", "why": "x"}}
	tests := []struct {
		name      string
		schema    string
		unchanged bool
		good      map[string]any // admitted before and after
		bad       map[string]any // rejected before and after
	}{
		{name: "open", schema: `{"type":"object","properties":{"host":{"type":"string"}}}`, unchanged: true,
			good: map[string]any{"host": "h"}, bad: map[string]any{"host": 1}},
		{name: "required", schema: `{"type":"object","properties":{"host":{"type":"string"},"os":{"type":"object"}},"required":["host","os"]}`,
			good: map[string]any{"host": "h", "os": map[string]any{}}, bad: map[string]any{"host": "h"}},
		{name: "closed", schema: `{"type":"object","properties":{"host":{"type":"string"}},"additionalProperties":false,"required":["host"]}`,
			good: map[string]any{"host": "h"}, bad: map[string]any{"host": "h", "extra": 1}},
		{name: "refused declared otherwise", schema: `{"type":"object","properties":{"refused":{"type":"string"}},"required":["refused"]}`,
			good: map[string]any{"refused": "no"}, bad: map[string]any{"refused": 3}},
	}
	var tools []rigout.Tool
	for i, tt := range tests {
		tools = append(tools, rigout.Tool{
			Name: "t" + string(rune('a'+i)), Description: tt.name, Risk: rigout.ReadOnly,
			OutputSchema: json.RawMessage(tt.schema),
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				return rigout.TextResult("ok"), nil
			},
		})
	}
	byName := listedOutputs(t, newGateway(t, rigout.Config{Tools: tools}))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := byName["t"+string(rune('a'+i))]
			if tt.unchanged != bytes.Equal(raw, []byte(tt.schema)) {
				t.Errorf("listed schema %s, declared %s (want unchanged: %v)", raw, tt.schema, tt.unchanged)
			}
			s := outputValidator(t, raw)
			if err := s.Validate(asJSON(t, refusal)); err != nil {
				t.Errorf("a refusal does not validate against %s: %v", raw, err)
			}
			if err := s.Validate(asJSON(t, tt.good)); err != nil {
				t.Errorf("%v no longer validates against %s: %v", tt.good, raw, err)
			}
			if err := s.Validate(asJSON(t, tt.bad)); err == nil {
				t.Errorf("%v validates against %s: the schema got looser", tt.bad, raw)
			}
		})
	}
}

// TestRefusalInStructuredContent: a call the chain refuses (bad argument,
// missing scope, rate limit) carries in structuredContent what its text
// says — the kind, the rule, why, what to do instead — and that content
// validates against the tool's listed output schema, which requires
// properties a refusal does not have.
func TestRefusalInStructuredContent(t *testing.T) {
	facts := rigout.Tool{
		Name: "facts", Description: "Facts.", Risk: rigout.Exec,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"refresh":{"type":"boolean"}},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"host":{"type":"string"},"os":{"type":"object"}},"required":["host","os"]}`),
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{mcp.NewTextContent("local: linux")},
				StructuredContent: map[string]any{"host": "local", "os": map[string]any{"name": "linux"}},
			}, nil
		},
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	gw := newGateway(t, rigout.Config{
		Tools:     []rigout.Tool{facts},
		RateLimit: rigout.RateLimits{PerPrincipal: rigout.Rate{Calls: 1, Per: time.Minute}},
		Now:       func() time.Time { return now },
	})
	c := connect(t, gw)
	schema := outputValidator(t, listedOutputs(t, gw)["facts"])

	alice := auth.Principal{Name: "alice", Scopes: auth.FullScopes()}
	narrow := auth.Principal{Name: "narrow", Scopes: auth.Scopes{Tools: []string{"other"}, Hosts: []string{"*"}}}
	tests := []struct {
		name        string
		who         auth.Principal
		args        map[string]any
		wantKind    string
		wantRule    string // a substring of refused.rule
		wantWhy     string // a substring of refused.why, and of the text
		wantInstead string // a substring of refused.instead
	}{
		{name: "argument", who: alice, args: map[string]any{"refresh": "yes"},
			wantKind: "argument", wantWhy: "refresh", wantInstead: "call facts again"},
		{name: "scope", who: narrow, args: map[string]any{},
			wantKind: "scope", wantRule: "facts", wantWhy: "facts", wantInstead: "ask the operator"},
		{name: "allowed", who: alice, args: map[string]any{}},
		{name: "rate limit", who: alice, args: map[string]any{},
			wantKind: "limit", wantRule: "principal alice", wantWhy: "rate limited", wantInstead: "retry in 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req mcp.CallToolRequest
			req.Params.Name = "facts"
			req.Params.Arguments = tt.args
			res, err := c.CallTool(auth.NewContext(context.Background(), tt.who), req)
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(asJSON(t, res.StructuredContent)); err != nil {
				t.Errorf("structuredContent %v does not validate against the listed schema: %v", res.StructuredContent, err)
			}
			sc, _ := asJSON(t, res.StructuredContent).(map[string]any)
			r, _ := sc["refused"].(map[string]any)
			if tt.wantKind == "" {
				if res.IsError || r != nil {
					t.Fatalf("refused: %q %v", text(res), sc)
				}
				return
			}
			if !res.IsError || r == nil {
				t.Fatalf("not a refusal in structuredContent: isError %v, %v, %q", res.IsError, sc, text(res))
			}
			rule, _ := r["rule"].(string)
			why, _ := r["why"].(string)
			instead, _ := r["instead"].(string)
			if r["kind"] != tt.wantKind || !strings.Contains(rule, tt.wantRule) || !strings.Contains(why, tt.wantWhy) ||
				!strings.Contains(instead, tt.wantInstead) || !strings.Contains(text(res), tt.wantWhy) {
				t.Errorf("refused %v, text %q; want kind %s, rule ~%q, why ~%q, instead ~%q",
					r, text(res), tt.wantKind, tt.wantRule, tt.wantWhy, tt.wantInstead)
			}
		})
	}
}
