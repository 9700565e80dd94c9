// Package docker is the tool family that drives containers:
// docker_operations runs the docker CLI (or podman, where that is what a
// host has) as an argument vector, on this machine or an SSH host.
//
// # Overview
//
// No command string is ever built: each operation is a fixed argv with the
// caller's values in positions that cannot be options. Container and image
// names must match a strict pattern (no leading '-', no spaces, no shell
// syntax), and they follow a "--" end-of-options marker as well, so a
// name such as "--privileged" or "-v /:/host" is refused before anything
// runs. The command of run and exec passes the command gate (package
// gate) as its own argv, and so does the whole docker argv, whose run
// options the policy inspects. list, logs and inspect are read-only for
// scopes; stop, remove and pull mutate; run, exec and build run code.
// Output is capped per stream (20,000 bytes by default, as Rigout's).
//
// Which engine a host has is probed once per host (docker --version, then
// podman --version) and remembered.
//
// # Usage
//
//	df, err := docker.New(docker.Config{Hosts: router})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: df.Tools()})
package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/internal/family"
)

// Defaults used when the corresponding Config field is zero.
const (
	DefaultMaxOutput = 20000
	DefaultTimeout   = 60 * time.Second
	// DefaultBuildTimeout applies to build and pull, which download.
	DefaultBuildTimeout = 10 * time.Minute
	DefaultMaxTimeout   = time.Hour
	// DefaultTail is how many log lines logs returns; MaxTail is the most.
	DefaultTail = 200
	MaxTail     = 5000
)

// Engines are the CLIs the family drives, in the order it looks for them.
var Engines = []string{"docker", "podman"}

// Config configures the family. Local (or Hosts) is required, so that
// no command runs outside a sandbox by accident; the rest has useful zero
// values: this machine only, the default command policy.
type Config struct {
	// Local runs commands on this machine: an exec.Local with a Sandbox,
	// or with UnsafeNoSandbox to run them unconfined; with Hosts, the
	// hosts' local runner instead, which must be one too. Required
	// without Hosts: New fails with exec.ErrNoSandbox.
	Local exec.Runner
	// Hosts, if set, resolves the host argument (the SSH package\'s
	// Router lets the tool reach SSH hosts). The caller owns it. If nil,
	// exec.LocalHosts with Local: this machine only.
	Hosts exec.Hosts
	// Gate checks every command before it runs. If nil, the default policy.
	Gate *gate.Gate
	// MaxOutput caps each output stream, in bytes. If zero,
	// DefaultMaxOutput.
	MaxOutput int
	// DefaultTimeout applies to operations that set none (build and pull
	// get DefaultBuildTimeout). If zero, DefaultTimeout.
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout a call may ask for. If zero,
	// DefaultMaxTimeout.
	MaxTimeout time.Duration
}

// Family is the docker tool family. It is safe for concurrent use.
type Family struct {
	cfg   Config
	hosts exec.Hosts

	// mu protects the following.
	mu      sync.Mutex
	engines map[string]string // host → "docker" or "podman"
}

// New builds the family from cfg, which is copied.
func New(cfg Config) (*Family, error) {
	c := cfg
	hosts, g, err := family.Setup("docker", c.Local, c.Hosts, c.Gate)
	if err != nil {
		return nil, err
	}
	c.Gate = g
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if err := family.Timeouts("docker", &c.DefaultTimeout, &c.MaxTimeout, DefaultTimeout, DefaultMaxTimeout); err != nil {
		return nil, err
	}
	return &Family{cfg: c, hosts: hosts, engines: map[string]string{}}, nil
}

// Tools returns the family's tools.
func (f *Family) Tools() []rigout.Tool { return []rigout.Tool{f.DockerOperations()} }

// Instructions is the family's part of the initialize instructions.
func (f *Family) Instructions() string {
	return "docker_operations drives docker (or podman) with exact arguments; `command` is an argv array."
}

