package rigout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/validate"
)

// Version is the gateway's version, reported by initialize and /health.
const Version = "0.1.0"

// Defaults used when the corresponding Config field is zero.
const (
	DefaultTimeout    = 30 * time.Second
	DefaultMaxTimeout = time.Hour
)

// Sentinel errors.
var (
	// ErrDuplicateTool means a tool with the same name is registered.
	ErrDuplicateTool = errors.New("rigout: duplicate tool name")
	// ErrClosed means the gateway was closed.
	ErrClosed = errors.New("rigout: gateway closed")
)

// Config configures a Gateway. The zero value is a valid configuration: a
// gateway named "rigout" with the built-in tools running commands locally.
type Config struct {
	// Name is the server name reported to clients. If empty, "rigout".
	Name string
	// Version is the server version reported to clients. If empty, Version.
	Version string
	// Instructions are sent to clients at initialize. If empty, a short
	// default describing the built-in tools is used.
	Instructions string
	// Logger receives operator logs. If nil, logs are discarded.
	Logger *slog.Logger

	// Policy decides which commands may run. If nil, the default policy
	// (validate.Policy's zero value: every destructive-command rule on).
	Policy *validate.Policy

	// Local runs commands on this machine. If nil, a zero exec.Local.
	Local exec.Runner
	// SSH, if set, lets tools reach other machines: the host argument goes
	// through its routing ladder (aliases, user@host, ~/.ssh/config, auto)
	// and execute_command can fan out to several hosts. Its Local is
	// replaced by the gateway's; host-key events are also recorded in the
	// audit ledger. The gateway owns the router and closes it on Close.
	SSH *exec.RouterConfig
	// WorkDir is the working directory of local commands that name none.
	// If empty, the gateway process's working directory.
	WorkDir string
	// DefaultTimeout applies to commands that set none. If zero,
	// DefaultTimeout (30s).
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout a caller may ask for. If zero,
	// DefaultMaxTimeout (1h).
	MaxTimeout time.Duration
	// MaxOutput caps each output stream of a command, in bytes. If zero,
	// exec.DefaultMaxOutput (1 MiB).
	MaxOutput int
	// MaxConcurrent caps the tool calls in flight; a call over it is refused
	// at once as busy. If zero, DefaultMaxConcurrent (128).
	MaxConcurrent int
	// MaxConcurrentPerPrincipal caps one principal's calls in flight. If
	// zero, DefaultMaxConcurrentPerPrincipal (64).
	MaxConcurrentPerPrincipal int

	// ProgressInterval is how often a running command reports progress to
	// a client that passed a progress token. If zero,
	// DefaultProgressInterval.
	ProgressInterval time.Duration

	// NoBuiltinTools leaves the registry empty for an embedder that
	// registers only its own tools.
	NoBuiltinTools bool
	// Tools are registered after the built-in tools.
	Tools []Tool
	// Middleware wraps every tool call inside the gateway's own chain
	// (after recovery, observation, audit, scopes and argument
	// validation), outermost first.
	Middleware []Middleware

	// Audit records every tool call: an intent row before any tool that can
	// change something runs, a done row after. If nil, calls are not
	// audited (the reference binary always opens a ledger).
	Audit AuditLedger
	// UnsafeAuditBestEffort runs calls even when the ledger cannot record
	// them; /health then reports the gateway degraded. By default a call
	// whose intent cannot be recorded does not run.
	UnsafeAuditBestEffort bool
	// AuditArgValues stores redacted argument values in the ledger beside
	// their keyed digest (the ledger must also keep them).
	AuditArgValues bool

	// MCPOptions are passed to mcp-go's server after the gateway's own: the
	// place for capabilities the gateway does not manage itself, such as
	// resource subscriptions, completions or prompt middleware. Tools must
	// still be registered through the gateway.
	MCPOptions []server.ServerOption

	// Principal is who calls are attributed to when their context carries
	// no auth.Principal: a client that reaches MCPServer directly (stdio,
	// in-process). If nil, "local" with every scope except policy bypass.
	// Network transports attach the authenticated principal themselves.
	Principal *auth.Principal

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
		if c.SSH != nil {
			c.Instructions += sshInstructions
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Policy == nil {
		c.Policy = &validate.Policy{}
	} else {
		p := *c.Policy // the gateway reads its own copy
		if err := p.Validate(); err != nil {
			return err
		}
		c.Policy = &p
	}
	if c.Local == nil {
		c.Local = &exec.Local{}
	}
	if c.WorkDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("rigout: working directory: %w", err)
		}
		c.WorkDir = wd
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.DefaultTimeout > c.MaxTimeout {
		return fmt.Errorf("rigout: DefaultTimeout %v exceeds MaxTimeout %v", c.DefaultTimeout, c.MaxTimeout)
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = exec.DefaultMaxOutput
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxConcurrentPerPrincipal <= 0 {
		c.MaxConcurrentPerPrincipal = DefaultMaxConcurrentPerPrincipal
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Principal == nil {
		p := auth.Principal{Name: "local", Transport: "in-process", Scopes: auth.FullScopes()}
		p.Scopes.Bypass = false
		c.Principal = &p
	}
	return nil
}

const defaultInstructions = "rigout runs commands for you on this machine. " +
	"Use execute_command with a shell `command` or an exact `argv`; " +
	"results give the exit code, stdout and stderr. Destructive commands are refused by policy."

const sshInstructions = " It also reaches SSH hosts: set `host` (an alias, user@host, or auto), " +
	"or `hosts` to run on several at once; manage_hosts lists and describes them."

// Gateway is an MCP server whose tools reach machines. Build it with New,
// serve MCPServer() with package transport, and Close it when done.
//
// A Gateway is safe for concurrent use. Several gateways with different
// configurations can live in one process: a Gateway holds all its state.
type Gateway struct {
	cfg      Config
	log      *slog.Logger
	srv      *server.MCPServer
	router   *exec.Router // nil without SSH
	limit    *limiter
	chain    []Middleware
	auditErr atomic.Pointer[auditError] // the last ledger failure, for Health
	started  time.Time

	// mu protects the following.
	mu     sync.RWMutex
	tools  map[string]*registered
	order  []string
	closed bool
}

// registered is a tool with its compiled schemas and its composed handler.
type registered struct {
	tool    Tool
	input   *argSchema
	handler Handler
}

// New builds a gateway from cfg. cfg is copied; later changes to it have no
// effect.
func New(cfg Config) (*Gateway, error) {
	c := cfg
	c.Tools = slices.Clone(cfg.Tools)
	c.Middleware = slices.Clone(cfg.Middleware)
	c.MCPOptions = slices.Clone(cfg.MCPOptions)
	if err := c.setDefaults(); err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg:     c,
		log:     c.Logger,
		tools:   make(map[string]*registered),
		started: c.Now(),
		limit:   newLimiter(c.MaxConcurrent, c.MaxConcurrentPerPrincipal),
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
	// The chain, outermost first: nothing a tool does escapes recovery and
	// observation, and the ledger sees every call, refused ones included.
	g.chain = []Middleware{g.recoverPanics, g.observe}
	if c.Audit != nil {
		g.chain = append(g.chain, g.auditCalls)
		hooks.AddOnError(g.recordUnknownTool)
	}
	g.chain = append(g.chain, g.limitConcurrency, g.authorize, g.checkArgs)
	g.chain = append(g.chain, c.Middleware...)

	if c.SSH != nil {
		rc := *c.SSH
		rc.Local = c.Local
		if rc.Logger == nil {
			rc.Logger = c.Logger
		}
		onHostKey := rc.OnHostKey
		rc.OnHostKey = func(ctx context.Context, ev exec.HostKeyEvent) {
			g.recordHostKey(ctx, ev)
			if onHostKey != nil {
				onHostKey(ctx, ev)
			}
		}
		r, err := exec.NewRouter(rc)
		if err != nil {
			return nil, fmt.Errorf("rigout: ssh: %w", err)
		}
		g.router = r
	}

	var tools []Tool
	if !c.NoBuiltinTools {
		tools = g.builtinTools()
	}
	tools = append(tools, c.Tools...)
	for _, t := range tools {
		if err := g.Register(t); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// MCPServer returns the mcp-go server that serves this gateway's tools, for
// package transport or an embedder's own transport.
func (g *Gateway) MCPServer() *server.MCPServer { return g.srv }

// Config returns a copy of the gateway's configuration, with defaults
// applied.
func (g *Gateway) Config() Config { return g.cfg }

// Close releases the gateway's resources: pooled SSH connections and their
// goroutines. Calls after Close fail.
func (g *Gateway) Close() error {
	g.mu.Lock()
	already := g.closed
	g.closed = true
	g.mu.Unlock()
	if already || g.router == nil {
		return nil
	}
	return g.router.Close()
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_\-.]{1,64}$`)

// Register adds a tool to the registry. It is an error to register a name
// twice, a tool without a handler or risk class, or an invalid schema.
// Tools registered while the gateway serves are announced to clients with
// notifications/tools/list_changed.
func (g *Gateway) Register(t Tool) error {
	if !toolNameRE.MatchString(t.Name) {
		return fmt.Errorf("rigout: invalid tool name %q (want 1-64 of [A-Za-z0-9_.-])", t.Name)
	}
	if t.Handler == nil {
		return fmt.Errorf("rigout: tool %s has no handler", t.Name)
	}
	if t.Risk < ReadOnly || t.Risk > Privileged {
		return fmt.Errorf("rigout: tool %s has no risk class", t.Name)
	}
	if t.Description == "" {
		return fmt.Errorf("rigout: tool %s has no description", t.Name)
	}
	if t.InputSchema == nil {
		t.InputSchema = emptyObjectSchema
	}
	input, err := compileSchema(t.Name, "input", t.InputSchema)
	if err != nil {
		return err
	}
	if t.OutputSchema != nil {
		if _, err := compileSchema(t.Name, "output", t.OutputSchema); err != nil {
			return err
		}
	}
	r := &registered{tool: t, input: input}
	h := t.Handler
	for _, m := range slices.Backward(g.chain) {
		h = m(h)
	}
	r.handler = h

	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	if _, dup := g.tools[t.Name]; dup {
		g.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrDuplicateTool, t.Name)
	}
	g.tools[t.Name] = r
	g.order = append(g.order, t.Name)
	g.mu.Unlock()

	g.srv.AddTool(mcpTool(&r.tool), g.dispatch(r))
	return nil
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
	mt := mcp.Tool{
		Name:            t.Name,
		Title:           t.Title,
		Description:     t.Description,
		RawInputSchema:  t.InputSchema,
		RawOutputSchema: t.OutputSchema,
		Annotations:     annotations(t),
	}
	return mt
}

func annotations(t *Tool) mcp.ToolAnnotation {
	yes, no := true, false
	a := mcp.ToolAnnotation{Title: t.Title, OpenWorldHint: &yes}
	switch t.Risk {
	case ReadOnly:
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = &yes, &no, &yes
	case Mutating:
		a.ReadOnlyHint, a.DestructiveHint = &no, &yes
	default:
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = &no, &yes, &no
	}
	return a
}

// dispatch adapts a registered tool to mcp-go: it builds the Call and runs
// the composed chain. Errors become error results, so a tool failure is
// never a protocol error.
func (g *Gateway) dispatch(r *registered) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		call := &Call{
			Tool:    &r.tool,
			Request: req,
			ID:      newCallID(),
			Started: g.cfg.Now(),
			schema:  r.input,
		}
		g.mu.RLock()
		closed := g.closed
		g.mu.RUnlock()
		if closed {
			return ErrorResult("rigout is shutting down; %s did not run", r.tool.Name), nil
		}
		args, err := decodeArgs(req.Params.Arguments)
		if err != nil {
			// Refused by checkArgs, inside the chain, so it is audited.
			args = map[string]any{}
			call.argsErr = &ArgumentError{Tool: r.tool.Name, Problems: []string{err.Error()}}
		}
		call.Args = args
		res, err := r.handler(ctx, call)
		settleNotifications(ctx, call)
		if err != nil {
			return ErrorResult("%s failed: %v", r.tool.Name, err), nil
		}
		if res == nil {
			return ErrorResult("%s returned no result", r.tool.Name), nil
		}
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
