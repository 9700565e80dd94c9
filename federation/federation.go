package federation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
)

// Defaults of Config.
const (
	DefaultCallTimeout    = 2 * time.Minute
	DefaultRefresh        = 5 * time.Minute
	DefaultPing           = 15 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	DefaultMaxTools       = 128
	// DefaultMaxResult caps what one downstream call passes on to the
	// caller: 1 MiB, what the gateway keeps of each output stream of a
	// command (exec.DefaultMaxOutput).
	DefaultMaxResult = 1 << 20
	// DefaultMaxMessage caps one message read from a downstream: a longer
	// one fails its call and restarts the connection, so a downstream
	// cannot make the gateway hold more than this per message.
	DefaultMaxMessage = 16 << 20
)

// StatusTool is the name of the tool that reports the downstreams' state.
const StatusTool = "downstream_status"

// Separator joins a downstream's name and its tool's: a__x.
const Separator = "__"

// Config configures a Federation.
type Config struct {
	// Servers are the downstream MCP servers.
	Servers []Server
	// Credentials resolves the Token of HTTP servers. Required when a
	// server has one.
	Credentials Credentials
	// Logger receives operator logs, downstream stderr included. If nil,
	// logs are discarded.
	Logger *slog.Logger
	// Refresh is how often each downstream's tool list is fetched again,
	// besides on notifications/tools/list_changed. If zero,
	// DefaultRefresh (5m).
	Refresh time.Duration
	// Ping is how often a connected downstream is pinged; one that does
	// not answer within Ping is restarted. If zero, DefaultPing (15s).
	Ping time.Duration
	// ConnectTimeout bounds starting a downstream and listing its tools.
	// If zero, DefaultConnectTimeout (30s).
	ConnectTimeout time.Duration
	// MaxTools caps the tools served from one downstream; the rest are
	// left out and reported. If zero, DefaultMaxTools (128).
	MaxTools int
	// MinBackoff and MaxBackoff bound the wait before restarting a
	// downstream, doubled after each failure. If zero, 250ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// Sandbox confines stdio servers: each starts inside it as a local
	// command does (exec.Local.StartPipes), in the view of the principal
	// the sandbox's ViewConfig.Principal returns for the server's
	// context, in which [DownstreamFromContext] names the server (the
	// rigout binary gives each one a principal of its own,
	// "federation:NAME", with the work areas). Required when there is a
	// stdio server, unless UnsafeNoSandbox.
	Sandbox *exec.Sandbox
	// UnsafeNoSandbox, if true, starts stdio servers without a Sandbox,
	// unconfined: only what they are given stands between them and the
	// machine.
	UnsafeNoSandbox bool
}

// downstreamKey is the context key of [DownstreamFromContext].
type downstreamKey struct{}

// DownstreamFromContext returns the name of the downstream server a
// context starts, in the context a stdio server's process is started
// with: a sandbox's ViewConfig.Principal reads it to give the server's
// view a principal of its own.
func DownstreamFromContext(ctx context.Context) (name string, ok bool) {
	name, ok = ctx.Value(downstreamKey{}).(string)
	return name, ok
}