var input = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "run", "exec", "stop", "remove", "build", "pull", "logs", "inspect"]},
    "operation": {"type": "string", "enum": ["list", "run", "exec", "stop", "remove", "build", "pull", "logs", "inspect"], "description": "Older name of action."},
    "container_name": {"type": "string", "description": "Container (run: its --name)."},
    "image": {"type": "string", "description": "run, pull, inspect; build: the tag."},
    "command": {"type": "array", "items": {"type": "string"}, "description": "run, exec: argv in the container."},
    "detach": {"type": "boolean"},
    "interactive": {"type": "boolean", "description": "-i"},
    "remove": {"type": "boolean", "description": "run: --rm (default true)."},
    "path": {"type": "string", "description": "build: context directory (default .)."},
    "tail": {"type": ["integer", "string"], "description": "logs: lines, 1-5000 or \"all\" (default 200)."},
    "timeout": {"type": "integer", "minimum": 1, "description": "Seconds; default 60 (build, pull 600)."},
    "host": {"type": "string", "description": "local (default), an SSH alias, user@host, or auto."}
  },
  "additionalProperties": false
}`)

var output = json.RawMessage(`{
  "type": "object",
  "properties": {
    "host": {"type": "string"}, "route": {"type": "string"}, "engine": {"type": "string"},
    "argv": {"type": "array", "items": {"type": "string"}},
    "exit_code": {"type": "integer"}, "timed_out": {"type": "boolean"},
    "stdout": {"type": "string"}, "stderr": {"type": "string"},
    "stdout_dropped": {"type": "integer"}, "stderr_dropped": {"type": "integer"},
    "containers": {"type": "array", "items": {"type": "object"}},
    "inspect": {"type": "array", "items": {"type": "object"}}
  },
  "required": ["host", "engine", "argv", "exit_code"]
}`)

// DockerOperations returns the docker_operations tool.
func (f *Family) DockerOperations() rigout.Tool {
	return rigout.Tool{
		Name:         "docker_operations",
		Description:  "Containers via the docker (or podman) CLI as exact arguments: list, run, exec, stop, remove, build, pull, logs, inspect.",
		InputSchema:  input,
		OutputSchema: output,
		Action:       "action",
		ActionAlias:  "operation",
		Actions: map[string]rigout.Risk{
			"list": rigout.ReadOnly, "logs": rigout.ReadOnly, "inspect": rigout.ReadOnly,
			"stop": rigout.Mutating, "remove": rigout.Mutating, "pull": rigout.Mutating,
			"run": rigout.Exec, "exec": rigout.Exec, "build": rigout.Exec,
		},
		Hosts:       []rigout.HostArg{{Name: "host"}},
		DefaultHost: "local",
		Paths:       []rigout.PathArg{{Name: "path"}},
		Handler:     f.handle,
	}
}

// Args are docker_operations' arguments.
type Args struct {
	Operation     string   `json:"operation"`
	ContainerName string   `json:"container_name"`
	Image         string   `json:"image"`
	Command       []string `json:"command"`
	Detach        bool     `json:"detach"`
	Interactive   bool     `json:"interactive"`
	Remove        *bool    `json:"remove"`
	Path          string   `json:"path"`
	Tail          any      `json:"tail"`
	Timeout       int64    `json:"timeout"`
}

var (
	// The length bounds (128 and 255 bytes) are checked apart: a counted
	// repetition compiles to that many copies of its class, at every start.
	containerRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	imageRe     = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$`)
)

// ValidContainer reports whether s may name a container: a letter or
// digit, then letters, digits, '_', '.' and '-' (as docker's own rule),
// at most 128 bytes.
func ValidContainer(s string) bool { return len(s) <= 128 && containerRe.MatchString(s) }

// ValidImage reports whether s may name an image: [registry[:port]/]
// name[:tag][@digest] in letters, digits and ._/:@-, starting with a
// letter or digit, no "//" or "..".
func ValidImage(s string) bool {
	return len(s) <= 255 && imageRe.MatchString(s) && !strings.Contains(s, "//") && !strings.Contains(s, "..")
}

