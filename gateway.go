package rigout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/internal/callstream"
	"github.com/rigout/rigout/redact"
)

// Version is the gateway's version, reported by initialize and /health.
const Version = "0.1.0"

// Sentinel errors.
var (
	// ErrDuplicateTool means a tool with the same name is registered.
	ErrDuplicateTool = errors.New("rigout: duplicate tool name")
	// ErrClosed means the gateway was closed.
	ErrClosed = errors.New("rigout: gateway closed")
)

// Config configures a Gateway: what every tool shares. What only one tool
// family needs (an executor, a policy, timeouts, SSH) is in that family's
// own Config, under tools/. The zero value is a valid configuration: a
// gateway named "rigout" with no tools, no ledger and no rate limits.
type Config struct {
	// Name is the server name reported to clients. If empty, "rigout".
	Name string
	// Version is the server version reported to clients. If empty, Version.
	Version string
	// Instructions are sent to clients at initialize. If empty, a short
	// default naming the gateway's guarantees.
	Instructions string
	// Logger receives operator logs. If nil, logs are discarded.
	Logger *slog.Logger

	// Tools are registered in order when the gateway is built; more can be
	// added later with [Gateway.Register].
	Tools []Tool
	// Middleware wraps every tool call inside the gateway's own chain
	// (after argument validation, scopes, limits and the intent row),
	// outermost first.
	Middleware []Middleware

	// MaxConcurrent caps the tool calls in flight; a call over it is refused
	// at once as busy. If zero, DefaultMaxConcurrent (128).
	MaxConcurrent int
	// MaxConcurrentPerPrincipal caps one principal's calls in flight. If
	// zero, DefaultMaxConcurrentPerPrincipal (64).
	MaxConcurrentPerPrincipal int
	// RateLimit limits how often calls that run something (risk Exec and
	// above) may start, per principal and per host. The zero value sets no
	// limit.
	RateLimit RateLimits
	// RefusalRows bounds the refusal rows (denied calls, unknown tools,
	// refused credentials) one principal, or one client address before it
	// authenticates, adds to the ledger. Refusals over it still refuse but
	// are counted instead of written; the next row written says how many
	// were left out. If Calls is zero, DefaultRefusalRowsPerMinute a
	// minute.
	RefusalRows Rate

	// Audit records every tool call: an intent row before any call that can
	// change something runs, a done row after, refused calls included. If
	// nil, calls are not audited (the reference binary always opens a
	// ledger). Any Recorder fits (audittest.Recorder in tests); one that is
	// also an audit.ArgsDigester (the SQLite and PostgreSQL ledgers) keys
	// the stored digest of the arguments, else the gateway keys it with a
	// random key of its own, so digests compare within one gateway only.
	// A tool that reads the ledger (get_server_activity) takes the read
	// side, audit.Querier, in its own configuration.
	Audit audit.Recorder
	// UnsafeAuditBestEffort runs calls even when the ledger cannot record
	// them; /health then reports the gateway degraded. By default a call
	// whose intent cannot be recorded does not run.
	UnsafeAuditBestEffort bool
	// AuditArgValues stores every argument's redacted value in the ledger
	// beside the keyed digest (the ledger must also keep them). By default
	// only each tool's [Tool.Recorded] arguments are stored — the command
	// that ran, the path that was touched — redacted, and the digest of
	// all of them.
	AuditArgValues bool

	// MCPOptions are passed to mcp-go's server after the gateway's own: the
	// place for capabilities the gateway does not manage itself, such as
	// resource subscriptions, completions or prompt middleware. Tools must
	// still be registered through the gateway.
	MCPOptions []server.ServerOption

	// Secrets are values the gateway holds — its tokens, passphrases,
	// credentials — that no result, error or ledger row may show. The chain
	// masks every occurrence in every tool's result (text and
	// structuredContent), in their common encodings (base64, hex, URL and
	// JSON escaping), whatever the surrounding text. If nil, only the
	// patterns of package redact apply. The gateway shares the Set with the
	// caller: values added to it later are masked from then on.
	Secrets *redact.Set

	// ResolveHost says what a host argument reaches, without connecting:
	// a configured host's name, "local", or for an address nobody
	// configured its canonical user@host:port, ad hoc (the reference
	// binary wires remote.Router.Reaches). A token's host scopes are judged
	// on what it returns, never on the raw value, and a resolution error
	// refuses the call as invalid. A [HostArg] with its own Resolve uses
	// that instead. If nil, [HostAsGiven]: a value with the form of an
	// address is ad hoc, so a host glob never admits it.
	ResolveHost func(ctx context.Context, host string) ([]HostReach, error)

	// Principal is who calls are attributed to when their context carries
	// no auth.Principal: a client that reaches MCPServer directly (stdio,
	// in-process). If nil, "local" with every scope except policy bypass.
	// Network transports attach the authenticated principal themselves.
	Principal *auth.Principal

	// Approvals, if set, is the operator approval queue: a command the
	// policy holds back (a rule in confirm mode, or a bypass_security from
	// a token with the ask_bypass scope) waits there for an operator's
	// decision, made with a token that holds the approve scope and is not
	// the caller's ([Gateway.ApprovalsHandler], `rigout approve`). If nil,
	// there is no queue: such a command runs only with the confirmation of
	// a person at a client the operator declared interactive
	// (auth.Scopes.InteractiveClient), and is refused otherwise.
	Approvals *ApprovalConfig

	// ApprovalKey keys what the gateway signs about approvals: the
	// requestState of its elicitation questions and the digests of
	// pending operator approvals (see [DeriveApprovalKey]). Gateways that
	// serve one deployment behind a load balancer must share it, so that
	// one replica checks what another issued; derive it from a secret they
	// already share and commands cannot read (rigout derives it from the
	// ledger's chain key). At least 32 bytes. If nil, a random key drawn at
	// New: nothing signed by this gateway is accepted by another, or by it
	// after a restart.
	ApprovalKey []byte

	// ApprovalStore, if set, shares approvals with the other gateways of
	// the deployment (the PostgreSQL ledger, audit/postgres, is one): the
	// operator queue (a call held back on one gateway is listed, and
	// decided, on any; the waiting gateway polls the store for the
	// decision) and the spent elicitation answers (a requestState issued
	// by one gateway is redeemed once on any). Decisions carry a MAC under
	// the approval key, so one written into the store by hand is refused:
	// ApprovalKey, the same on every gateway, is then required. If nil,
	// both are this gateway's alone.
	ApprovalStore ApprovalStore

	// TaskAfter is how long a call of a tool with [Tool.Tasks], from a
	// client at protocol 2026-07-28 that declares the tasks extension, may
	// run before it becomes a task (see [Gateway.TasksHTTP]). If zero, 2s.
	TaskAfter time.Duration

	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() error {
	if c.Name == "" {
		c.Name = "rigout"
	}
	if c.Version == "" {
		c.Version = Version
	}
	if c.Instructions == "" {
		c.Instructions = defaultInstructions
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxConcurrentPerPrincipal <= 0 {
		c.MaxConcurrentPerPrincipal = DefaultMaxConcurrentPerPrincipal
	}
	if err := c.RateLimit.validate(); err != nil {
		return err
	}
	if c.ApprovalKey != nil && len(c.ApprovalKey) < minApprovalKey {
		return fmt.Errorf("rigout: ApprovalKey is %d bytes; want at least %d", len(c.ApprovalKey), minApprovalKey)
	}
	if c.ApprovalStore != nil && c.ApprovalKey == nil {
		return errors.New("rigout: ApprovalStore shares approvals between gateways, which must share ApprovalKey too (a random per-gateway key would make every decision made on another gateway look forged)")
	}
	if c.RefusalRows.Calls < 0 || c.RefusalRows.Per < 0 {
		return fmt.Errorf("rigout: refusal rows %d per %s: want positive numbers", c.RefusalRows.Calls, c.RefusalRows.Per)
	}
	if c.RefusalRows.Calls == 0 {
		c.RefusalRows.Calls = DefaultRefusalRowsPerMinute
	}
	if c.RefusalRows.Per == 0 {
		c.RefusalRows.Per = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.TaskAfter <= 0 {
		c.TaskAfter = defaultTaskAfter
	}
	if c.Principal == nil {
		p := auth.Principal{Name: "local", Transport: string(audit.TransportInProcess), Scopes: auth.FullScopes()}
		p.Scopes.Bypass = false
		c.Principal = &p
	} else {
		p := clonePrincipal(*c.Principal)
		c.Principal = &p
	}
	return nil
}

// clone returns a copy of c that shares no slices or pointers with it.
func (c Config) clone() Config {
	c.Tools = slices.Clone(c.Tools)
	for i := range c.Tools {
		c.Tools[i] = c.Tools[i].clone()
	}
	c.Middleware = slices.Clone(c.Middleware)
	c.MCPOptions = slices.Clone(c.MCPOptions)
	if c.Principal != nil {
		p := clonePrincipal(*c.Principal)
		c.Principal = &p
	}
	if c.Approvals != nil {
		a := *c.Approvals
		c.Approvals = &a
	}
	c.ApprovalKey = slices.Clone(c.ApprovalKey)
	return c
}

func clonePrincipal(p auth.Principal) auth.Principal {
	p.Scopes.Tools = slices.Clone(p.Scopes.Tools)
	p.Scopes.Hosts = slices.Clone(p.Scopes.Hosts)
	p.Scopes.Roots = slices.Clone(p.Scopes.Roots)
	return p
}

const defaultInstructions = "rigout gives you tools that work on machines. " +
	"Every call is checked against your token's scopes and recorded in an audit ledger; " +
	"a refusal says why and what to do instead."

// Gateway is an MCP server whose tools reach machines. Build it with New,
// serve MCPServer() with package transport, and Close it when done.
//
// A Gateway is safe for concurrent use. Several gateways with different
// configurations can live in one process: a Gateway holds all its state.
type Gateway struct {
	cfg      Config
	log      *slog.Logger
	srv      *server.MCPServer
	limit    *limiter
	rate     *rateLimiter               // nil without rate limits
	refused  *refusals                  // refusal rows per principal or address
	auditErr atomic.Pointer[auditError] // the last ledger failure, for Health
	started  time.Time
	digest   func(raw []byte) string // the arguments' digest (argsDigest)
	tasks    *taskTable
	xtasks   *extTasks // the tasks extension's (tasksext.go)
	taskOnce sync.Once

	questions *questions     // elicitations asked and not yet answered
	approvals *approvalQueue // nil without Config.Approvals

	// mu protects the following.
	mu     sync.RWMutex
	tools  map[string]*registered
	order  []string
	sets   map[string]bool // the prefixes SetTools manages
	closed bool

	setMu sync.Mutex // serializes SetTools
}

// registered is a tool with its compiled schema and its composed handler.
type registered struct {
	tool    Tool
	input   *argSchema
	handler Handler // the embedder's middleware around the tool's handler
	set     string  // the SetTools prefix that owns it; "" for Register
}

// New builds a gateway from cfg. cfg is copied deeply; later changes to it,
// or to what [Gateway.Config] returns, have no effect on the gateway.
func New(cfg Config) (*Gateway, error) {
	c := cfg.clone()
	if err := c.setDefaults(); err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg:     c,
		log:     c.Logger,
		tools:   make(map[string]*registered),
		started: c.Now(),
		digest:  argsDigest(c.Audit),
		limit:   newLimiter(c.MaxConcurrent, c.MaxConcurrentPerPrincipal),
		rate:    newRateLimiter(c.RateLimit, c.Now),
		refused: newRefusals(c.RefusalRows, c.Now),
		tasks:   newTaskTable(),
		xtasks:  newExtTasks(),

		questions: newQuestions(approvalSubkey(c.ApprovalKey, "rigout.confirm.request-state.v1"), c.ApprovalStore),
	}
	if c.Approvals != nil {
		g.approvals = newApprovalQueue(*c.Approvals, approvalSubkey(c.ApprovalKey, "rigout.approval.digest.v1"), c.ApprovalStore)
	}
	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithLogging(),
		server.WithInstructions(c.Instructions),
	}
	opts = append(opts, c.MCPOptions...)
	g.srv = server.NewMCPServer(c.Name, c.Version, opts...)
	// The gateway adds its hooks to the embedder's (a server.WithHooks in
	// MCPOptions), rather than replacing them or being replaced.
	hooks := g.srv.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(g.srv)
	}
	if c.Audit != nil {
		hooks.AddOnError(g.recordUnknownTool)
	}
	g.guardChain()
	for _, r := range g.prepareAll(c.Tools) {
		if r.err != nil {
			g.Close()
			return nil, r.err
		}
		if err := g.add(r.reg); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// prepared is one tool of Config.Tools, prepared or refused.
type prepared struct {
	reg *registered
	err error
}

// prepareAll prepares tools as Register does, compiling their schemas
// (the bulk of building a gateway) on up to GOMAXPROCS goroutines, and
// returns the results in the tools' order, so that New reports the error
// Register would have met first. Middleware is composed afterwards, in
// order, on this goroutine.
func (g *Gateway) prepareAll(tools []Tool) []prepared {
	out := make([]prepared, len(tools))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(tools)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(tools); i = int(next.Add(1) - 1) {
				out[i].reg, out[i].err = compileTool(tools[i])
			}
		})
	}
	wg.Wait()
	for _, p := range out {
		if p.err != nil {
			break // New stops here, as Register one tool at a time would
		}
		g.compose(p.reg)
	}
	return out
}

