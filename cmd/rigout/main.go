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
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/federation"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/internal/runstate"
	"github.com/rigout/rigout/internal/statedir"
	"github.com/rigout/rigout/redact"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/activity"
	hostsfamily "github.com/rigout/rigout/tools/hosts"
	"github.com/rigout/rigout/tools/process"
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
	sandboxLater   bool          // build the ruleset from the first command or startSandbox on (stdio)
	early          *earlySandbox // started by sandboxEarly, taken by sandboxFor
	requireSandbox bool
	maxCalls       int
	maxPerTok      int
	families       familyFlags
	term           terminalFlags

	file *fileConfig
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
	f, err := loadConfig(c.configPath)
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

// ssh returns the SSH router configuration: strict host keys unless the
// flag or the file says otherwise, the user's ssh_config and known_hosts
// (read only), rigout's own known_hosts in the state directory, the agent.
func (c *common) ssh(logger *slog.Logger) (*exec.RouterConfig, error) {
	if c.noSSH {
		return nil, nil
	}
	policyName := c.hostKeys
	if policyName == "" {
		policyName = c.file.SSH.HostKeys
	}
	if policyName == "" {
		policyName = "strict"
	}
	policy, err := exec.ParseHostKeyPolicy(policyName)
	if err != nil {
		return nil, err
	}
	if policy == exec.HostKeyInsecureIgnore {
		logger.Warn("SSH host keys are not checked (insecure-ignore-host-key): any machine can impersonate your hosts")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("ssh: no home directory: %w", err)
	}
	sshConfig, knownHosts := c.sshConfig, c.knownHosts
	if sshConfig == "" {
		sshConfig = filepath.Join(home, ".ssh", "config")
	}
	if knownHosts == "" {
		knownHosts = filepath.Join(home, ".ssh", "known_hosts")
	}
	hosts, err := routerHosts(c.file, c.dir, logger.Warn)
	if err != nil {
		return nil, err
	}
	exe, _ := os.Executable()
	helper, err := c.file.SSH.Helper.config(c.viewPrincipal, exe)
	if err != nil {
		return nil, err
	}
	return &exec.RouterConfig{
		Helper:              helper,
		Hosts:               hosts,
		SSHConfigFiles:      []string{sshConfig},
		UserKnownHostsFiles: []string{knownHosts},
		KnownHostsFile:      filepath.Join(c.dir, "known_hosts"),
		HostKeyPolicy:       policy,
		AgentSocket:         os.Getenv("SSH_AUTH_SOCK"),
		PassphraseEnv:       "RIGOUT_SSH_PASSPHRASE",
		Getenv:              c.sec.getenv,
		HomeDir:             home,
		AutoHosts:           c.file.SSH.AutoHosts,
		AutoLocal:           c.file.SSH.AutoLocal,
		UnsafeProxyCommand:  c.file.SSH.UnsafeProxyCommand,
		Logger:              logger,
	}, nil
}

// openLedger opens the audit ledger. A ledger that cannot be opened stops
// the gateway, unless best effort was asked for.
func (c *common) openLedger(ctx context.Context, dir string, logger *slog.Logger) (gatewayLedger, error) {
	if c.file.Audit.Postgres != "" {
		return c.openPostgresLedger(ctx, logger)
	}
	path := c.auditDB
	if path == "" {
		path = filepath.Join(dir, "audit.db")
	}
	getenv := os.Getenv
	if c.sec != nil {
		getenv = c.sec.getenv
	}
	// The ledger keeps the argument values the gateway hands it: each
	// command and path as it ran (Tool.Recorded), redacted, and with
	// store_args every argument; the rest stay digests.
	key, err := chainKey(c.file.Audit, getenv)
	if err != nil {
		return nil, err
	}
	l, err := sqlite.Open(ctx, sqlite.Config{Path: path, Logger: logger, StoreArgs: true,
		UnsafeSyncNormal: c.file.Audit.UnsafeSyncNormal, ChainKey: key, AnchorPath: c.file.Audit.AnchorFile})
	if err != nil {
		return nil, fmt.Errorf("audit ledger %s: %w", path, err)
	}
	// Intent rows name this process, and calls an earlier gateway left
	// unfinished (killed mid-call) are recorded as interrupted. Without
	// /proc (an empty chroot) the process cannot be named: calls are then
	// left open as before.
	self, err := runstate.Self()
	if err != nil {
		logger.Warn("audit ledger: cannot name this process in intent rows; interrupted calls will not be reconciled", "err", err)
		return l, nil
	}
	if _, _, err := reconcileInterrupted(ctx, l, self, time.Now(), logger); err != nil {
		l.Close()
		return nil, fmt.Errorf("audit ledger %s: %w", path, err)
	}
	return stampLedger(l, self), nil
}

