// Command rigout is the reference gateway: it serves rigout's tools to MCP
// clients over stdio or streamable HTTP.
//
//	rigout stdio                         serve one client on stdin/stdout
//	rigout serve [--addr 127.0.0.1:8765] serve streamable HTTP at /mcp
//	rigout check 'CMD'                   what the command policy decides
//	rigout audit verify|tail|query|…     read and check the audit ledger
//	rigout version                       print the version
//
// Everything here parses flags, the environment and the configuration file
// into library configuration; the gateway itself lives in the rigout
// packages.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/statedir"
	"github.com/rigout/rigout/tools/shell"
)

const usage = `rigout — authenticated, policy-checked, audited machine access for AI agents over MCP

Usage:
  rigout stdio [flags]     serve one MCP client over stdin/stdout
  rigout serve [flags]     serve MCP over streamable HTTP (bearer token required)
  rigout start [--detach]  serve as above, in the background with --detach
  rigout stop              stop the gateway started in this state directory
  rigout status [--json]   is it running: URL, PID, uptime, ledger, hosts (exit 0 running, 1 not, 2 stale)
  rigout url [--which W]   the running gateway's mcp, health or one-use setup URL
  rigout logs [-n N]       the activity log (secrets redacted); --follow keeps printing
  rigout connect CLIENT    the snippet for claude-code, claude-desktop, cursor, vscode, codex or json; --write merges it
  rigout doctor            check the state directory, ledger, hosts, agent, sandbox; say how to fix each failure
  rigout approvals         list the calls waiting for an operator's approval (token with the approve scope)
  rigout approve ID        approve a held-back call; rigout deny ID refuses it
  rigout check 'CMD'       show what the command policy decides about CMD
  rigout config check [F]  validate the configuration file; print the effective configuration, secrets redacted
  rigout audit SUBCOMMAND  verify, tail, query, stats, export or prune the audit ledger
  rigout hosts SUBCOMMAND  list, test or trust SSH hosts
  rigout version           print the version

Run 'rigout COMMAND -h' for a command's flags.
`

// commands are the words run accepts.
var commands = []string{"approvals", "approve", "audit", "check", "config", "connect", "doctor", "hosts", "logs", "serve", "start", "status", "stdio", "stop", "url", "version"}

// defaultMemoryLimit is the Go runtime's soft memory limit unless
// GOMEMLIMIT says otherwise: the gateway holds little (output is capped
// per stream), so collecting sooner keeps a burst of large outputs from
// inflating the heap; it is a target, not a cap. Idle, the heap is a few
// MiB and the limit is never reached, so ordinary calls pay nothing for
// it; 20 concurrent commands at the 1 MiB output cap keep some 35–50 MiB
// live, and at 96 MiB the heap grew to the limit (85 MiB above idle)
// before collecting, at 64 MiB it stays about 60 MiB above idle for 2–3%
// of CPU in the collector (bench scenario 6).
const defaultMemoryLimit = 64 << 20