// MCPServer returns the mcp-go server that serves this gateway's tools, for
// package transport or an embedder's own transport.
func (g *Gateway) MCPServer() *server.MCPServer { return g.srv }

// Config returns a deep copy of the gateway's configuration, with defaults
// applied; changing it does not change the gateway.
func (g *Gateway) Config() Config { return g.cfg.clone() }

// Started returns when the gateway was built.
func (g *Gateway) Started() time.Time { return g.started }

// Close stops the gateway: calls after Close are refused. Tool families own
// their resources (SSH pools, sessions) and close them themselves.
func (g *Gateway) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.tasks.cancelAll()
	g.xtasks.cancelAll()
	return nil
}

var (
	// toolNameRE is what a tool name may hold; prepare also bounds its
	// length to 64 (a counted repetition would compile to 64 copies of the
	// class at every start).
	toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_\-.]+$`)
	hostArgRE  = regexp.MustCompile(`^(host|hosts|.+_host|.+_hosts)$`)
)

// IsHostArg reports whether an argument named name names a host: host,
// hosts, or a name ending in _host or _hosts. Register refuses a tool
// whose schema has such an argument that Tool.Hosts does not declare, so
// that no host reaches a handler unchecked; a tool built from another
// server's schema (package federation) declares them with it.
func IsHostArg(name string) bool { return hostArgRE.MatchString(name) }

// Register adds a tool to the registry. It is an error to register a name
// twice, a tool without a handler or risk class, an invalid schema, or a
// declaration the schema does not back (an undeclared host-like argument,
// a declared argument the schema does not have). t is copied. Tools
// registered while the gateway serves are announced to clients with
// notifications/tools/list_changed.
func (g *Gateway) Register(t Tool) error {
	r, err := g.prepare(t)
	if err != nil {
		return err
	}
	return g.add(r)
}

// add registers a prepared tool.
func (g *Gateway) add(r *registered) error {
	t := r.tool
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	if _, dup := g.tools[t.Name]; dup {
		g.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrDuplicateTool, t.Name)
	}
	for p := range g.sets {
		if strings.HasPrefix(t.Name, p) {
			g.mu.Unlock()
			return fmt.Errorf("rigout: tool %s: names beginning with %q belong to a tool set (SetTools)", t.Name, p)
		}
	}
	g.tools[t.Name] = r
	g.order = append(g.order, t.Name)
	g.mu.Unlock()

	if t.Tasks {
		g.enableTasks()
	}
	g.srv.AddTool(mcpTool(&r.tool), g.dispatch(r))
	return nil
}

// prepare validates a tool and composes its handler, as Register and
// SetTools do before anything is registered.
func (g *Gateway) prepare(t Tool) (*registered, error) {
	r, err := compileTool(t)
	if err != nil {
		return nil, err
	}
	g.compose(r)
	return r, nil
}

// compileTool validates a copy of t and compiles its schemas. It touches
// no gateway state, so tools compile concurrently.
func compileTool(t Tool) (*registered, error) {
	t = t.clone()
	if len(t.Name) > 64 || !toolNameRE.MatchString(t.Name) {
		return nil, fmt.Errorf("rigout: invalid tool name %q (want 1-64 of [A-Za-z0-9_.-])", t.Name)
	}
	if t.Handler == nil {
		return nil, fmt.Errorf("rigout: tool %s has no handler", t.Name)
	}
	if t.Description == "" {
		return nil, fmt.Errorf("rigout: tool %s has no description", t.Name)
	}
	if t.InputSchema == nil {
		t.InputSchema = emptyObjectSchema
	}
	if err := t.checkDeclarations(); err != nil {
		return nil, err
	}
	input, err := compileSchema(t.Name, "input", t.InputSchema)
	if err != nil {
		return nil, err
	}
	if t.OutputSchema != nil {
		if _, err := compileSchema(t.Name, "output", t.OutputSchema); err != nil {
			return nil, err
		}
	}
	return &registered{tool: t, input: input}, nil
}

// compose wraps r's handler in the embedder's middleware. Middleware
// constructors run one at a time, in the tools' order.
func (g *Gateway) compose(r *registered) {
	h := r.tool.Handler
	for _, m := range slices.Backward(g.cfg.Middleware) {
		h = m(h)
	}
	r.handler = h
}

// checkDeclarations settles the tool's risk and refuses declarations its
// schema does not back.
func (t *Tool) checkDeclarations() error {
	props, err := schemaProperties(t.InputSchema)
	if err != nil {
		return fmt.Errorf("rigout: tool %s: %w", t.Name, err)
	}
	has := func(name string) bool { _, ok := props[name]; return ok }
	if len(t.Actions) > 0 || t.Action != "" {
		if t.Action == "" || len(t.Actions) == 0 {
			return fmt.Errorf("rigout: tool %s: Action and Actions go together", t.Name)
		}
		if !has(t.Action) {
			return fmt.Errorf("rigout: tool %s: action argument %q is not in the input schema", t.Name, t.Action)
		}
		if t.ActionAlias != "" && !has(t.ActionAlias) {
			return fmt.Errorf("rigout: tool %s: action alias %q is not in the input schema", t.Name, t.ActionAlias)
		}
		top := Risk(0)
		for a, r := range t.Actions {
			if r < ReadOnly || r > Privileged {
				return fmt.Errorf("rigout: tool %s: action %q has no risk class", t.Name, a)
			}
			top = max(top, r)
		}
		if t.Risk == 0 {
			t.Risk = top
		} else if t.Risk < top {
			return fmt.Errorf("rigout: tool %s: Risk %s is below its riskiest action's (%s)", t.Name, t.Risk, top)
		}
	}
	if t.Risk < ReadOnly || t.Risk > Privileged {
		return fmt.Errorf("rigout: tool %s has no risk class", t.Name)
	}
	declared := map[string]bool{}
	for _, h := range t.Hosts {
		if !has(h.Name) {
			return fmt.Errorf("rigout: tool %s: host argument %q is not in the input schema", t.Name, h.Name)
		}
		declared[h.Name] = true
	}
	for name := range props {
		if hostArgRE.MatchString(name) && !declared[name] {
			return fmt.Errorf("rigout: tool %s: argument %q names a host but is not declared in Tool.Hosts", t.Name, name)
		}
	}
	for _, name := range t.Recorded {
		if !has(name) {
			return fmt.Errorf("rigout: tool %s: recorded argument %q is not in the input schema", t.Name, name)
		}
	}
	for _, p := range t.Paths {
		if !has(p.Name) {
			return fmt.Errorf("rigout: tool %s: path argument %q is not in the input schema", t.Name, p.Name)
		}
	}
	for _, n := range t.Needs {
		if _, ok := map[Capability]bool{Terminals: true, Bypass: true, RevealSecrets: true}[n.Capability]; !ok {
			return fmt.Errorf("rigout: tool %s: unknown capability %d", t.Name, int(n.Capability))
		}
		if n.When != "" && !has(n.When) {
			return fmt.Errorf("rigout: tool %s: need %s: argument %q is not in the input schema", t.Name, n.Capability, n.When)
		}
		for _, a := range n.Actions {
			if _, ok := t.Actions[a]; !ok {
				return fmt.Errorf("rigout: tool %s: need %s: unknown action %q", t.Name, n.Capability, a)
			}
		}
	}
	return nil
}

// schemaProperties returns the top-level properties of an object schema.
func schemaProperties(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return s.Properties, nil
}

// Tools returns the registered tools in registration order.
func (g *Gateway) Tools() []Tool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]Tool, 0, len(g.order))
	for _, n := range g.order {
		out = append(out, g.tools[n].tool)
	}
	return out
}

// mcpTool converts a registry row into mcp-go's tool definition.
func mcpTool(t *Tool) mcp.Tool {
	return mcp.Tool{
		Name:            t.Name,
		Title:           t.Title,
		Description:     t.Description,
		RawInputSchema:  t.InputSchema,
		RawOutputSchema: refusableOutput(t.Name, t.OutputSchema),
		Annotations:     annotations(t),
		Execution:       execution(t),
	}
}

// execution declares task support for a tool with Tasks.
func execution(t *Tool) *mcp.ToolExecution {
	if !t.Tasks {
		return nil
	}
	return &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
}

func annotations(t *Tool) mcp.ToolAnnotation {
	// Hints that equal the specification's defaults (destructive, not
	// idempotent, open world) are left out: every byte of tools/list is
	// paid in each conversation. readOnlyHint is always sent, since some
	// clients decide what to auto-approve by it alone.
	ro := t.Risk == ReadOnly
	a := mcp.ToolAnnotation{Title: t.Title, ReadOnlyHint: &ro}
	if ro {
		yes := true
		a.IdempotentHint = &yes
	}
	if h := t.Hints; h != nil {
		if h.IdempotentHint != nil {
			v := *h.IdempotentHint
			a.IdempotentHint = &v
		}
		if h.OpenWorldHint != nil {
			v := *h.OpenWorldHint
			a.OpenWorldHint = &v
		}
	}
	return a
}

// dispatch adapts a registered tool to mcp-go: it builds the Call and runs
// the chain. Errors become error results, so a tool failure is never a
// protocol error.
func (g *Gateway) dispatch(r *registered) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		g.mu.RLock()
		closed := g.closed
		g.mu.RUnlock()
		if closed {
			return ErrorResult("rigout is shutting down; %s did not run", r.tool.Name), nil
		}
		principal := g.principalOf(ctx)
		if r.tool.Tasks && req.Params.Task != nil {
			// A task outlives the request that created it (see tasks.go).
			var end func()
			ctx, end = g.tasks.begin(ctx, tagOf(&req), principal.Name)
			defer end()
		}
		call := &Call{
			Tool:      &r.tool,
			Request:   req,
			ID:        newCallID(),
			Started:   g.cfg.Now(),
			gw:        g,
			principal: principal,
			risk:      r.tool.Risk,
			schema:    r.input,
			extTask:   r.tool.Tasks && inExtTask(ctx),
		}
		args, err := decodeArgs(req.Params.Arguments)
		if err != nil {
			// Refused inside the chain, so it is audited.
			args = map[string]any{}
			call.argsErr = &ArgumentError{Tool: r.tool.Name, Problems: []string{err.Error()}}
		}
		call.Args = args
		if req.Params.Task == nil {
			// A 2025-11-25 task outlives its request, so its
			// notifications go through the session.
			call.stream = callstream.From(ctx)
		}
		res := g.serve(ctx, call, r)
		call.endStream()
		return res, nil
	}
}

// decodeArgs turns the request's arguments into a map: nil becomes empty,
// anything but a JSON object is refused.
func decodeArgs(raw any) (map[string]any, error) {
	switch a := raw.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return a, nil
	case json.RawMessage:
		var m map[string]any
		if err := json.Unmarshal(a, &m); err != nil {
			return nil, fmt.Errorf("arguments must be a JSON object: %w", err)
		}
		if m == nil {
			m = map[string]any{}
		}
		return m, nil
	}
	return nil, fmt.Errorf("arguments must be a JSON object, got %T", raw)
}

func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