// assembly is the gateway and the resources its tool families share.
type assembly struct {
	*rigout.Gateway
	router     *exec.Router  // nil with --no-ssh
	sandbox    *exec.Sandbox // nil with --unsafe-no-sandbox
	local      *exec.Local
	processes  *sessions.Manager      // background processes handed off by execute_command
	downstream *federation.Federation // nil without downstream servers
}

// containment describes, in a sentence, what guards local commands: for
// the initialize instructions, which name nothing that changes from one
// start to the next (the cgroup's path holds the PID), so that a client's
// prompt cache keeps them.
func (a *assembly) containment() string {
	if a.sandbox == nil {
		return "no kernel sandbox (--unsafe-no-sandbox): only the command policy guards local commands"
	}
	tr := a.local.Tracking()
	switch tr.Mode {
	case exec.TrackCgroup:
		tr.Where = "a directory of its own"
	case exec.TrackMarker:
		tr.Reason = "no cgroup v2 for calls; the operator's log says why"
	}
	return a.sandbox.Status().String() + "; " + tr.String()
}

// health is the /health body's gateway part: the ledger, the sandbox and
// how descendants are tracked.
func (a *assembly) health() map[string]any {
	m := a.Gateway.Health().Fields()
	if a.sandbox == nil {
		m["sandbox"] = "off (--unsafe-no-sandbox)"
	} else {
		st := a.sandbox.Status()
		sm := map[string]any{"enforced": st.Enforced, "abi": st.ABI, "views": st.Views, "summary": st.String()}
		if st.ViewsReason != "" {
			sm["views_unavailable"] = st.ViewsReason
		}
		m["sandbox"] = sm
	}
	m["descendants"] = string(a.local.Tracking().Mode)
	if c := buildCommit(); c != "" {
		m["commit"] = c
	}
	if linkedDate != "" {
		m["build_date"] = linkedDate
	}
	if a.downstream != nil {
		m["downstream"] = a.downstream.Health()
	}
	return m
}

// Close closes the gateway, then the SSH router it used.
func (a *assembly) Close() error {
	var err error
	if a.downstream != nil {
		err = a.downstream.Close()
	}
	if a.Gateway != nil {
		err = errors.Join(err, a.Gateway.Close())
	}
	if a.processes != nil {
		err = errors.Join(err, a.processes.Close())
	}
	if a.router != nil {
		err = errors.Join(err, a.router.Close())
	}
	if a.sandbox != nil {
		err = errors.Join(err, a.sandbox.Close())
	}
	return err
}

