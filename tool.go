package rigout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/internal/callstream"
	"github.com/rigout/rigout/redact"
)

// Risk classifies what a tool, or one action of a tool, can do. It drives
// token scopes, the audit ledger (the done row of a call that Observes
// classified read-only says so), rate limits (Exec and above) and the MCP
// tool annotations clients show to people.
type Risk int

// The risk classes, from least to most dangerous.
const (
	// ReadOnly tools only observe. A read-only token may call them.
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
// one chain; an embedder's middleware ([Config.Middleware]) runs inside it,
// after the arguments, scopes, limits and intent row have been settled.
type Middleware func(next Handler) Handler

// Tool is one row of the gateway's tool registry. tools/list and dispatch
// both read the registry, so adding a tool means adding a row.
//
// A tool declares what its arguments touch — hosts, paths, the risk of
// each action, the capabilities a call needs — and the chain enforces those
// declarations on every call, after the arguments have passed the schema.
// Registration refuses a schema with a host-like argument (host, hosts,
// *_host, *_hosts) that is not declared in Hosts, so a tool cannot forget
// one.
type Tool struct {
	// Name is the MCP tool name: unique, [a-zA-Z0-9_.-], at most 64 bytes.
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

	// Risk is the tool's risk class. Required unless Actions is set; with
	// Actions it may be left zero and becomes the highest action's risk
	// (for the annotations: a tool with one destructive action is not
	// read-only).
	Risk Risk
	// Action names the string argument that selects what the call does
	// (usually "action"). With Actions, a call's risk is its action's, so
	// a read-only token can call the read-only actions of any tool.
	Action string
	// Actions maps each action to its risk. A call naming an action that
	// is not in the map is refused as invalid.
	Actions map[string]Risk
	// ActionAlias, if set, is another name the Action argument is taken
	// under (a tool's older name for it): a call that sets it instead is
	// read as setting Action; one that sets both to different values is
	// refused as invalid.
	ActionAlias string

	// Hosts are the arguments that name hosts. The chain resolves them
	// (selectors included), checks each against the token's host scopes,
	// records them in the ledger and hands them to the handler as
	// [Call.Hosts].
	Hosts []HostArg
	// DefaultHost is the host a call reaches when it names none of Hosts:
	// "local" for a tool that runs on this machine by default. Empty means
	// such a call reaches no host.
	DefaultHost string
	// Paths are the arguments that name file paths. The chain resolves
	// each (see [PathArg]) and checks it against the token's file roots;
	// the handler reads the resolved paths with [Call.Path].
	Paths []PathArg
	// Needs are the capabilities a call needs beyond the tool scope.
	Needs []Need
	// Recorded are the arguments every ledger row of a call keeps as
	// given, redacted — what an operator asks first: the command that ran,
	// the path that was touched. The other arguments are kept only as the
	// keyed digest unless [Config.AuditArgValues] keeps them all. Bulk
	// arguments (file contents, standard input) do not belong here.
	Recorded []string

	// Hints are the tool annotations that its risk class does not decide,
	// as the tool's source states them (a downstream MCP server's, say):
	// IdempotentHint and OpenWorldHint; other fields are ignored, since
	// ReadOnlyHint and DestructiveHint always follow Risk and the title is
	// Title. If nil, a tool is open-world, and idempotent only when
	// read-only.
	Hints *mcp.ToolAnnotation

	// HoldsForIntent lets the gateway write the call's intent row while
	// the handler prepares its commands, instead of before the handler
	// runs: a handler that sets it must have no side effect but the
	// commands it starts, each with exec.Command.Hold set to a function
	// that returns [AwaitIntent] (the command is prepared, then released
	// only once the row is durable, and never runs if it cannot be
	// written). The shell family sets it for execute_command.
	HoldsForIntent bool

	// Tasks declares MCP task support "optional" (protocol 2025-11-25): a
	// client may run a call as a task and poll it (tasks/get, tasks/result,
	// tasks/cancel) instead of waiting. The call passes the same chain;
	// the task is bound to the calling principal. Declare it on tools
	// that can run long.
	Tasks bool

	// Observes, if set, classifies one call of a tool above ReadOnly: it
	// reports whether this call, with these arguments, only observes. It
	// is asked after the call's hosts and paths are resolved and before
	// its scopes are checked. A call it classifies read-only is treated as
	// one of risk ReadOnly: a read-only token may make it, and its done
	// row says read-only in its detail (like every call, it has its intent
	// row before it runs). Rate limits
	// still apply by the tool's risk. It must answer true only for calls
	// it can prove change nothing, and the handler must then run exactly
	// what it classified; it may keep its findings in [Call.State] for the
	// handler.
	Observes func(ctx context.Context, call *Call) bool

	// Handler runs the call. Required.
	Handler Handler
}

// HostArg declares one argument that names hosts.
type HostArg struct {
	// Name is the argument's name: "host", "hosts", "source_host", ….
	Name string
	// Select resolves a string value that is a selector (a label
	// expression such as "web,env=prod") into host names. If nil, a string
	// value is one host name. A list of strings is always a list of host
	// names. A selector that matches nothing is an error.
	Select func(ctx context.Context, selector string) ([]string, error)
	// Resolve, if set, says what a host name of this argument reaches, in
	// place of Config.ResolveHost: for names the gateway's router does not
	// know, such as a federated peer's (use [HostAsGiven]). The token's
	// host scopes are judged on what it returns.
	Resolve func(ctx context.Context, host string) ([]HostReach, error)
}

// PathArg declares one argument that names a file path (a string, or a
// list of strings).
type PathArg struct {
	// Name is the argument's name: "path", "working_directory", ….
	Name string
	// Resolve turns a value into the absolute path the tool will act on,
	// with symlinks, "..", "~" and relative paths resolved as the tool
	// will resolve them (it may look at [Call.Hosts] to know where). The
	// token's file roots are checked on what it returns, and the handler
	// must act on that path ([Call.Path]), not on the raw value, so that
	// what was judged is what is touched. An error refuses the call as
	// invalid. If nil, the value is cleaned lexically, and a relative path
	// is refused when the token is confined to roots.
	Resolve func(ctx context.Context, call *Call, value string) (string, error)
}

// Capability is a permission beyond the tool scope that some calls need.
type Capability int

// Capabilities a [Need] can name.
const (
	// Terminals: opening persistent terminal sessions, whose input cannot
	// be policy-checked line by line (auth.Scopes.Terminals).
	Terminals Capability = iota + 1
	// Bypass: skipping the command policy without asking a person
	// (auth.Scopes.Bypass).
	Bypass
	// RevealSecrets: reading a credential's value
	// (auth.Scopes.RevealSecrets).
	RevealSecrets
)

func (c Capability) String() string {
	switch c {
	case Terminals:
		return "terminals"
	case Bypass:
		return "bypass"
	case RevealSecrets:
		return "reveal_secrets"
	}
	return fmt.Sprintf("Capability(%d)", int(c))
}

// require checks the capability against s.
func (c Capability) require(s auth.Scopes) error {
	switch c {
	case Terminals:
		return s.RequireTerminals()
	case Bypass:
		return s.RequireBypass()
	case RevealSecrets:
		return s.RequireRevealSecrets()
	}
	return fmt.Errorf("rigout: unknown capability %d", int(c))
}

// Need declares a capability some calls of a tool need.
type Need struct {
	// Capability is what the call needs.
	Capability Capability
	// When names a boolean argument: the capability is needed only when
	// the call sets it to true. Empty means always.
	When string
	// Actions limits the need to these actions. Empty means every action.
	Actions []string
}

// Call is one tool call on its way through the chain. The chain fills in
// the principal, the resolved hosts and paths and the call's risk before
// the handler runs; the handler and middleware fill in Outcome.
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
	// proceeds; the audit ledger records it.
	Outcome Outcome
	// State is the tool's own per-call state: what its Observes hook
	// found, for its handler. The chain never reads it.
	State any

	gw        *Gateway
	observes  bool // Tool.Observes classified the call read-only
	principal auth.Principal
	risk      Risk
	action    string
	hosts     []string
	reaches   []HostReach // what hosts resolve to: what host scopes judge
	paths     map[string][]string
	intent    bool         // the intent row was written
	unaudited bool         // the intent row could not be written; the call did not run
	base      *audit.Event // what both ledger rows share, once computed

	stream callstream.Writer // the call's own response stream, or nil (notify.go)
	// streamMu protects streamDone.
	streamMu   sync.Mutex
	streamDone bool // the handler returned: stream is no longer used
	secretMu   sync.Mutex
	secrets    *redact.Set    // values of this call to mask (see MaskSecrets)
	argsErr    *ArgumentError // the arguments were not a JSON object
	schema     *argSchema     // the tool's compiled input schema
	extTask    bool           // a tasks-extension call (tasksext.go)
}