func main() {
	// Started again as a sandbox spawner, it serves that and exits.
	exec.ServeSandboxSpawner()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	sec := &secrets{}
	if len(os.Args) > 1 && (os.Args[1] == "serve" || os.Args[1] == "stdio" || os.Args[1] == "start") {
		var err error
		if sec, err = hideSecrets(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "rigout: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, sec))
}

// run executes one command line and returns the exit code: 0 success,
// 1 failure, 2 usage error.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, sec *secrets) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "stdio":
		return runStdio(ctx, args[1:], stdin, stdout, stderr, sec)
	case "serve":
		return runServe(ctx, args[1:], stderr, sec)
	case "start":
		return runStart(ctx, args[1:], stdout, stderr, sec)
	case "stop":
		return runStop(ctx, args[1:], stdout, stderr)
	case "status":
		return runStatus(ctx, args[1:], stdout, stderr)
	case "url":
		return runURL(ctx, args[1:], stdout, stderr)
	case "logs":
		return runLogs(ctx, args[1:], stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args[1:], stdout, stderr)
	case "connect":
		return runConnect(args[1:], stdout, stderr)
	case "config":
		return runConfig(args[1:], stdout, stderr)
	case "approvals", "approve", "deny":
		return runApprovals(ctx, args[0], args[1:], stdout, stderr)
	case "check":
		return runCheck(args[1:], stdout, stderr)
	case "audit":
		return runAudit(ctx, args[1:], stdout, stderr)
	case "hosts":
		return runHosts(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-V":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "rigout: unknown command %q. Expected one of: %s\n", args[0], strings.Join(commands, ", "))
	return 2
}

// common holds the flags every serving command takes.
type common struct {
	approvals      *rigout.ApprovalConfig // the operator approval queue; serve sets it
	logLevel       string
	workDir        string
	timeout        time.Duration
	maxOutput      int
	stateDir       string
	auditDB        string
	configPath     string
	bestEffort     bool
	hostKeys       string
	sshConfig      string
	knownHosts     string
	noSSH          bool
	noSandbox      bool
	noViews        bool
	sandboxLater   bool          // build the ruleset from the first command or StartSandbox on (stdio)
	early          *earlySandbox // started by sandboxEarly, taken by takeSandbox (stdio.go)
	requireSandbox bool
	maxCalls       int
	maxPerTok      int
	families       familyFlags
	term           terminalFlags

	file *config.File
	dir  string   // the state directory, resolved by prepare
	sec  *secrets // the secrets moved off the environment

	observe *observer // metrics (serve only), see observe.go
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.logLevel, "log-level", envOr("RIGOUT_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env RIGOUT_LOG_LEVEL)")
	fs.StringVar(&c.workDir, "workdir", "", "working directory of commands that name none (default: the current directory)")
	fs.DurationVar(&c.timeout, "default-timeout", shell.DefaultTimeout, "timeout of commands that set none")
	fs.IntVar(&c.maxOutput, "max-output", 1<<20, "bytes kept per output stream of a command")
	fs.StringVar(&c.stateDir, "state-dir", "", "state directory: audit ledger, connection file, token (default $RIGOUT_STATE_DIR, else $XDG_STATE_HOME/rigout, else ~/.local/state/rigout, for root /var/lib/rigout)")
	fs.StringVar(&c.auditDB, "audit-db", "", "audit ledger file (default <state dir>/audit.db)")
	fs.StringVar(&c.configPath, "config", os.Getenv("RIGOUT_CONFIG"), "JSON configuration file: tokens, OAuth clients, policy, hosts (env RIGOUT_CONFIG)")
	fs.BoolVar(&c.bestEffort, "unsafe-audit-best-effort", false, "run calls even when the audit ledger cannot record them (health reports degraded)")
	fs.StringVar(&c.hostKeys, "host-keys", os.Getenv("RIGOUT_HOST_KEYS"), "SSH host key policy: strict (default), accept-new, insecure-ignore-host-key (env RIGOUT_HOST_KEYS)")
	fs.StringVar(&c.sshConfig, "ssh-config", "", "OpenSSH client configuration to read (default ~/.ssh/config)")
	fs.StringVar(&c.knownHosts, "known-hosts", "", "the user's known_hosts, read only (default ~/.ssh/known_hosts); rigout records keys in <state dir>/known_hosts")
	fs.BoolVar(&c.noSSH, "no-ssh", false, "run commands on this machine only")
	fs.BoolVar(&c.noSandbox, "unsafe-no-sandbox", false, "run local commands without the kernel sandbox (Landlock): only the command policy guards them")
	fs.BoolVar(&c.noViews, "unsafe-no-views", false, "run local commands in the Landlock sandbox alone, without a view of the machine per principal (namespaces, seccomp): narrow tokens are then not kept narrow by the kernel")
	fs.BoolVar(&c.requireSandbox, "require-sandbox", false, "refuse to start unless the kernel enforces the whole sandbox (Landlock ABI 6: files, signals, ptrace)")
	fs.IntVar(&c.maxCalls, "max-concurrent", rigout.DefaultMaxConcurrent, "tool calls in flight at once; more are refused as busy")
	fs.IntVar(&c.maxPerTok, "max-concurrent-per-token", rigout.DefaultMaxConcurrentPerPrincipal, "tool calls one token (or the stdio client) may have in flight")
	c.families.register(fs)
	c.term.register(fs)
}

func (c *common) logger(stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})), nil
}

