package assembly

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/federation"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/internal/hostsfile"
	"github.com/rigout/rigout/redact"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/activity"
	credtool "github.com/rigout/rigout/tools/credentials"
	"github.com/rigout/rigout/tools/docker"
	hostsfamily "github.com/rigout/rigout/tools/hosts"
	"github.com/rigout/rigout/tools/packages"
	"github.com/rigout/rigout/tools/process"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/tools/system"
	"github.com/rigout/rigout/tools/terminal"
)

// The families the assembly serves, by the names [Without] takes. System,
// Docker and Packages are served only when the configuration turns them
// on (tool_families); Credentials only with a credentials section,
// Activity only with a ledger, Hosts only with SSH, Downstream only with
// downstream servers.
const (
	Shell       = "shell"       // execute_command
	Process     = "process"     // the background processes' tools
	Files       = "files"       // file_operations, search_files, bulk_file_transfer
	Terminal    = "terminal"    // create_terminal_session, …
	System      = "system"      // system_monitoring, get_hardware_info
	Docker      = "docker"      // docker_operations
	Packages    = "packages"    // install_software, environment_setup
	Credentials = "credentials" // the credential store's tool
	Activity    = "activity"    // get_server_activity, on the ledger
	Hosts       = "hosts"       // the SSH hosts' tools
	Downstream  = "downstream"  // downstream MCP servers' tools, NAME__TOOL
)

// FamilyNames returns the names of the families the assembly knows, in
// the order it builds them.
func FamilyNames() []string {
	return []string{Shell, Process, Files, Terminal, System, Docker, Packages, Credentials, Activity, Hosts, Downstream}
}

// Ledger is what the assembly needs of an audit ledger: the write and
// read sides, the argument digest, health. *sqlite.Ledger and
// *postgres.Ledger are Ledgers.
type Ledger interface {
	audit.Recorder
	audit.Querier
	DigestArgs(raw []byte) string
	Healthy() error
	Close() error
}

// Config is what [New] builds the gateway from: the configuration file
// and the settings the rigout binary takes as flags. The zero value of a
// field is the binary's default unless its doc says otherwise; File and
// StateDir are required.
type Config struct {
	// File is the configuration file (package config). Required; the
	// zero config.File is the defaults.
	File *config.File
	// StateDir is the state directory: background processes' output,
	// rigout's known_hosts, the saved hosts, the sandbox's private /tmp.
	// The sandbox hides it from commands. Required.
	StateDir string
	// ConfigPath and AuditDB are the files the configuration and a ledger
	// outside the state directory came from, if any: commands' views
	// hide them (they hold digests, names of secrets, the ledger's key).
	ConfigPath, AuditDB string

	// Ledger records every call. Nil: calls are not audited. Unless
	// CloseLedger is set, the caller closes it, after [Server.Close], so
	// that it can record a last row (server.stop) in between; with
	// CloseLedger, Close closes it last, and so does a failing New.
	Ledger      Ledger
	CloseLedger bool
	// UnsafeAuditBestEffort runs calls the ledger cannot record (or the
	// file's audit.unsafe_best_effort).
	UnsafeAuditBestEffort bool

	// Principal is who calls are attributed to when their context carries
	// no auth.Principal (stdio, in-process clients); nil: rigout.Config's
	// default. The HTTP front puts each call's principal in its context.
	Principal *auth.Principal
	// Approvals is the operator approval queue; nil: a call a confirm rule
	// holds back is refused unless its client can answer.
	Approvals *rigout.ApprovalConfig
	// Version is the version the gateway reports to clients.
	Version string
	// Logger receives the operator's log; nil discards it.
	Logger *slog.Logger

	// Getenv reads the variables the file names (tokens, credential
	// aliases, downstream tokens); nil is os.Getenv. The binary reads
	// through the secrets it moved off its environment.
	Getenv func(string) string
	// Private reports whether a variable of the gateway's environment
	// must not reach a command (see exec.Local.Private).
	Private func(string) bool
	// Secrets are values masked in every output, besides those the
	// credential store resolves.
	Secrets []string

	// WorkDir is the working directory of commands that name none;
	// "" is the gateway's.
	WorkDir string
	// DefaultTimeout and MaxOutput are the shell family's (zero: its
	// defaults).
	DefaultTimeout time.Duration
	MaxOutput      int
	// MaxConcurrent and MaxConcurrentPerPrincipal cap calls in flight
	// (zero: rigout's defaults).
	MaxConcurrent, MaxConcurrentPerPrincipal int
	// TerminalIdle, MaxTerminals and MaxTerminalsPerPrincipal are the
	// terminal sessions' (zero: the sessions package's defaults).
	TerminalIdle                           time.Duration
	MaxTerminals, MaxTerminalsPerPrincipal int

	// NoSSH runs commands on this machine only: no router, no hosts.
	NoSSH bool
	// HostKeys overrides the file's ssh.host_keys ("strict" by default).
	HostKeys string
	// SSHConfig and KnownHosts are the user's OpenSSH files, read only
	// (default ~/.ssh/config and ~/.ssh/known_hosts).
	SSHConfig, KnownHosts string

	// Sandbox is a sandbox built beforehand by [NewSandbox] from this
	// Config (while the ledger opens); nil: New builds it. New owns it
	// from then on: it closes it when it fails, and Close does.
	Sandbox *exec.Sandbox
	// SandboxLater builds the sandbox's ruleset when the first command
	// needs it or [Server.StartSandbox] is called, not at once.
	SandboxLater bool
	// RequireSandbox refuses to start unless the kernel enforces the
	// whole sandbox (Landlock ABI 6).
	RequireSandbox bool
	// UnsafeNoSandbox runs local commands without the kernel sandbox:
	// only the command policy guards them.
	UnsafeNoSandbox bool
	// UnsafeNoViews runs local commands in the Landlock sandbox alone,
	// without a view of the machine per principal.
	UnsafeNoViews bool
}