// MaskSecrets adds values the call handles (a credential it injected into
// a command) to the mask of this call: the result, its error and the
// ledger's row are redacted of each, and of its encodings, as of the
// gateway's own [Config.Secrets]. It returns an error wrapping
// redact.ErrShortSecret, and adds nothing, if a value is too short to be
// masked safely.
func (c *Call) MaskSecrets(values ...string) error {
	for _, v := range values {
		if len(v) < redact.MinSecretLen {
			return redact.ErrShortSecret
		}
	}
	c.secretMu.Lock()
	defer c.secretMu.Unlock()
	if c.secrets == nil {
		c.secrets = new(redact.Set)
	}
	for _, v := range values {
		if err := c.secrets.Add(v); err != nil {
			return err
		}
	}
	return nil
}

// maskSet returns the call's own secrets, or nil.
func (c *Call) maskSet() *redact.Set {
	c.secretMu.Lock()
	defer c.secretMu.Unlock()
	return c.secrets
}

// Principal returns who is making the call: the identity the transport
// authenticated, or the gateway's [Config.Principal] for direct clients.
func (c *Call) Principal() auth.Principal { return c.principal }

// Risk returns the call's risk: its action's, or the tool's.
func (c *Call) Risk() Risk { return c.risk }

// ReadOnly reports whether the call only observes: its risk is ReadOnly, or
// the tool's Observes hook classified it read-only.
func (c *Call) ReadOnly() bool { return c.risk <= ReadOnly || c.observes }