// Argv returns the arguments after the engine's name for a call, or an
// error naming the argument that is missing or refused. path is the
// resolved build context.
func Argv(a Args, path string) ([]string, error) {
	needContainer := func() error {
		switch {
		case a.ContainerName == "":
			return fmt.Errorf("%s needs container_name", a.Operation)
		case !ValidContainer(a.ContainerName):
			return fmt.Errorf("container_name %q is not a container name (letters, digits, _ . -; not starting with - or .)", a.ContainerName)
		}
		return nil
	}
	needImage := func() error {
		switch {
		case a.Image == "":
			return fmt.Errorf("%s needs image", a.Operation)
		case !ValidImage(a.Image):
			return fmt.Errorf("image %q is not an image reference ([registry/]name[:tag][@digest]; not starting with -)", a.Image)
		}
		return nil
	}
	switch a.Operation {
	case "list":
		return []string{"ps", "--all", "--no-trunc", "--format", "{{json .}}"}, nil
	case "run":
		if err := needImage(); err != nil {
			return nil, err
		}
		argv := []string{"run"}
		if a.Detach {
			argv = append(argv, "--detach")
		}
		if a.Interactive {
			argv = append(argv, "--interactive")
		}
		if a.Remove == nil || *a.Remove {
			argv = append(argv, "--rm")
		}
		if a.ContainerName != "" {
			if err := needContainer(); err != nil {
				return nil, err
			}
			argv = append(argv, "--name", a.ContainerName)
		}
		return append(append(argv, "--", a.Image), a.Command...), nil
	case "exec":
		if err := needContainer(); err != nil {
			return nil, err
		}
		if len(a.Command) == 0 || a.Command[0] == "" {
			return nil, errors.New("exec needs command, an argv array")
		}
		argv := []string{"exec"}
		if a.Interactive {
			argv = append(argv, "--interactive")
		}
		return append(append(argv, "--", a.ContainerName), a.Command...), nil
	case "stop", "remove":
		if err := needContainer(); err != nil {
			return nil, err
		}
		sub := map[string]string{"stop": "stop", "remove": "rm"}[a.Operation]
		return []string{sub, "--", a.ContainerName}, nil
	case "pull":
		if err := needImage(); err != nil {
			return nil, err
		}
		return []string{"pull", "--", a.Image}, nil
	case "build":
		for _, p := range []string{a.Path, path} {
			if strings.HasPrefix(p, "-") || strings.Contains(p, "://") || strings.ContainsAny(p, "\x00\n") {
				return nil, fmt.Errorf("path %q is not a directory path (no URLs, no stdin)", p)
			}
		}
		argv := []string{"build"}
		if a.Image != "" {
			if err := needImage(); err != nil {
				return nil, err
			}
			argv = append(argv, "--tag", a.Image)
		}
		return append(argv, "--", path), nil
	case "logs":
		if err := needContainer(); err != nil {
			return nil, err
		}
		tail, err := parseTail(a.Tail)
		if err != nil {
			return nil, err
		}
		return []string{"logs", "--tail", tail, "--", a.ContainerName}, nil
	case "inspect":
		name := a.ContainerName
		if name == "" {
			name = a.Image
		}
		switch {
		case name == "":
			return nil, errors.New("inspect needs container_name or image")
		case !ValidContainer(name) && !ValidImage(name):
			return nil, fmt.Errorf("%q is not a container or image name", name)
		}
		return []string{"inspect", "--", name}, nil
	}
	return nil, fmt.Errorf("unknown operation %q", a.Operation)
}

// parseTail reads logs' tail: absent (DefaultTail), 1–MaxTail, or "all".
func parseTail(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return fmt.Sprint(DefaultTail), nil
	case float64:
		if t != float64(int(t)) || t < 1 || t > MaxTail {
			return "", fmt.Errorf("tail must be a whole number from 1 to %d, or \"all\"", MaxTail)
		}
		return fmt.Sprint(int(t)), nil
	case string:
		if t == "all" {
			return "all", nil
		}
	}
	return "", fmt.Errorf("tail must be a whole number from 1 to %d, or \"all\"", MaxTail)
}

// engine returns the container CLI host has: the one remembered, else the
// first of Engines whose --version runs (a probe the policy would refuse
// is not run).
func (f *Family) engine(ctx context.Context, host string, t exec.Target) (string, error) {
	f.mu.Lock()
	e, ok := f.engines[host]
	f.mu.Unlock()
	if ok {
		return e, nil
	}
	for _, e := range Engines {
		argv := []string{e, "--version"}
		if !f.cfg.Gate.Judge(gate.Command{Argv: argv}).Allowed {
			continue
		}
		r, err := t.Runner.Run(ctx, exec.Command{Argv: argv, Timeout: 20 * time.Second, MaxOutput: 4096})
		if err != nil && ctx.Err() != nil {
			return "", err
		}
		if err == nil && r.ExitCode == 0 {
			f.mu.Lock()
			f.engines[host] = e
			f.mu.Unlock()
			return e, nil
		}
	}
	return "", fmt.Errorf("neither docker nor podman runs on %s (looked for them on its PATH)", host)
}

// result is docker_operations' structuredContent.
type result struct {
	Host          string           `json:"host"`
	Route         string           `json:"route"`
	Engine        string           `json:"engine"`
	Argv          []string         `json:"argv"`
	ExitCode      int              `json:"exit_code"`
	TimedOut      bool             `json:"timed_out,omitempty"`
	Stdout        string           `json:"stdout"`
	Stderr        string           `json:"stderr"`
	StdoutDropped int64            `json:"stdout_dropped,omitempty"`
	StderrDropped int64            `json:"stderr_dropped,omitempty"`
	Containers    []map[string]any `json:"containers,omitempty"`
	Inspect       []map[string]any `json:"inspect,omitempty"`
}