// Server is one downstream MCP server: Command (stdio) or URL
// (streamable HTTP), not both.
type Server struct {
	// Name is the namespace: lower-case letters, digits and '-', 1-24
	// bytes. Tool x is served as Name__x.
	Name string
	// Command is the program and its arguments, started without a shell.
	Command []string
	// Env is added to the command's environment, which otherwise holds
	// only PATH, HOME, USER, LANG, LC_ALL, TZ and TMPDIR of the gateway's:
	// none of the gateway's secrets.
	Env map[string]string
	// Dir is the command's working directory. If empty, the gateway's.
	Dir string
	// URL is a streamable HTTP endpoint: https, or http on a loopback
	// address.
	URL string
	// Token names the bearer credential sent to URL, resolved through
	// Config.Credentials at every connection. Empty sends none.
	Token string
	// Allow lists the downstream tool names served (path.Match globs);
	// empty serves all. Deny removes names, and wins over Allow.
	Allow, Deny []string
	// ReadOnlyTools lists downstream tools served as risk ReadOnly, so
	// read-only tokens may call them. Every other tool is Exec, whatever
	// the downstream's annotations say.
	ReadOnlyTools []string
	// PathArgs names the downstream tools' arguments that are file paths
	// (a string, or a list of strings): for a token confined to file roots
	// (auth.Scopes.Roots), each value must fall inside the roots or the
	// call is refused before it reaches the downstream, and the downstream
	// receives the resolved absolute path. A stdio server's relative paths
	// are taken from Dir (the gateway's working directory if empty) and
	// its symbolic links resolved on this machine's file system; an HTTP
	// server's paths are judged lexically, and a relative one is refused.
	// If nil, [DefaultPathArgs] decides, for arguments the schema declares
	// as strings (or lists of them) or gives no type; an empty, non-nil
	// list declares none.
	PathArgs []string
	// Timeout bounds each call. If zero, DefaultCallTimeout (2m).
	Timeout time.Duration
	// EnvCredentials adds variables to a stdio server's environment whose
	// values are credential references (VAR → reference), resolved
	// through Config.Credentials at every start, so the value need not be
	// in the configuration. The values are masked in the server's stderr
	// as logged, in its results and in its status.
	EnvCredentials map[string]string
	// MaxResult caps the bytes of one call's result passed on to the
	// caller (text, images, resources, structured content); the rest is
	// cut with a marker that says so. If zero, DefaultMaxResult (1 MiB).
	MaxResult int
	// MaxMessage caps one message read from the server; a longer one
	// fails the call clearly and the connection is restarted. If zero,
	// DefaultMaxMessage (16 MiB). It should exceed MaxResult.
	MaxMessage int
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// nameRE is what a downstream name may hold; check also bounds its length
// to 24 (a counted repetition would compile to that many copies of its
// class at every start).
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

func (s *Server) check() error {
	if len(s.Name) > 24 || !nameRE.MatchString(s.Name) {
		return fmt.Errorf("federation: downstream name %q: want 1-24 of [a-z0-9-], starting with a letter or digit", s.Name)
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return fmt.Errorf("federation: downstream %s: give command or url, not both", s.Name)
	case len(s.Command) == 0 && s.URL == "":
		return fmt.Errorf("federation: downstream %s: needs command or url", s.Name)
	case len(s.Command) > 0 && s.Command[0] == "":
		return fmt.Errorf("federation: downstream %s: empty program name", s.Name)
	case len(s.Command) > 0 && s.Token != "":
		return fmt.Errorf("federation: downstream %s: token applies to url servers only", s.Name)
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("federation: downstream %s: url %q is not an absolute URL", s.Name, s.URL)
		}
		switch {
		case u.Scheme == "https":
		case u.Scheme == "http" && isLoopback(u.Hostname()):
		default:
			return fmt.Errorf("federation: downstream %s: url %q: want https (plain http only to a loopback address)", s.Name, s.URL)
		}
	}
	for _, a := range s.PathArgs {
		if a == "" {
			return fmt.Errorf("federation: downstream %s: empty name in path_args", s.Name)
		}
	}
	for _, g := range append(append(slices.Clone(s.Allow), s.Deny...), s.ReadOnlyTools...) {
		if _, err := matchGlob(g, ""); err != nil {
			return fmt.Errorf("federation: downstream %s: bad pattern %q: %w", s.Name, g, err)
		}
	}
	if s.Timeout < 0 {
		return fmt.Errorf("federation: downstream %s: negative timeout", s.Name)
	}
	if s.MaxResult < 0 || s.MaxMessage < 0 {
		return fmt.Errorf("federation: downstream %s: negative size limit", s.Name)
	}
	if len(s.EnvCredentials) > 0 && s.URL != "" {
		return fmt.Errorf("federation: downstream %s: env credentials apply to command servers only", s.Name)
	}
	for k, ref := range s.EnvCredentials {
		switch {
		case !envNameRE.MatchString(k):
			return fmt.Errorf("federation: downstream %s: env credential %q is not a valid variable name", s.Name, k)
		case ref == "":
			return fmt.Errorf("federation: downstream %s: env credential %s has an empty reference", s.Name, k)
		}
		if _, ok := s.Env[k]; ok {
			return fmt.Errorf("federation: downstream %s: %s is set by both env and env credentials", s.Name, k)
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Federation connects downstream MCP servers and serves their tools
// through one gateway. Build it with New, Start it on a gateway, Close it
// when done. It is safe for concurrent use.
type Federation struct {
	cfg   Config
	log   *slog.Logger
	down  []*downstream
	local *exec.Local // starts the stdio servers

	// mu protects the following.
	mu      sync.Mutex
	gw      *rigout.Gateway
	cancel  context.CancelFunc
	summary string // the status tool's last description
	wg      sync.WaitGroup
}

// New checks cfg and builds a Federation; nothing starts until Start.
func New(cfg Config) (*Federation, error) {
	c := cfg
	c.Servers = slices.Clone(cfg.Servers)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Refresh <= 0 {
		c.Refresh = DefaultRefresh
	}
	if c.Ping <= 0 {
		c.Ping = DefaultPing
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxTools <= 0 {
		c.MaxTools = DefaultMaxTools
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 250 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	f := &Federation{cfg: c, log: c.Logger}
	// The stdio servers' own runner: an empty base environment (each
	// command gets only its Env and credentials), the given sandbox.
	f.local = &exec.Local{Env: []string{}, Sandbox: c.Sandbox, UnsafeNoSandbox: c.UnsafeNoSandbox, Grace: time.Second}
	seen := map[string]bool{}
	for i := range c.Servers {
		s := c.Servers[i]
		if err := s.check(); err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("federation: downstream %s is configured twice", s.Name)
		}
		seen[s.Name] = true
		if len(s.Command) > 0 {
			if err := exec.CheckSandboxed(f.local); err != nil {
				return nil, fmt.Errorf("federation: stdio downstream %s needs Config.Sandbox (or Config.UnsafeNoSandbox, to start it unconfined): %w", s.Name, err)
			}
		}
		if (s.Token != "" || len(s.EnvCredentials) > 0) && c.Credentials == nil {
			return nil, fmt.Errorf("federation: downstream %s has a token or env credentials but no Credentials resolve them", s.Name)
		}
		if s.Timeout == 0 {
			s.Timeout = DefaultCallTimeout
		}
		if s.MaxResult == 0 {
			s.MaxResult = DefaultMaxResult
		}
		if s.MaxMessage == 0 {
			s.MaxMessage = DefaultMaxMessage
		}
		f.down = append(f.down, newDownstream(f, s))
	}
	return f, nil
}

// Start connects every downstream and registers its tools on gw, with the
// status tool; it waits for each downstream's first attempt, at most
// ConnectTimeout, then keeps them supervised in the background until
// Close. A downstream that cannot be reached does not fail Start: it is
// reported and retried.
func (f *Federation) Start(ctx context.Context, gw *rigout.Gateway) error {
	f.mu.Lock()
	if f.gw != nil {
		f.mu.Unlock()
		return errors.New("federation: already started")
	}
	f.gw = gw
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.cancel = cancel
	f.mu.Unlock()
	f.publish()
	var first sync.WaitGroup
	for _, d := range f.down {
		first.Add(1)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			d.run(runCtx, first.Done)
		}()
	}
	done := make(chan struct{})
	go func() { first.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(f.cfg.ConnectTimeout):
	case <-ctx.Done():
	}
	return nil
}

// Close stops every downstream (their processes are killed) and waits for
// the supervisors. The tools stay registered until the gateway closes.
func (f *Federation) Close() error {
	f.mu.Lock()
	cancel := f.cancel
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	f.wg.Wait()
	return nil
}

// State is a downstream's condition.
type State string

// States.
const (
	Connecting State = "connecting"
	Ready      State = "ready"
	Down       State = "down"
	Stopped    State = "stopped"
)

// Status is one downstream's state, for the status tool and /health.
type Status struct {
	Name      string    `json:"name"`
	Transport string    `json:"transport"`
	Protocol  string    `json:"protocol,omitempty"` // the MCP revision negotiated
	State     State     `json:"state"`
	Tools     int       `json:"tools"`
	Restarts  int       `json:"restarts"`
	LastError string    `json:"last_error,omitempty"` // why it last went down, kept after recovery
	NextRetry time.Time `json:"next_retry,omitzero"`
	Problems  []string  `json:"problems,omitempty"`
}

// Status reports every downstream, in configuration order.
func (f *Federation) Status() []Status {
	out := make([]Status, 0, len(f.down))
	for _, d := range f.down {
		out = append(out, d.status())
	}
	return out
}

// Health is the /health field: ok is false when a downstream is not
// ready.
func (f *Federation) Health() map[string]any {
	ok := true
	m := map[string]any{}
	for _, s := range f.Status() {
		if s.State != Ready {
			ok = false
		}
		e := map[string]any{"state": string(s.State), "tools": s.Tools, "restarts": s.Restarts}
		if s.LastError != "" {
			e["last_error"] = s.LastError
		}
		if len(s.Problems) > 0 {
			e["problems"] = len(s.Problems)
		}
		m[s.Name] = e
	}
	return map[string]any{"ok": ok, "servers": m}
}

// summary is the status tool's description: what tools/list shows.
func (f *Federation) describe() string {
	var parts []string
	for _, s := range f.Status() {
		p := fmt.Sprintf("%s: %s, %d tools", s.Name, s.State, s.Tools)
		if len(s.Problems) > 0 {
			p += fmt.Sprintf(", %d problems", len(s.Problems))
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		parts = []string{"none configured"}
	}
	return "State of the downstream MCP servers whose tools appear here as NAME__TOOL (state, tool count, problems, last error). Now: " +
		strings.Join(parts, "; ") + "."
}

// publish (re)registers the status tool with a description that carries
// the current summary; an unchanged summary registers nothing.
func (f *Federation) publish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gw == nil {
		return
	}
	desc := f.describe()
	if desc == f.summary {
		return
	}
	f.summary = desc
	t := rigout.Tool{
		Name:        StatusTool,
		Description: desc,
		Risk:        rigout.ReadOnly,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return rigout.JSONResult(map[string]any{"downstreams": f.Status()})
		},
	}
	if err := f.gw.SetTools(StatusTool, []rigout.Tool{t}); err != nil && !errors.Is(err, rigout.ErrClosed) {
		f.log.Error("federation: status tool", "err", err)
	}
}