// Option changes what [New] serves: see [Without], [WithTools],
// [WithFamily] and [WithGatewayConfig].
type Option func(*options) error

type options struct {
	without map[string]bool
	extra   []extraFamily
	hooks   []func(*Server, *rigout.Config) error
}

type extraFamily struct {
	name  string
	build func(*Server) ([]rigout.Tool, string, error)
}

// Without leaves out families by name (see [FamilyNames]); an unknown
// name is an error.
func Without(families ...string) Option {
	return func(o *options) error {
		for _, f := range families {
			if !slices.Contains(FamilyNames(), f) {
				return fmt.Errorf("assembly: Without(%q): no such family; known: %s", f, strings.Join(FamilyNames(), ", "))
			}
			o.without[f] = true
		}
		return nil
	}
}

// WithTools serves tools of the embedder's beside the families, through
// the same chain (authorization, policy, limits, audit).
func WithTools(tools ...rigout.Tool) Option {
	return WithFamily("tools", func(*Server) ([]rigout.Tool, string, error) { return tools, "", nil })
}

// WithFamily serves a family of the embedder's, built once the shared
// resources are: build receives the Server, whose [Server.Local],
// [Server.Router], [Server.Gate], [Server.Processes] and [Server.Sandbox]
// it may use (the gateway itself does not exist yet), and returns the
// tools and a sentence for the initialize instructions ("" for none). A
// name that is one of [FamilyNames] is an error.
func WithFamily(name string, build func(*Server) (tools []rigout.Tool, instructions string, err error)) Option {
	return func(o *options) error {
		if slices.Contains(FamilyNames(), name) {
			return fmt.Errorf("assembly: WithFamily(%q): a built-in family has that name", name)
		}
		o.extra = append(o.extra, extraFamily{name, build})
		return nil
	}
}

// WithGatewayConfig lets fn change the gateway's configuration just
// before the gateway is built: wrap the ledger, add a middleware (the
// rigout binary's metrics do). fn receives the Server, whose shared
// resources exist.
func WithGatewayConfig(fn func(*Server, *rigout.Config) error) Option {
	return func(o *options) error {
		o.hooks = append(o.hooks, fn)
		return nil
	}
}