// Action returns the action the call selected, or "" for a tool without
// actions.
func (c *Call) Action() string { return c.action }

// Hosts returns the hosts the call reaches, resolved from the tool's
// declared host arguments (selectors expanded) and checked against the
// token's scopes, in argument order; or [Tool.DefaultHost] when the call
// names none. The caller must not modify the slice.
func (c *Call) Hosts() []string { return c.hosts }

// Path returns the resolved value of a declared path argument: the path
// the token's roots were checked against, which is the path to act on.
// ok is false when the call did not set the argument.
func (c *Call) Path(arg string) (p string, ok bool) {
	ps := c.paths[arg]
	if len(ps) == 0 {
		return "", false
	}
	return ps[0], true
}

// PathList returns the resolved values of a declared path argument that
// takes a list.
func (c *Call) PathList(arg string) []string { return c.paths[arg] }

// Gateway returns the gateway serving the call.
func (c *Call) Gateway() *Gateway { return c.gw }

// Bind decodes the call's arguments into v, a pointer to a struct with JSON
// tags. The arguments have already passed the tool's input schema; a
// value the schema admits but v's field cannot hold (an integer beyond
// int64, a number where the schema allowed any type) is an
// [*ArgumentError] naming the argument, which the chain answers as a
// refusal of kind "argument".
func (c *Call) Bind(v any) error {
	b, err := json.Marshal(c.Args)
	if err != nil {
		return fmt.Errorf("rigout: arguments: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			name := "the call"
			if c.Tool != nil {
				name = c.Tool.Name
			}
			return &ArgumentError{Tool: name, Problems: []string{
				fmt.Sprintf("%s: %s does not fit %s", te.Field, te.Value, goKind(te.Type))}}
		}
		return fmt.Errorf("rigout: arguments: %w", err)
	}
	return nil
}

// goKind names what a Go type holds, in the words of a JSON value.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("an integer of %d bits", t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("an integer from 0, of %d bits", t.Bits())
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// Outcome records what a call did, for the audit ledger and the logs. The
// hosts of the ledger rows are the chain's resolved [Call.Hosts], never a
// handler's own idea of them.
type Outcome struct {
	// Status is how the call ended. The chain sets it when the handler
	// does not: ok, or error for an error result.
	Status audit.Status
	// Route is how the host was reached ("local", "ssh(web1 → …)").
	Route string
	// Decision and Rule are the command policy's verdict, when one ran.
	Decision audit.Decision
	Rule     string
	// Bypassed is set when the caller bypassed the command policy.
	Bypassed bool
	// Unsandboxed, when set, says why a command that ran on this machine
	// ran outside the kernel sandbox (sudo, no Landlock); the done row
	// records it.
	Unsandboxed string
	// ExitCode is set when a command ran to exit.
	ExitCode *int
	// Signal names the signal that ended the command, if any.
	Signal string
	// StdoutBytes and StderrBytes count what the command printed.
	StdoutBytes, StderrBytes int64
	// Truncated is set when output was dropped by the cap.
	Truncated bool
	// Error is the error text the caller saw; the ledger stores it
	// redacted.
	Error string
	// Detail holds facts a tool adds for the ledger's detail column, such
	// as the paths a file tool touched, a transfer's hashes and byte counts,
	// or the credential aliases a call used — never a secret value. The
	// ledger stores them as JSON, redacted.
	Detail map[audit.DetailKey]string
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

// JSONResult returns a successful result holding v rendered as indented
// JSON text.
func JSONResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return nil, fmt.Errorf("rigout: result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(b))}}, nil
}

// clone returns a copy of t that shares no maps or slices with it.
func (t Tool) clone() Tool {
	t.InputSchema = slices.Clone(t.InputSchema)
	t.OutputSchema = slices.Clone(t.OutputSchema)
	if t.Actions != nil {
		m := make(map[string]Risk, len(t.Actions))
		for k, v := range t.Actions {
			m[k] = v
		}
		t.Actions = m
	}
	if t.Hints != nil {
		h := *t.Hints
		t.Hints = &h
	}
	t.Hosts = slices.Clone(t.Hosts)
	t.Paths = slices.Clone(t.Paths)
	t.Needs = slices.Clone(t.Needs)
	t.Recorded = slices.Clone(t.Recorded)
	for i := range t.Needs {
		t.Needs[i].Actions = slices.Clone(t.Needs[i].Actions)
	}
	return t
}