func (f *Family) handle(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a Args
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	a.Operation = call.Action()
	path := "."
	if p, ok := call.Path("path"); ok {
		path = p
	} else if a.Operation == "build" && len(call.Principal().Scopes.Roots) > 0 {
		// "." is a directory the token's roots were not checked against.
		return family.Invalid(call, "docker_operations: build needs an absolute path: this token is confined to file roots")
	}
	argv, err := Argv(a, path)
	if err != nil {
		return family.Invalid(call, "docker_operations: %v", err)
	}
	timeout := f.cfg.DefaultTimeout
	if a.Operation == "build" || a.Operation == "pull" {
		timeout = max(timeout, DefaultBuildTimeout)
	}
	if a.Timeout > 0 {
		if a.Timeout > int64(f.cfg.MaxTimeout/time.Second) {
			return family.Invalid(call, "timeout %ds exceeds this gateway's maximum of %ds", a.Timeout, int64(f.cfg.MaxTimeout/time.Second))
		}
		timeout = time.Duration(a.Timeout) * time.Second
	}
	host := call.Hosts()[0]
	// The container's command is judged as a command of its own.
	if len(a.Command) > 0 && (a.Operation == "run" || a.Operation == "exec") {
		where := "a new container of " + a.Image
		if a.Operation == "exec" {
			where = "container " + a.ContainerName
		}
		if res := f.cfg.Gate.Check(ctx, call, gate.Command{Host: where + " on " + host, Argv: a.Command}); res != nil {
			return res, nil
		}
	}
	t, err := f.hosts.Resolve(ctx, host, call.Principal().Name)
	if err != nil {
		call.Outcome.Status = audit.StatusError
		return rigout.ErrorResult("%v", err), nil
	}
	call.Outcome.Route = t.Route
	engine, err := f.engine(ctx, host, t)
	if err != nil {
		call.Outcome.Status, call.Outcome.Error = audit.StatusError, err.Error()
		return rigout.ErrorResult("%v", err), nil
	}
	full := append([]string{engine}, argv...)
	if res := f.cfg.Gate.Check(ctx, call, gate.Command{Host: host, Argv: full}); res != nil {
		return res, nil
	}
	res, err := t.Runner.Run(ctx, exec.Command{Argv: full, Timeout: timeout, MaxOutput: f.cfg.MaxOutput})
	if err != nil {
		call.Outcome.Status, call.Outcome.Error = audit.StatusError, "could not run: "+err.Error()
		return rigout.ErrorResult("could not run %s on %s: %v", engine, host, err), nil
	}
	family.Ran(&call.Outcome, t.Local, res)
	return render(call, host, t.Route, engine, full, res), nil
}

// render turns the run into the tool result and the call's status; the
// rest of the outcome is family.Ran's.
func render(call *rigout.Call, host, route, engine string, argv []string, res exec.Result) *mcp.CallToolResult {
	o := &call.Outcome
	failed := res.ExitCode != 0 || res.TimedOut || res.Canceled
	switch {
	case res.TimedOut:
		o.Status, o.Error = audit.StatusTimeout, fmt.Sprintf("timed out after %s", res.Duration.Round(time.Millisecond))
	case res.Canceled:
		o.Status, o.Error = audit.StatusCanceled, "canceled"
	case failed:
		o.Status, o.Error = audit.StatusError, fmt.Sprintf("exit code %d", res.ExitCode)
	default:
		o.Status = audit.StatusOK
	}
	r := result{Host: host, Route: route, Engine: engine, Argv: argv, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		Stdout: text(res.Stdout), Stderr: text(res.Stderr), StdoutDropped: res.Stdout.Dropped, StderrDropped: res.Stderr.Dropped}
	if !failed && res.Stdout.Dropped == 0 {
		switch argv[1] {
		case "ps":
			for line := range strings.Lines(string(res.Stdout.Data)) {
				var m map[string]any
				if json.Unmarshal([]byte(line), &m) == nil {
					r.Containers = append(r.Containers, m)
				}
			}
		case "inspect":
			_ = json.Unmarshal(res.Stdout.Data, &r.Inspect)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "$ %s\nhost: %s (via %s)\n", gate.Command{Argv: argv}.String(), host, route)
	switch {
	case res.TimedOut:
		fmt.Fprintf(&sb, "timed out after %s\n", res.Duration.Round(time.Millisecond))
	default:
		fmt.Fprintf(&sb, "exit code: %d\n", res.ExitCode)
	}
	if r.Containers != nil {
		fmt.Fprintf(&sb, "%d container(s)\n", len(r.Containers))
	}
	for _, s := range [][2]string{{"stdout", r.Stdout}, {"stderr", r.Stderr}} {
		if s[1] != "" {
			fmt.Fprintf(&sb, "\n%s:\n%s", s[0], s[1])
			if !strings.HasSuffix(s[1], "\n") {
				sb.WriteByte('\n')
			}
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(sb.String())}, StructuredContent: r, IsError: failed}
}

// text renders one captured stream, cleaned and redacted, marking the cut.
func text(o exec.Output) string {
	if o.Dropped == 0 {
		return textsafe.Text(o.Data)
	}
	return fmt.Sprintf("%s\n[… %d bytes dropped: output over the cap keeps its first %d and last %d bytes …]\n%s",
		textsafe.Text(o.Data[:o.Head]), o.Dropped, o.Head, len(o.Data)-o.Head, textsafe.Text(o.Data[o.Head:]))
}