// Server is the reference assembly: the gateway with every family the
// configuration turns on, and the resources they share. Its methods are
// safe for concurrent use; Close once, after serving.
type Server struct {
	*rigout.Gateway

	cfg    Config
	logger *slog.Logger
	getenv func(string) string

	gate       *gate.Gate
	local      *exec.Local
	router     *remote.Router // nil with NoSSH
	sandbox    *exec.Sandbox  // nil with UnsafeNoSandbox
	processes  *sessions.Manager
	creds      *credentials.Store     // nil without a credentials section
	downstream *federation.Federation // nil without downstream servers

	closeOnce sync.Once
	closeErr  error
	// closers run last first by Close: what was built last is closed
	// first.
	closers []func() error
}

// onClose registers fn with Close.
func (s *Server) onClose(fn func() error) { s.closers = append(s.closers, fn) }

// Close closes everything New built, last built first: the downstream
// servers, the gateway, the background processes and terminals, the SSH
// router, the sandbox, then the ledger if Config.CloseLedger says so.
// Only the first call does anything; later calls return its error.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		for i := len(s.closers) - 1; i >= 0; i-- {
			s.closeErr = errors.Join(s.closeErr, s.closers[i]())
		}
	})
	return s.closeErr
}

// Local is the local executor every family runs commands on.
func (s *Server) Local() *exec.Local { return s.local }

// Router is the SSH router, nil with Config.NoSSH.
func (s *Server) Router() *remote.Router { return s.router }

// hosts is where the families reach hosts: the SSH router, or nil (this
// machine only) with Config.NoSSH. A nil router must not become a
// non-nil exec.Hosts.
func (s *Server) hosts() exec.Hosts {
	if s.router == nil {
		return nil
	}
	return s.router
}

// Sandbox is the kernel sandbox of local commands, nil with
// Config.UnsafeNoSandbox.
func (s *Server) Sandbox() *exec.Sandbox { return s.sandbox }

// Processes is the manager of background processes and terminal
// sessions.
func (s *Server) Processes() *sessions.Manager { return s.processes }

// Ledger is Config.Ledger, nil without one.
func (s *Server) Ledger() Ledger { return s.cfg.Ledger }

// Gate is the command policy's gate every command-running family shares.
func (s *Server) Gate() *gate.Gate { return s.gate }

// Downstream is the federation of downstream servers, nil without any.
func (s *Server) Downstream() *federation.Federation { return s.downstream }

// New builds the gateway cfg describes, with every family its
// configuration turns on, changed by opts. It fails closed: a
// configuration mistake, a sandbox the kernel cannot give where one is
// required, a narrow token without per-principal views, are errors, and
// everything built so far is closed (cfg.Sandbox too, and cfg.Ledger with
// cfg.CloseLedger).
func New(cfg Config, opts ...Option) (_ *Server, err error) {
	c := cfg
	c.setDefaults()
	s := &Server{cfg: c, logger: c.Logger, getenv: c.Getenv}
	// What the caller handed over is closed like what New builds: last.
	if c.CloseLedger && c.Ledger != nil {
		s.onClose(c.Ledger.Close)
	}
	if c.Sandbox != nil {
		s.onClose(c.Sandbox.Close)
	}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	o := options{without: map[string]bool{}}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if c.File == nil {
		return nil, errors.New("assembly: Config.File is nil: give &config.File{} for the defaults")
	}
	if c.StateDir == "" {
		return nil, errors.New("assembly: Config.StateDir is empty: the assembly keeps background output and known_hosts there")
	}
	policy, err := c.File.CommandPolicy()
	if err != nil {
		return nil, err
	}
	if s.gate, err = gate.New(gate.Config{Policy: policy, Logger: s.logger}); err != nil {
		return nil, err
	}
	rate, err := c.File.RateLimit.Limits()
	if err != nil {
		return nil, err
	}
	sshCfg, err := c.routerConfig(s.logger, !o.without[Docker])
	if err != nil {
		return nil, err
	}
	s.sandbox = c.Sandbox
	if s.sandbox == nil {
		if s.sandbox, err = c.newSandbox(policy, !o.without[Docker], s.logger); err != nil {
			return nil, err
		}
		if s.sandbox != nil {
			s.onClose(s.sandbox.Close)
		}
	}
	if err := c.checkViews(s.sandbox, s.logger); err != nil {
		return nil, err
	}
	s.local = &exec.Local{Private: c.Private, Sandbox: s.sandbox, UnsafeNoSandbox: c.UnsafeNoSandbox}
	if sshCfg != nil {
		sshCfg.Local = s.local
		if c.Ledger != nil {
			sshCfg.OnHostKey = hostsfamily.HostKeyRecorder(c.Ledger)
		}
		if s.router, err = remote.NewRouter(*sshCfg); err != nil {
			return nil, fmt.Errorf("ssh: %w", err)
		}
		s.onClose(s.router.Close)
	}
	// Background processes: commands still running after wait_seconds are
	// handed off; their output is spooled inside the state directory, which
	// the sandbox hides from commands where it can.
	mc := sessions.Config{Local: s.local, SpoolDir: c.StateDir, Logger: s.logger, TerminalIdle: c.TerminalIdle, Instance: c.instanceName(),
		MaxTerminals: c.MaxTerminals, MaxTerminalsPerPrincipal: c.MaxTerminalsPerPrincipal}
	if c.Ledger != nil {
		mc.Audit = c.Ledger
	}
	if s.processes, err = sessions.New(mc); err != nil {
		return nil, err
	}
	s.onClose(s.processes.Close)
	if s.creds, err = c.credentialStore(); err != nil {
		return nil, err
	}
	tools, instructions, err := s.families(o)
	if err != nil {
		return nil, err
	}
	return s, s.gateway(o, tools, instructions, rate)
}

