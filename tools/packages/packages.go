// Package packages is the tool family that installs software and sets up
// workspaces: install_software (apt, dnf, yum, zypper, pacman, apk, brew,
// pip, npm, or auto: the host's own manager, detected per host) and
// environment_setup (a Python venv, a Node project, a conda environment, a
// docker workspace, or a bare directory), on this machine or an SSH host.
//
// # Overview
//
// Everything runs as argument vectors; no command string is built. Each
// package name must match a strict pattern for its manager (no leading
// '-', no spaces, paths, URLs or shell syntax), so no option can be
// smuggled in as a name. Both tools are in the privileged risk class.
// Root is used only when the call sets use_sudo, and then through
// `sudo -n`, which fails at once rather than prompt. Every command passes
// the command gate (package gate). Timeouts are generous (15 minutes by
// default); a client that passed a progress token hears progress while a
// step runs; and with [Config].Processes, a local install still running
// after wait_seconds becomes a background process (read with the process
// tool), as execute_command's long commands do.
//
// # Usage
//
//	pf, err := packages.New(packages.Config{Hosts: router, Processes: manager})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: pf.Tools()})
package packages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/internal/family"
)

// Defaults used when the corresponding Config field is zero.
const (
	DefaultTimeout          = 15 * time.Minute
	DefaultMaxTimeout       = 2 * time.Hour
	DefaultWait             = 20 * time.Second
	DefaultMaxOutput        = 200000
	DefaultProgressInterval = 2 * time.Second
)

