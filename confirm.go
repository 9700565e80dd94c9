package rigout

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// confirmKey names the gateway's elicitation among a call's input
// requests.
const confirmKey = "rigout.confirm"

// confirmation is what asking a person about a refused command came to.
type confirmation int

const (
	// cannotAsk: the client declared no elicitation capability.
	cannotAsk confirmation = iota
	// asking: the call returns an input request; the client asks the
	// person and calls again with the answer.
	asking
	// approved: the person accepted.
	approved
	// declined: the person declined, cancelled, or answered no.
	declined
)

// confirm asks the person behind the client whether a command the policy
// holds back may run, through MCP elicitation (the 2026-07-28 input
// requests; mcp-go turns them into elicitation/create for older clients).
// The answer arrives with the client's retry of the same call, which the
// client, not the model, composes. It returns the state of the question
// and, while asking, the result that carries it.
func confirm(ctx context.Context, call *Call, question string) (confirmation, *mcp.CallToolResult) {
	if ans := server.ElicitationResponse(call.Request.Params.InputResponses, confirmKey); ans != nil {
		if ans.Action != mcp.ElicitationResponseActionAccept {
			return declined, nil
		}
		if m, ok := ans.Content.(map[string]any); ok && m["confirm"] == true {
			return approved, nil
		}
		return declined, nil
	}
	if !clientCanElicit(ctx) {
		return cannotAsk, nil
	}
	res := server.NewInputRequestBuilder("").Elicit(confirmKey, mcp.ElicitationParams{
		Message: question,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{
					"type":        "boolean",
					"title":       "Run it",
					"description": "Check to let the command run; leave unchecked to refuse it.",
				},
			},
			"required": []string{"confirm"},
		},
	}).ToolResult()
	return asking, res
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

// confirmQuestion is what the person is asked about a held-back command.
func confirmQuestion(host, command, rule, reason string) string {
	return fmt.Sprintf("An agent asks to run on %s:\n\n  %s\n\nrigout's policy holds it back (rule %s): %s\n\nRun it anyway?",
		host, redactLine(command), rule, reason)
}