// setDefaults fills in what the zero Config leaves to the assembly.
func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
}

// families builds the families o leaves in, in the binary's order, and
// returns their tools and the initialize instructions.
func (s *Server) families(o options) ([]rigout.Tool, []string, error) {
	c, on := &s.cfg, func(name string) bool { return !o.without[name] }
	var tools []rigout.Tool
	instructions := []string{"rigout runs commands for you on this machine."}
	var later []string // instructions after the containment sentence
	if on(Shell) {
		sh, err := shell.New(shell.Config{
			Local: s.local, Hosts: s.hosts(), Gate: s.gate, Processes: s.processes,
			WorkDir: c.WorkDir, DefaultTimeout: c.DefaultTimeout, MaxOutput: c.MaxOutput,
			Credentials: s.creds,
		})
		if err != nil {
			return nil, nil, err
		}
		tools, instructions = append(tools, sh.Tools()...), append(instructions, sh.Instructions())
	}
	if on(Process) {
		pf, err := process.New(process.Config{Manager: s.processes})
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, pf.Tools()...)
	}
	if on(Files) {
		ff, err := c.filesFamily(s.router, s.sandbox, s.gate, s.creds)
		if err != nil {
			return nil, nil, err
		}
		tools, instructions = append(tools, ff.Tools()...), append(instructions, ff.Instructions())
	}
	if on(Terminal) {
		tf, err := terminal.New(terminal.Config{Manager: s.processes, Hosts: s.hosts(), Gate: s.gate, WorkDir: c.WorkDir, Credentials: s.creds})
		if err != nil {
			return nil, nil, err
		}
		tools, instructions = append(tools, tf.Tools()...), append(instructions, tf.Instructions())
	}
	instructions = append(instructions, "Containment: "+s.Containment()+".")
	s.logger.Info("descendant tracking", "status", s.local.Tracking().String())
	ff := c.File.Families
	if ff.System && on(System) {
		sf, err := system.New(system.Config{Local: s.local, Hosts: s.hosts(), Gate: s.gate})
		if err != nil {
			return nil, nil, err
		}
		tools, later = append(tools, sf.Tools()...), append(later, sf.Instructions())
	}
	if ff.Docker && on(Docker) {
		df, err := docker.New(docker.Config{Local: s.local, Hosts: s.hosts(), Gate: s.gate})
		if err != nil {
			return nil, nil, err
		}
		tools, later = append(tools, df.Tools()...), append(later, df.Instructions())
	}
	if ff.Packages && on(Packages) {
		pf, err := packages.New(packages.Config{Local: s.local, Hosts: s.hosts(), Gate: s.gate, Processes: s.processes, PipOptions: ff.PipOptions})
		if err != nil {
			return nil, nil, err
		}
		tools, later = append(tools, pf.Tools()...), append(later, pf.Instructions())
	}
	// The credentials tool is served only with a store: without one it
	// would only say so, and the default tools/list stays small.
	if s.creds != nil && on(Credentials) {
		f, err := credtool.New(credtool.Config{Store: s.creds})
		if err != nil {
			return nil, nil, err
		}
		tools, later = append(tools, f.Tools()...), append(later, f.Instructions())
	}
	if c.Ledger != nil && on(Activity) {
		act, err := activity.New(activity.Config{Ledger: c.Ledger})
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, act.Tools()...)
	}
	if s.router != nil && on(Hosts) {
		hf, err := hostsfamily.New(hostsfamily.Config{Router: s.router, Store: hostsfile.Store(c.File, c.StateDir)})
		if err != nil {
			return nil, nil, err
		}
		tools, later = append(tools, hf.Tools()...), append(later, hf.Instructions())
	}
	for _, x := range o.extra {
		t, in, err := x.build(s)
		if err != nil {
			return nil, nil, fmt.Errorf("family %s: %w", x.name, err)
		}
		tools = append(tools, t...)
		if in != "" {
			later = append(later, in)
		}
	}
	return tools, append(instructions, later...), nil
}