// prepare reads the configuration file and creates the state directory.
func (c *common) prepare(logger *slog.Logger) (string, error) {
	f, err := config.Load(c.configPath)
	if err != nil {
		return "", err
	}
	c.file = f
	dir, err := statedir.Resolve(c.stateDir, nil)
	if err != nil {
		return "", err
	}
	open, err := statedir.Ensure(dir)
	if err != nil {
		return "", err
	}
	if open {
		logger.Warn("state directory is reachable by group or others; it holds the audit ledger and credentials", "dir", dir)
	}
	c.dir = dir
	return dir, nil
}

// openLedger opens the audit ledger (assembly.OpenLedger). A ledger that
// cannot be opened stops the gateway, unless best effort was asked for.
func (c *common) openLedger(ctx context.Context, dir string, logger *slog.Logger) (gatewayLedger, error) {
	return assembly.OpenLedger(ctx, assembly.Config{File: c.file, StateDir: dir, AuditDB: c.auditDB, Getenv: c.sec.getenv, Logger: logger})
}

// serverConfig is the assembly's configuration: the flags, the file (with
// the families the flags turn on) and the secrets moved off the
// environment.
func (c *common) serverConfig(logger *slog.Logger) assembly.Config {
	f := *c.file
	f.Families.System = f.Families.System || c.families.system
	f.Families.Docker = f.Families.Docker || c.families.docker
	f.Families.Packages = f.Families.Packages || c.families.packages
	return assembly.Config{
		File: &f, StateDir: c.dir, ConfigPath: c.configPath, AuditDB: c.auditDB,
		UnsafeAuditBestEffort: c.bestEffort,
		Approvals:             c.approvals,
		Version:               releaseVersion(),
		Logger:                logger,
		Getenv:                c.sec.getenv,
		Private:               c.sec.private,
		WorkDir:               c.workDir, DefaultTimeout: c.timeout, MaxOutput: c.maxOutput,
		MaxConcurrent: c.maxCalls, MaxConcurrentPerPrincipal: c.maxPerTok,
		TerminalIdle: c.term.idle, MaxTerminals: c.term.max, MaxTerminalsPerPrincipal: c.term.maxPer,
		NoSSH: c.noSSH, HostKeys: c.hostKeys, SSHConfig: c.sshConfig, KnownHosts: c.knownHosts,
		SandboxLater: c.sandboxLater, RequireSandbox: c.requireSandbox,
		UnsafeNoSandbox: c.noSandbox, UnsafeNoViews: c.noViews,
	}
}

// options are the assembly's options the flags ask for.
func (c *common) options() []assembly.Option {
	var opts []assembly.Option
	if c.term.off {
		opts = append(opts, assembly.Without(assembly.Terminal))
	}
	if c.observe != nil {
		opts = append(opts, assembly.WithGatewayConfig(c.observe.wire))
	}
	return opts
}

// gateway assembles the gateway from the flags and the file (package
// server) on the ledger, for principal (stdio) or the HTTP front's; the
// secrets are masked in output besides those the environment gave.
func (c *common) gateway(logger *slog.Logger, ledger gatewayLedger, principal *auth.Principal, secrets ...string) (*assembly.Server, error) {
	if err := c.term.check(); err != nil {
		c.dropEarlySandbox()
		return nil, err
	}
	cfg := c.serverConfig(logger)
	var err error
	if cfg.Sandbox, err = c.takeSandbox(); err != nil {
		return nil, err
	}
	cfg.Principal, cfg.Secrets = principal, append(c.sec.values(), secrets...)
	if ledger != nil {
		cfg.Ledger = ledger
	}
	return assembly.New(cfg, c.options()...)
}

// health is the /health body's gateway part, with the build's commit.
func health(s *assembly.Server) func() map[string]any {
	return func() map[string]any {
		m := s.HealthFields()
		if c := buildCommit(); c != "" {
			m["commit"] = c
		}
		if linkedDate != "" {
			m["build_date"] = linkedDate
		}
		return m
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
