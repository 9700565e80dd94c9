package rigout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rigout/rigout/auth"
)

// RefusalKind says what refused a call.
type RefusalKind string

// Kinds of refusal.
const (
	// RefusedPolicy: the command policy refused it (or held it back and no
	// one could be asked).
	RefusedPolicy RefusalKind = "policy"
	// RefusedScope: the token may not do it.
	RefusedScope RefusalKind = "scope"
	// RefusedApproval: a person or an operator was asked and did not
	// approve it, or the approval came too late or was not this gateway's.
	RefusedApproval RefusalKind = "approval"
	// RefusedLimit: a concurrency cap or a rate limit.
	RefusedLimit RefusalKind = "limit"
	// RefusedArgument: the arguments do not fit the tool.
	RefusedArgument RefusalKind = "argument"
)

// Refusal is what a refused call tells the model in its structuredContent,
// under "refused", the same as its text says: clients that see a tool's
// output schema show the model only the structured content. Next, when
// there is a call to make instead, goes under "next" as for any result.
type Refusal struct {
	// Kind says what refused the call.
	Kind RefusalKind `json:"kind"`
	// Rule names the policy rule, scope or limit that refused it.
	Rule string `json:"rule,omitempty"`
	// Why says what was found, and why no one approved it.
	Why string `json:"why"`
	// Instead says what to do instead, when there is something.
	Instead string `json:"instead,omitempty"`
	// Next is the call to make instead, when there is one.
	Next *NextCall `json:"-"`
}

// RefusalResult returns an error result whose text is text and whose
// structuredContent carries r (see [Refusal]). text must say what r says.
// Every tool's declared output schema admits it: the gateway adds the
// alternative when it lists the tool (see refusableOutput).
func RefusalResult(r Refusal, text string) *mcp.CallToolResult {
	sc := map[string]any{"refused": r}
	if r.Next != nil {
		sc["next"] = r.Next
		if !strings.Contains(text, "\nnext: ") && !strings.HasPrefix(text, "next: ") {
			text = strings.TrimRight(text, "\n") + "\n" + r.Next.Line()
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: sc,
		IsError:           true,
	}
}

// refusalSample is a refusal's structuredContent with every field set, as
// an output schema must admit it.
var refusalSample = map[string]any{
	"refused": map[string]any{"kind": "policy", "rule": "r", "why": "w", "instead": "i"},
	"next":    map[string]any{"tool": "t", "arguments": map[string]any{}, "why": "w"},
}

// refusableOutput returns a tool's output schema as listed: one that also
// admits a refusal's structuredContent (the TypeScript SDK validates
// structuredContent against it even on error results). A schema that
// admits it already is returned as is, byte for byte; one that fails only
// by its "required" list gets, in its place, "anyOf" of that list and of
// ["refused"] (compact: tools/list is paid for in every conversation); any
// other becomes "anyOf" of itself and of an object whose "refused" is an
// object. A schema that does not compile is returned as is
// (registration refuses it).
func refusableOutput(tool string, raw json.RawMessage) json.RawMessage {
	if raw == nil || admitsRefusal(tool, raw) {
		return raw
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return raw
	}
	if req, ok := m["required"]; ok {
		if _, has := m["anyOf"]; !has {
			delete(m, "required")
			m["anyOf"] = []any{map[string]any{"required": req}, map[string]any{"required": []any{"refused"}}}
			if b, err := json.Marshal(m); err == nil && admitsRefusal(tool, b) {
				return b
			}
		}
	}
	b, err := json.Marshal(map[string]any{
		"type": "object",
		"anyOf": []any{json.RawMessage(raw), map[string]any{
			"required":   []any{"refused"},
			"properties": map[string]any{"refused": map[string]any{"type": "object"}},
		}},
	})
	if err != nil {
		return raw
	}
	return b
}

// admitsRefusal reports whether the output schema raw accepts
// refusalSample.
func admitsRefusal(tool string, raw json.RawMessage) bool {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return false
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem://rigout/" + tool + "/refusable.json"
	if c.AddResource(url, doc) != nil {
		return false
	}
	s, err := c.Compile(url)
	if err != nil {
		return false
	}
	return s.Validate(refusalSample) == nil
}

// refusalOf describes err, a refusal of the chain, for the model, in the
// words of msg (err's redacted text); ok is false for an error that is no
// refusal (a failure).
func refusalOf(err error, msg string) (r Refusal, ok bool) {
	var argErr *ArgumentError
	var scopeErr *auth.ScopeError
	var busyErr *BusyError
	var rateErr *RateLimitError
	switch {
	case errors.As(err, &argErr):
		return Refusal{Kind: RefusedArgument, Why: strings.Join(argErr.Problems, "; "),
			Instead: "call " + argErr.Tool + " again with arguments its input schema admits"}, true
	case errors.As(err, &scopeErr):
		return Refusal{Kind: RefusedScope, Rule: scopeErr.Scope, Why: scopeErr.Reason,
			Instead: "do without it, or ask the operator for a token with scope " + scopeErr.Scope}, true
	case errors.As(err, &busyErr):
		return Refusal{Kind: RefusedLimit, Rule: fmt.Sprintf("at most %d calls at once", busyErr.Limit), Why: msg,
			Instead: "retry when some of the calls running have finished"}, true
	case errors.As(err, &rateErr):
		return Refusal{Kind: RefusedLimit, Rule: rateErr.Limit + ": " + fmt.Sprint(rateErr.Rate), Why: msg,
			Instead: "retry in " + rateErr.RetryAfter.Round(100*time.Millisecond).String()}, true
	}
	return Refusal{}, false
}