// gateway builds the gateway on the families' tools, then starts the
// downstream servers on it.
func (s *Server) gateway(o options, tools []rigout.Tool, instructions []string, rate rigout.RateLimits) error {
	c := &s.cfg
	known, err := redact.New()
	if err != nil {
		return err
	}
	for _, v := range c.Secrets {
		if v == "" {
			continue
		}
		if err := known.Add(v); errors.Is(err, redact.ErrShortSecret) {
			s.logger.Warn("a secret shorter than 8 bytes cannot be masked in output; use a longer one", "min", redact.MinSecretLen)
		}
	}
	cfg := rigout.Config{
		Version:                   c.Version,
		Secrets:                   known,
		Instructions:              strings.Join(instructions, " "),
		Tools:                     tools,
		Logger:                    s.logger,
		MaxConcurrent:             c.MaxConcurrent,
		MaxConcurrentPerPrincipal: c.MaxConcurrentPerPrincipal,
		RateLimit:                 rate,
		UnsafeAuditBestEffort:     c.UnsafeAuditBestEffort || c.File.Audit.UnsafeBestEffort,
		AuditArgValues:            c.File.Audit.StoreArgs,
		Principal:                 c.Principal,
		Approvals:                 c.Approvals,
		// Each call's commands are marked with its ledger call ID, so
		// that a start after this gateway dies mid-call finds and ends
		// what the call left running.
		Middleware: []rigout.Middleware{markCalls},
	}
	if c.Ledger != nil {
		cfg.Audit = c.Ledger
	}
	// Replicas sharing a ledger share its chain key (audit.key_env): the
	// approval key is derived from it, so that what one replica signs (a
	// question's requestState, an approval's digest) another checks alike.
	if key, err := c.File.Audit.ChainKey(c.Getenv); err != nil {
		return err
	} else if key != nil {
		cfg.ApprovalKey = rigout.DeriveApprovalKey(key)
	}
	// On PostgreSQL the approval queue and the spent answers are the
	// ledger's, shared by the gateways: a call held on one is decided on
	// any. Without the shared key (the unsafe database-held chain key)
	// they stay this gateway's.
	if st, ok := c.Ledger.(rigout.ApprovalStore); ok {
		if cfg.ApprovalKey != nil {
			cfg.ApprovalStore = st
			s.logger.Info("approvals shared through the PostgreSQL ledger: the operator queue and answered questions")
		} else {
			s.logger.Warn("approvals are this gateway's alone: sharing them through the PostgreSQL ledger needs audit.key_env, from which the gateways derive their approval key")
		}
	}
	if r := s.router; r != nil {
		cfg.ResolveHost = func(_ context.Context, host string) ([]rigout.HostReach, error) {
			rs, err := r.Reaches(host)
			out := make([]rigout.HostReach, len(rs))
			for i, x := range rs {
				out[i] = rigout.HostReach{Name: x.Name, AdHoc: x.AdHoc}
			}
			return out, err
		}
	}
	for _, h := range o.hooks {
		if err := h(s, &cfg); err != nil {
			return err
		}
	}
	if s.Gateway, err = rigout.New(cfg); err != nil {
		return err
	}
	s.onClose(s.Gateway.Close)
	if o.without[Downstream] {
		return nil
	}
	if s.downstream, err = c.downstreams(s.Gateway, s.sandbox, s.creds, s.logger); err != nil {
		return err
	}
	if s.downstream != nil {
		s.onClose(s.downstream.Close)
	}
	return nil
}

