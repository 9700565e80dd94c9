package rigout

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Risk classifies what a tool can do. It drives token scopes and the MCP
// tool annotations clients show to people.
type Risk int

// The risk classes, from least to most dangerous.
const (
	// ReadOnly tools only observe.
	ReadOnly Risk = iota + 1
	// Mutating tools change files or configuration.
	Mutating
	// Exec tools run arbitrary commands.
	Exec
	// Privileged tools install software, handle credentials or act as root.
	Privileged
)

func (r Risk) String() string {
	switch r {
	case ReadOnly:
		return "read-only"
	case Mutating:
		return "mutating"
	case Exec:
		return "exec"
	case Privileged:
		return "privileged"
	}
	return fmt.Sprintf("Risk(%d)", int(r))
}

// Handler runs one validated tool call. A failure the caller should see is
// an error result (see ErrorResult); a returned error is turned into one by
// the gateway, so handlers may return errors freely.
type Handler func(ctx context.Context, call *Call) (*mcp.CallToolResult, error)

// Middleware wraps a Handler. Every tool call passes through the gateway's
// one chain of middleware; no tool can skip it.
type Middleware func(next Handler) Handler

// Tool is one row of the gateway's tool registry. tools/list and dispatch
// both read the registry, so adding a tool means adding a row.
type Tool struct {
	// Name is the MCP tool name: unique, [a-zA-Z0-9_-], at most 64 bytes.
	Name string
	// Title is an optional display name.
	Title string
	// Description is what the model reads: short and exact.
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema.
	// Arguments are validated against it before the handler runs. If nil,
	// the tool takes no arguments.
	InputSchema json.RawMessage
	// OutputSchema, if set, is the JSON Schema of the result's
	// structuredContent.
	OutputSchema json.RawMessage
	// Risk is the tool's risk class. Required.
	Risk Risk
	// Handler runs the call. Required.
	Handler Handler
}

// Call is one tool call on its way through the middleware chain.
type Call struct {
	// Tool is the registry row being called.
	Tool *Tool
	// Request is the MCP request as received.
	Request mcp.CallToolRequest
	// Args are the decoded arguments; an empty map when none were sent.
	Args map[string]any
	// ID correlates everything one call produces (logs, audit rows).
	ID string
	// Started is when the gateway received the call.
	Started time.Time
	// Outcome is filled in by the handler and middleware as the call
	// proceeds; the audit middleware records it.
	Outcome Outcome

	notified atomic.Bool    // the call sent notifications (see Notify)
	argsErr  *ArgumentError // the arguments were not a JSON object
	schema   *argSchema     // the tool's compiled input schema
}

// Bind decodes the call's arguments into v, a pointer to a struct with JSON
// tags. The arguments have already passed the tool's input schema.
func (c *Call) Bind(v any) error {
	b, err := json.Marshal(c.Args)
	if err != nil {
		return fmt.Errorf("rigout: arguments: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("rigout: arguments: %w", err)
	}
	return nil
}

// Outcome records what a call did, for the audit ledger and the logs.
type Outcome struct {
	// Status is "ok", "error", "denied", "invalid", "timeout" or "canceled".
	Status string
	// Host is the target host as requested; Route is how it was reached.
	Host, Route string
	// Decision and Rule are the command policy's verdict, when one ran.
	Decision, Rule string
	// Bypassed is set when the caller bypassed the command policy.
	Bypassed bool
	// ExitCode is set when a command ran to exit.
	ExitCode *int
	// Signal names the signal that ended the command, if any.
	Signal string
	// StdoutBytes and StderrBytes count what the command printed.
	StdoutBytes, StderrBytes int64
	// Truncated is set when output was dropped by the cap.
	Truncated bool
	// Error is the error text the caller saw, redacted.
	Error string
}

// TextResult returns a successful result holding one text block.
func TextResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}}
}

// ErrorResult returns an error result (isError) holding one text block. The
// text must be specific: what failed and, where possible, what to do.
func ErrorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(fmt.Sprintf(format, args...))},
		IsError: true,
	}
}
