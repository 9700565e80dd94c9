package rigout

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// confirmKey names the gateway's elicitation among a call's input
// requests.
const confirmKey = "rigout.confirm"

// Confirmation is what asking the person at the client came to.
type Confirmation int

const (
	// CannotAsk: the client declared no elicitation capability, so no
	// person can be asked. Treat it as a refusal.
	CannotAsk Confirmation = iota + 1
	// Asking: the question is on its way. Return the result Confirm gave
	// as the call's result; the client asks the person and calls again
	// with the answer.
	Asking
	// Approved: the person accepted.
	Approved
	// Declined: the person declined, cancelled, or answered no.
	Declined
)

func (c Confirmation) String() string {
	switch c {
	case CannotAsk:
		return "cannot-ask"
	case Asking:
		return "asking"
	case Approved:
		return "approved"
	case Declined:
		return "declined"
	}
	return "Confirmation(?)"
}

// Confirm asks the person behind the client a yes-or-no question about
// this call, through MCP elicitation (the 2026-07-28 input requests; mcp-go
// turns them into elicitation/create for older clients). The answer
// arrives with the client's retry of the same call, which the client, not
// the model, composes, so a model cannot answer for the person. While
// Asking, res is the result that carries the question: return it.
//
// The command gate (package gate) uses it for rules in confirm mode; a
// tool may use it for any decision a person should make.
func (c *Call) Confirm(ctx context.Context, question string) (state Confirmation, res *mcp.CallToolResult) {
	if ans := server.ElicitationResponse(c.Request.Params.InputResponses, confirmKey); ans != nil {
		if ans.Action != mcp.ElicitationResponseActionAccept {
			return Declined, nil
		}
		if m, ok := ans.Content.(map[string]any); ok && m["confirm"] == true {
			return Approved, nil
		}
		return Declined, nil
	}
	if !clientCanElicit(ctx) {
		return CannotAsk, nil
	}
	res = server.NewInputRequestBuilder("").Elicit(confirmKey, mcp.ElicitationParams{
		Message: question,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{
					"type":        "boolean",
					"title":       "Allow it",
					"description": "Check to allow it; leave unchecked to refuse.",
				},
			},
			"required": []string{"confirm"},
		},
	}).ToolResult()
	return Asking, res
}

// clientCanElicit reports whether the calling client declared the
// elicitation capability: per request under protocol 2026-07-28, at
// initialize before.
func clientCanElicit(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities().Elicitation != nil
	}
	return false
}