// markCalls puts each call's ID in its context (exec.WithCall): the local
// executor names the call's cgroup, or marks its processes, with it.
func markCalls(next rigout.Handler) rigout.Handler {
	return func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
		return next(exec.WithCall(ctx, call.ID), call)
	}
}

// Containment describes, in a sentence, what guards local commands: for
// the initialize instructions, which name nothing that changes from one
// start to the next (the cgroup's path holds the PID), so that a client's
// prompt cache keeps them.
func (s *Server) Containment() string {
	if s.sandbox == nil {
		return "no kernel sandbox (--unsafe-no-sandbox): only the command policy guards local commands"
	}
	tr := s.local.Tracking()
	switch tr.Mode {
	case exec.TrackCgroup:
		tr.Where = "a directory of its own"
	case exec.TrackMarker:
		tr.Reason = "no cgroup v2 for calls; the operator's log says why"
	}
	return s.sandbox.Status().String() + "; " + tr.String()
}

// HealthFields is the /health body's gateway part: the ledger, the
// sandbox, how descendants are tracked, the downstream servers.
func (s *Server) HealthFields() map[string]any {
	m := s.Gateway.Health().Fields()
	if s.sandbox == nil {
		m["sandbox"] = "off (--unsafe-no-sandbox)"
	} else {
		st := s.sandbox.Status()
		sm := map[string]any{"enforced": st.Enforced, "abi": st.ABI, "views": st.Views, "summary": st.String()}
		if st.ViewsReason != "" {
			sm["views_unavailable"] = st.ViewsReason
		}
		m["sandbox"] = sm
	}
	m["descendants"] = string(s.local.Tracking().Mode)
	if s.downstream != nil {
		m["downstream"] = s.downstream.Health()
	}
	return m
}

// StartSandbox starts building the sandbox's ruleset in the background,
// for a Config with SandboxLater; it does nothing without a sandbox.
func (s *Server) StartSandbox() {
	if s.sandbox != nil {
		startSandbox(s.sandbox, s.logger)
	}
}

// Check reports what is wrong with the configuration file f, as `rigout
// config check` does: [config.File.Check], then what needs the executor
// to be judged, without starting anything: the SSH host key policy
// (hostKeys overrides the file's, as RIGOUT_HOST_KEYS does), the hosts as
// the SSH router reads them, the downstream servers as federation builds
// them. getenv reads the variables the file names; nil is os.Getenv.
func Check(f *config.File, hostKeys string, getenv func(string) string) []error {
	if getenv == nil {
		getenv = os.Getenv
	}
	problems := f.Check(getenv)
	// Built to be checked, never started: no sandbox is needed.
	if _, err := federationOf(f, downstreamCredentials{getenv: getenv}, nil, true, nil); err != nil {
		problems = append(problems, err)
	}
	if _, err := remote.ParseHostKeyPolicy(f.HostKeys(hostKeys)); err != nil {
		problems = append(problems, fmt.Errorf("config: ssh.host_keys: %w", err))
	}
	if len(f.Hosts) > 0 {
		r, err := remote.NewRouter(remote.RouterConfig{Local: &exec.Local{}, Hosts: hostsfile.FromConfig(f.Hosts), HostKeyPolicy: remote.HostKeyStrict})
		if err != nil {
			problems = append(problems, fmt.Errorf("config: hosts: %w", err))
		} else {
			r.Close()
		}
	}
	return problems
}