// Config configures the family. Local (or Hosts) is required, so that
// no command runs outside a sandbox by accident; the rest has useful zero
// values: this machine only, the default command policy, every install
// within its call.
type Config struct {
	// Local runs commands on this machine: an exec.Local with a Sandbox,
	// or with UnsafeNoSandbox to run them unconfined; with Hosts, the
	// hosts' local runner instead, which must be one too. Required
	// without Hosts: New fails with exec.ErrNoSandbox.
	Local exec.Runner
	// Hosts, if set, resolves the host argument (the SSH package\'s
	// Router lets the tools reach SSH hosts). The caller owns it. If nil,
	// exec.LocalHosts with Local: this machine only.
	Hosts exec.Hosts
	// Gate checks every command before it runs. If nil, the default policy.
	Gate *gate.Gate
	// Processes, if set, lets a local install outlive its call: one still
	// running after wait_seconds becomes a background process of the
	// caller. Give it the same exec.Local as Local. The caller owns it.
	Processes *sessions.Manager
	// Wait is the default wait_seconds, with Processes. If zero,
	// DefaultWait.
	Wait time.Duration
	// DefaultTimeout applies to each step of a call that sets no timeout.
	// If zero, DefaultTimeout (15m).
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout a call may ask for. If zero,
	// DefaultMaxTimeout (2h).
	MaxTimeout time.Duration
	// MaxOutput caps each output stream of a step, in bytes. If zero,
	// DefaultMaxOutput.
	MaxOutput int
	// PipOptions are options the operator gives every pip install, before
	// the package names: an index mirror ("--index-url", URL), or a local
	// wheel directory ("--no-index", "--find-links", DIR). Calls cannot
	// set them.
	PipOptions []string
	// ProgressInterval is how often a running step reports progress. If
	// zero, DefaultProgressInterval.
	ProgressInterval time.Duration
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

// Family is the packages tool family. It is safe for concurrent use.
type Family struct {
	cfg   Config
	hosts exec.Hosts
}

// New builds the family from cfg, which is copied.
func New(cfg Config) (*Family, error) {
	c := cfg
	hosts, g, err := family.Setup("packages", c.Local, c.Hosts, c.Gate)
	if err != nil {
		return nil, err
	}
	c.Gate = g
	if c.Wait <= 0 {
		c.Wait = DefaultWait
	}
	if err := family.Timeouts("packages", &c.DefaultTimeout, &c.MaxTimeout, DefaultTimeout, DefaultMaxTimeout); err != nil {
		return nil, err
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.PipOptions = append([]string(nil), c.PipOptions...)
	return &Family{cfg: c, hosts: hosts}, nil
}

// Tools returns the family's tools.
func (f *Family) Tools() []rigout.Tool {
	return []rigout.Tool{f.InstallSoftware(), f.EnvironmentSetup()}
}

// Instructions is the family's part of the initialize instructions.
func (f *Family) Instructions() string {
	return "install_software and environment_setup install packages and make workspaces; root only with use_sudo (sudo -n)."
}

const commonProps = `
    "timeout": {"type": "integer", "minimum": 1, "description": "Seconds per step; default 900."},
    "host": {"type": "string", "description": "local (default), an SSH alias, user@host, or auto."}`

const waitProp = `,
    "wait_seconds": {"type": "integer", "minimum": 0, "description": "Local: seconds before a running install becomes a background process (see process). Default 20."}`

func schema(props string, required string, wait bool) json.RawMessage {
	s := `{"type": "object", "properties": {` + props + commonProps
	if wait {
		s += waitProp
	}
	return json.RawMessage(s + `}, "required": [` + required + `], "additionalProperties": false}`)
}

const installProps = `
    "packages": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 100},
    "package_manager": {"type": "string", "enum": ["auto", "apt", "dnf", "yum", "zypper", "pacman", "apk", "brew", "pip", "npm"], "description": "Default auto: the host's system manager."},
    "use_sudo": {"type": "boolean", "description": "Run as root through sudo -n (never prompts)."},`

const envProps = `
    "environment_type": {"type": "string", "enum": ["python", "node", "conda", "docker", "custom"]},
    "workspace_path": {"type": "string", "description": "Directory to create (absolute, or ~/…)."},
    "requirements": {"type": "array", "items": {"type": "string"}, "maxItems": 100, "description": "python: pip packages; node: npm; conda: conda; docker: images to pull."},`

var resultSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "host": {"type": "string"}, "route": {"type": "string"}, "manager": {"type": "string"},
    "steps": {"type": "array", "items": {"type": "object"}},
    "process_id": {"type": "string"}, "next_call": {"type": "string"}
  },
  "required": ["host", "steps"]
}`)

// InstallSoftware returns the install_software tool.
func (f *Family) InstallSoftware() rigout.Tool {
	return rigout.Tool{
		Name:         "install_software",
		Description:  "Install packages with a package manager (auto: the host's own), as exact arguments; names are validated.",
		InputSchema:  schema(installProps, `"packages"`, f.cfg.Processes != nil),
		OutputSchema: resultSchema,
		Risk:         rigout.Privileged,
		Hosts:        []rigout.HostArg{{Name: "host"}},
		DefaultHost:  "local",
		Handler:      f.install,
	}
}

// EnvironmentSetup returns the environment_setup tool.
func (f *Family) EnvironmentSetup() rigout.Tool {
	return rigout.Tool{
		Name:         "environment_setup",
		Description:  "Create a workspace directory with a Python venv, Node project, conda env or pulled docker images, and install its requirements.",
		InputSchema:  schema(envProps, `"environment_type", "workspace_path"`, f.cfg.Processes != nil),
		OutputSchema: resultSchema,
		Risk:         rigout.Privileged,
		Hosts:        []rigout.HostArg{{Name: "host"}},
		DefaultHost:  "local",
		Paths:        []rigout.PathArg{{Name: "workspace_path", Resolve: f.resolveWorkspace}},
		Handler:      f.environment,
	}
}

// step is one command of a call.
type step struct {
	Argv []string `json:"argv"`
	Dir  string   `json:"dir,omitempty"`
	// last is set on the step that may be handed off.
	last bool
}

// stepResult is what one step did, in structuredContent.
type stepResult struct {
	Argv          []string `json:"argv"`
	ExitCode      int      `json:"exit_code"`
	TimedOut      bool     `json:"timed_out,omitempty"`
	DurationMS    int64    `json:"duration_ms"`
	Stdout        string   `json:"stdout"`
	Stderr        string   `json:"stderr"`
	StdoutDropped int64    `json:"stdout_dropped,omitempty"`
	StderrDropped int64    `json:"stderr_dropped,omitempty"`
}

// report is both tools' structuredContent.
type report struct {
	Host      string       `json:"host"`
	Route     string       `json:"route"`
	Manager   string       `json:"manager,omitempty"`
	Workspace string       `json:"workspace,omitempty"`
	Steps     []stepResult `json:"steps"`
	ProcessID string       `json:"process_id,omitempty"`
	NextCall  string       `json:"next_call,omitempty"`
	Note      string       `json:"note,omitempty"`
}

type commonArgs struct {
	Host        string `json:"host"`
	Timeout     int64  `json:"timeout"`
	WaitSeconds *int64 `json:"wait_seconds"`
	UseSudo     bool   `json:"use_sudo"`
}

type installArgs struct {
	commonArgs
	Packages       []string `json:"packages"`
	PackageManager string   `json:"package_manager"`
}

type envArgs struct {
	commonArgs
	EnvironmentType string   `json:"environment_type"`
	Requirements    []string `json:"requirements"`
}

// limits reads the timeout and wait of a call.
func (f *Family) limits(a commonArgs) (timeout, wait time.Duration, err error) {
	timeout, wait = f.cfg.DefaultTimeout, f.cfg.Wait
	maxS := int64(f.cfg.MaxTimeout / time.Second)
	if a.Timeout > 0 {
		if a.Timeout > maxS {
			return 0, 0, fmt.Errorf("timeout %ds exceeds this gateway's maximum of %ds", a.Timeout, maxS)
		}
		timeout = time.Duration(a.Timeout) * time.Second
	}
	if a.WaitSeconds != nil {
		if *a.WaitSeconds < 0 || *a.WaitSeconds > maxS {
			return 0, 0, fmt.Errorf("wait_seconds must be between 0 and %d", maxS)
		}
		wait = time.Duration(*a.WaitSeconds) * time.Second
	}
	return timeout, wait, nil
}

// probe returns the first of progs whose --version runs on the target
// (a probe the policy would refuse is not run), or "".
func (f *Family) probe(ctx context.Context, t exec.Target, progs ...string) string {
	for _, p := range progs {
		argv := []string{p, "--version"}
		if !f.cfg.Gate.Judge(gate.Command{Argv: argv}).Allowed {
			continue
		}
		r, err := t.Runner.Run(ctx, exec.Command{Argv: argv, Timeout: 20 * time.Second, MaxOutput: 4096})
		if err == nil && r.ExitCode == 0 {
			return p
		}
	}
	return ""
}

// detect returns the system package manager a target has: the first of
// Managers' system managers whose probe runs there.
func (f *Family) detect(ctx context.Context, t exec.Target) (Manager, error) {
	var progs []string
	for _, m := range Managers {
		if m.System {
			progs = append(progs, m.Probe)
		}
	}
	p := f.probe(ctx, t, progs...)
	for _, m := range Managers {
		if m.System && m.Probe == p && p != "" {
			return m, nil
		}
	}
	return Manager{}, fmt.Errorf("no known package manager runs there (looked for %s); name one with package_manager", strings.Join(progs, ", "))
}

func (f *Family) install(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a installArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	timeout, wait, err := f.limits(a.commonArgs)
	if err != nil {
		return family.Invalid(call, "%v", err)
	}
	name := a.PackageManager
	if name == "" {
		name = "auto"
	}
	var m Manager
	if name != "auto" {
		var ok bool
		if m, ok = manager(name); !ok {
			return family.Invalid(call, "unknown package_manager %q", name)
		}
		if _, err := InstallArgv(m, a.Packages, f.cfg.PipOptions); err != nil {
			return family.Invalid(call, "install_software: %v", err)
		}
	}
	host := call.Hosts()[0]
	t, err := f.hosts.Resolve(ctx, host, call.Principal().Name)
	if err != nil {
		call.Outcome.Status = audit.StatusError
		return rigout.ErrorResult("%v", err), nil
	}
	call.Outcome.Route = t.Route
	if name == "auto" {
		if m, err = f.detect(ctx, t); err != nil {
			call.Outcome.Status, call.Outcome.Error = audit.StatusError, err.Error()
			return rigout.ErrorResult("install_software on %s: %v", host, err), nil
		}
	}
	argv, err := InstallArgv(m, a.Packages, f.cfg.PipOptions)
	if err != nil {
		return family.Invalid(call, "install_software (%s): %v", m.Name, err)
	}
	rep := &report{Host: host, Route: t.Route, Manager: m.Name}
	return f.run(ctx, call, t, rep, []step{{Argv: argv, last: true}}, a.UseSudo, timeout, wait)
}

// resolveWorkspace is workspace_path's resolver: on this machine ~ is
// expanded, the path must be absolute, and its existing part has its
// symlinks resolved (the rest is created); on an SSH host it must be
// absolute and is cleaned.
func (f *Family) resolveWorkspace(ctx context.Context, call *rigout.Call, p string) (string, error) {
	if strings.ContainsAny(p, "\x00\n") || strings.HasPrefix(p, "-") {
		return "", fmt.Errorf("%q is not a usable path", p)
	}
	hosts := call.Hosts()
	local := false
	if len(hosts) == 1 {
		if t, err := f.hosts.Resolve(ctx, hosts[0], call.Principal().Name); err == nil && t.Local {
			local = true
		}
	}
	if !local {
		if !path.IsAbs(p) {
			return "", fmt.Errorf("workspace_path %q on a remote host must be absolute", p)
		}
		return path.Clean(p), nil
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%q: no home directory: %w", p, err)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("workspace_path %q must be absolute (or ~/…)", p)
	}
	p = filepath.Clean(p)
	// Resolve the longest existing prefix; the rest will be created.
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest), nil
		}
		if cur == filepath.Dir(cur) {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

func (f *Family) environment(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a envArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	timeout, wait, err := f.limits(a.commonArgs)
	if err != nil {
		return family.Invalid(call, "%v", err)
	}
	ws, _ := call.Path("workspace_path")
	if ws == "" || ws == "/" {
		return family.Invalid(call, "workspace_path must name a directory to create, not %q", ws)
	}
	host := call.Hosts()[0]
	t, err := f.hosts.Resolve(ctx, host, call.Principal().Name)
	if err != nil {
		call.Outcome.Status = audit.StatusError
		return rigout.ErrorResult("%v", err), nil
	}
	call.Outcome.Route = t.Route
	steps, err := f.envSteps(ctx, t, a.EnvironmentType, ws, a.Requirements)
	if err != nil {
		return family.Invalid(call, "environment_setup: %v", err)
	}
	rep := &report{Host: host, Route: t.Route, Workspace: ws}
	return f.run(ctx, call, t, rep, steps, a.UseSudo, timeout, wait)
}

// envSteps returns the commands that make a workspace of kind at ws.
func (f *Family) envSteps(ctx context.Context, t exec.Target, kind, ws string, reqs []string) ([]step, error) {
	join := path.Join
	if t.Local {
		join = filepath.Join
	}
	steps := []step{{Argv: []string{"mkdir", "-p", "--", ws}}}
	switch kind {
	case "python":
		if err := checkNames("requirement", reqs, pipName); err != nil {
			return nil, err
		}
		steps = append(steps, step{Argv: []string{"python3", "-m", "venv", "--", join(ws, "venv")}})
		if len(reqs) > 0 {
			argv := append([]string{join(ws, "venv", "bin", "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input"}, f.cfg.PipOptions...)
			steps = append(steps, step{Argv: append(append(argv, "--"), reqs...)})
		}
	case "node":
		m, _ := manager("npm")
		if err := checkNames("requirement", reqs, m.Pattern); err != nil {
			return nil, err
		}
		steps = append(steps, step{Argv: []string{"npm", "init", "-y"}, Dir: ws})
		if len(reqs) > 0 {
			steps = append(steps, step{Argv: append([]string{"npm", "install", "--no-fund", "--no-audit"}, reqs...), Dir: ws})
		}
	case "conda":
		if err := checkNames("requirement", reqs, condaName); err != nil {
			return nil, err
		}
		steps = append(steps, step{Argv: append([]string{"conda", "create", "--yes", "--prefix", join(ws, "env")}, reqs...)})
	case "docker":
		if err := checkImages(reqs); err != nil {
			return nil, err
		}
		if len(reqs) > 0 {
			engine := f.probe(ctx, t, "docker", "podman")
			if engine == "" {
				return nil, errors.New("neither docker nor podman runs on this host")
			}
			for _, img := range reqs {
				steps = append(steps, step{Argv: []string{engine, "pull", "--", img}})
			}
		}
	case "custom":
		if len(reqs) > 0 {
			return nil, errors.New("a custom environment is only the workspace directory: it takes no requirements (run your own setup with execute_command)")
		}
	default:
		return nil, fmt.Errorf("unknown environment_type %q", kind)
	}
	steps[len(steps)-1].last = true
	return steps, nil
}

// run gates and runs the steps in order, stopping at the first failure.
// The last step of a local call may be handed off to the Manager.
func (f *Family) run(ctx context.Context, call *rigout.Call, t exec.Target, rep *report, steps []step, sudo bool, timeout, wait time.Duration) (*mcp.CallToolResult, error) {
	host := rep.Host
	// The whole plan is judged before anything runs.
	for _, s := range steps {
		if res := f.cfg.Gate.Check(ctx, call, gate.Command{Host: host, Argv: s.Argv, Dir: s.Dir, Sudo: sudo}); res != nil {
			return res, nil
		}
	}
	o := &call.Outcome
	for i, s := range steps {
		cmd := exec.Command{Argv: s.Argv, Dir: s.Dir, Sudo: sudo, Timeout: timeout, MaxOutput: f.cfg.MaxOutput}
		stop := f.progress(ctx, call, &cmd, fmt.Sprintf("step %d of %d (%s)", i+1, len(steps), s.Argv[0]))
		var res exec.Result
		var p *sessions.Process
		var err error
		if s.last && t.Local && f.cfg.Processes != nil {
			res, p, err = f.cfg.Processes.Run(ctx, call.Principal().Name, cmd, wait)
		} else {
			res, err = t.Runner.Run(ctx, cmd)
		}
		stop()
		var le *sessions.LimitError
		switch {
		case errors.As(err, &le):
			rep.Steps = append(rep.Steps, stepOf(s.Argv, res))
			rep.Note = fmt.Sprintf("still running after %s, so it was stopped: %v", wait, err)
			o.Status, o.Error = audit.StatusBusy, err.Error()
			return render(rep, true), nil
		case err != nil:
			o.Status, o.Error = audit.StatusError, "could not run: "+err.Error()
			rep.Note = fmt.Sprintf("could not run %s: %v", s.Argv[0], err)
			return render(rep, true), nil
		case p != nil:
			in := p.Info()
			rep.ProcessID = p.ID()
			b, _ := json.Marshal(map[string]any{"action": "read", "id": p.ID(), "tail": 50, "wait_seconds": 20})
			rep.NextCall = "process " + string(b)
			rep.Note = fmt.Sprintf("still running after %s: now background process %s (pid %d); read its output with the process tool", wait, p.ID(), in.Pid)
			rep.Steps = append(rep.Steps, stepResult{Argv: s.Argv, ExitCode: -1, DurationMS: wait.Milliseconds()})
			o.Status = audit.StatusBackground
			return render(rep, false), nil
		}
		r := stepOf(s.Argv, res)
		rep.Steps = append(rep.Steps, r)
		family.Ran(o, t.Local, res)
		if res.ExitCode != 0 || res.TimedOut || res.Canceled {
			o.Status, o.Error = audit.StatusError, fmt.Sprintf("%s: exit code %d", s.Argv[0], res.ExitCode)
			if res.TimedOut {
				o.Status, o.Error = audit.StatusTimeout, fmt.Sprintf("%s timed out after %s", s.Argv[0], timeout)
			}
			if sudo && strings.Contains(string(res.Stderr.Data), "sudo:") {
				rep.Note = "sudo -n could not run it as root without a password: allow it in sudoers (NOPASSWD) for this user, or run the gateway as a user that may"
			}
			return render(rep, true), nil
		}
	}
	o.Status = audit.StatusOK
	return render(rep, false), nil
}

// progress reports progress while a step runs, when the client asked; the
// returned func stops it.
func (f *Family) progress(ctx context.Context, call *rigout.Call, cmd *exec.Command, what string) func() {
	if !call.WantsProgress(ctx) {
		return func() {}
	}
	var bytes, n atomic.Int64
	var live atomic.Bool
	live.Store(true)
	cmd.OnOutput = func(_ exec.Stream, b []byte) {
		if live.Load() {
			bytes.Add(int64(len(b)))
		}
	}
	start := f.cfg.Now()
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(f.cfg.ProgressInterval)
		defer tick.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case now := <-tick.C:
				_ = call.Progress(pctx, float64(n.Add(1)), 0, fmt.Sprintf("%s: running for %s, %d bytes of output",
					what, now.Sub(start).Round(time.Second), bytes.Load()))
			}
		}
	}()
	return func() { live.Store(false); cancel(); <-done }
}

func stepOf(argv []string, res exec.Result) stepResult {
	return stepResult{Argv: argv, ExitCode: res.ExitCode, TimedOut: res.TimedOut, DurationMS: res.Duration.Milliseconds(),
		Stdout: text(res.Stdout), Stderr: text(res.Stderr), StdoutDropped: res.Stdout.Dropped, StderrDropped: res.Stderr.Dropped}
}

// text renders one captured stream, cleaned and redacted, marking the cut.
func text(o exec.Output) string {
	if o.Dropped == 0 {
		return textsafe.Text(o.Data)
	}
	return fmt.Sprintf("%s\n[… %d bytes dropped: output over the cap keeps its first %d and last %d bytes …]\n%s",
		textsafe.Text(o.Data[:o.Head]), o.Dropped, o.Head, len(o.Data)-o.Head, textsafe.Text(o.Data[o.Head:]))
}

// render is the tool result: each step's command, exit code and output.
func render(rep *report, failed bool) *mcp.CallToolResult {
	var sb strings.Builder
	fmt.Fprintf(&sb, "host: %s (via %s)\n", rep.Host, rep.Route)
	if rep.Manager != "" {
		fmt.Fprintf(&sb, "manager: %s\n", rep.Manager)
	}
	if rep.Workspace != "" {
		fmt.Fprintf(&sb, "workspace: %s\n", rep.Workspace)
	}
	for _, s := range rep.Steps {
		fmt.Fprintf(&sb, "\n$ %s\nexit code: %d (%s)\n", gate.Command{Argv: s.Argv}.String(), s.ExitCode, time.Duration(s.DurationMS)*time.Millisecond)
		for _, o := range [][2]string{{"stdout", s.Stdout}, {"stderr", s.Stderr}} {
			if o[1] != "" {
				fmt.Fprintf(&sb, "%s:\n%s", o[0], o[1])
				if !strings.HasSuffix(o[1], "\n") {
					sb.WriteByte('\n')
				}
			}
		}
	}
	if rep.Note != "" {
		fmt.Fprintf(&sb, "\nnote: %s\n", rep.Note)
	}
	if rep.NextCall != "" {
		fmt.Fprintf(&sb, "next: %s\n", rep.NextCall)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(sb.String())}, StructuredContent: rep, IsError: failed}
}