// gateway assembles the gateway from the flags and the file: the shell
// family (execute_command), the hosts family when SSH is on, the activity
// family on the ledger.
func (c *common) gateway(logger *slog.Logger, ledger gatewayLedger, principal *auth.Principal, secrets ...string) (*assembly, error) {
	defer c.dropEarlySandbox() // a refusal before the sandbox was taken
	if err := c.term.check(); err != nil {
		return nil, err
	}
	policy, err := c.file.policy()
	if err != nil {
		return nil, err
	}
	g, err := gate.New(gate.Config{Policy: policy, Logger: logger})
	if err != nil {
		return nil, err
	}
	rate, err := c.file.RateLimit.limits()
	if err != nil {
		return nil, err
	}
	sshCfg, err := c.ssh(logger)
	if err != nil {
		return nil, err
	}
	sb, err := c.sandboxFor(policy, logger)
	if err != nil {
		return nil, err
	}
	if err := c.checkViews(sb, logger); err != nil {
		if sb != nil {
			_ = sb.Close()
		}
		return nil, err
	}
	a := &assembly{sandbox: sb}
	local := &exec.Local{Private: c.sec.private, Sandbox: sb, UnsafeNoSandbox: c.noSandbox}
	a.local = local
	if sshCfg != nil {
		sshCfg.Local = local
		if ledger != nil {
			sshCfg.OnHostKey = hostsfamily.HostKeyRecorder(ledger)
		}
		if a.router, err = exec.NewRouter(*sshCfg); err != nil {
			return nil, fmt.Errorf("ssh: %w", err)
		}
	}
	// Background processes: commands still running after wait_seconds are
	// handed off; their output is spooled inside the state directory, which
	// the sandbox hides from commands where it can.
	mc := sessions.Config{Local: local, SpoolDir: c.dir, Logger: logger, TerminalIdle: c.term.idle, Instance: c.instanceName(),
		MaxTerminals: c.term.max, MaxTerminalsPerPrincipal: c.term.maxPer}
	if ledger != nil {
		mc.Audit = ledger
	}
	if a.processes, err = sessions.New(mc); err != nil {
		a.Close()
		return nil, err
	}
	creds, err := c.credentialStore()
	if err != nil {
		a.Close()
		return nil, err
	}
	sh, err := shell.New(shell.Config{
		Local: local, Router: a.router, Gate: g, Processes: a.processes,
		WorkDir: c.workDir, DefaultTimeout: c.timeout, MaxOutput: c.maxOutput,
		Credentials: creds,
	})
	if err != nil {
		a.Close()
		return nil, err
	}
	pf, err := process.New(process.Config{Manager: a.processes})
	if err != nil {
		a.Close()
		return nil, err
	}
	ff, err := c.filesFamily(a.router, a.sandbox, g, creds)
	if err != nil {
		a.Close()
		return nil, err
	}
	tt, ti, err := c.terminals(a, g, creds)
	if err != nil {
		a.Close()
		return nil, err
	}
	tools := append(append(append(sh.Tools(), pf.Tools()...), ff.Tools()...), tt...)
	instructions := append([]string{"rigout runs commands for you on this machine.", sh.Instructions(), ff.Instructions()}, ti...)
	instructions = append(instructions, "Containment: "+a.containment()+".")
	logger.Info("descendant tracking", "status", a.local.Tracking().String())
	st, si, err := c.systools(local, a.router, g, a.processes)
	if err != nil {
		a.Close()
		return nil, err
	}
	tools, instructions = append(tools, st...), append(instructions, si...)
	ct, ci, err := credentialTools(creds)
	if err != nil {
		a.Close()
		return nil, err
	}
	tools, instructions = append(tools, ct...), append(instructions, ci...)
	if ledger != nil {
		act, err := activity.New(activity.Config{Ledger: ledger})
		if err != nil {
			a.Close()
			return nil, err
		}
		tools = append(tools, act.Tools()...)
	}
	if a.router != nil {
		hf, err := hostsfamily.New(hostsfamily.Config{Router: a.router, Store: c.hostsStore()})
		if err != nil {
			a.Close()
			return nil, err
		}
		tools = append(tools, hf.Tools()...)
		instructions = append(instructions, hf.Instructions())
	}
	known, err := redact.New()
	if err != nil {
		return nil, err
	}
	for _, v := range append(c.sec.values(), secrets...) {
		if v == "" {
			continue
		}
		if err := known.Add(v); errors.Is(err, redact.ErrShortSecret) {
			logger.Warn("a secret shorter than 8 bytes cannot be masked in output; use a longer one", "min", redact.MinSecretLen)
		}
	}
	cfg := rigout.Config{
		Version:                   releaseVersion(),
		Secrets:                   known,
		Instructions:              strings.Join(instructions, " "),
		Tools:                     tools,
		Logger:                    logger,
		MaxConcurrent:             c.maxCalls,
		MaxConcurrentPerPrincipal: c.maxPerTok,
		RateLimit:                 rate,
		UnsafeAuditBestEffort:     c.bestEffort || c.file.Audit.UnsafeBestEffort,
		AuditArgValues:            c.file.Audit.StoreArgs,
		Principal:                 principal,
		Approvals:                 c.approvals,
		// Each call's commands are marked with its ledger call ID, so
		// that a start after this gateway dies mid-call finds and ends
		// what the call left running (reconcileInterrupted).
		Middleware: []rigout.Middleware{markCalls},
	}
	if ledger != nil {
		cfg.Audit = ledger
	}
	// Replicas sharing a ledger share its chain key: the approval key is
	// derived from it, so that what one replica signs (a question's
	// requestState, an approval's digest) another checks alike.
	getenv := os.Getenv
	if c.sec != nil {
		getenv = c.sec.getenv
	}
	if key, err := chainKey(c.file.Audit, getenv); err != nil {
		a.Close()
		return nil, err
	} else if key != nil {
		cfg.ApprovalKey = rigout.DeriveApprovalKey(key)
	}
	// On PostgreSQL the approval queue and the spent answers are the
	// ledger's, shared by the gateways: a call held on one is decided on
	// any. Without the shared key (the unsafe database-held chain key)
	// they stay this gateway's.
	if st, ok := ledger.(rigout.ApprovalStore); ok {
		if cfg.ApprovalKey != nil {
			cfg.ApprovalStore = st
			logger.Info("approvals shared through the PostgreSQL ledger: the operator queue and answered questions")
		} else {
			logger.Warn("approvals are this gateway's alone: sharing them through the PostgreSQL ledger needs audit.key_env, from which the gateways derive their approval key")
		}
	}
	if r := a.router; r != nil {
		cfg.ResolveHost = func(_ context.Context, host string) ([]rigout.HostReach, error) {
			rs, err := r.Reaches(host)
			out := make([]rigout.HostReach, len(rs))
			for i, x := range rs {
				out[i] = rigout.HostReach{Name: x.Name, AdHoc: x.AdHoc}
			}
			return out, err
		}
	}
	c.observe.wire(&cfg, a, ledger)
	if a.Gateway, err = rigout.New(cfg); err != nil {
		a.Close()
		return nil, err
	}
	if a.downstream, err = c.downstreams(a.Gateway, a.sandbox, creds, logger); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
