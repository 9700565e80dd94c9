package rigout

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/validate"
)

// builtinTools returns the gateway's own tools, in the order tools/list
// shows them.
func (g *Gateway) builtinTools() []Tool {
	tools := []Tool{g.executeCommandTool(), g.activityTool()}
	if g.router != nil {
		tools = append(tools, g.manageHostsTool())
	}
	return tools
}

const executeCommandDescription = "Run a command and return its exit code, stdout and stderr. " +
	"Give `command` (a bash command line) or `argv` (exact arguments, no shell). " +
	"Output is capped per stream (head and tail kept). Destructive commands are refused by policy."

var executeCommandInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "Shell command line, run by bash -c."},
    "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Exact argument vector, run without a shell. Use instead of command."},
    "host": {"type": "string", "description": "Where to run: local (default), an SSH alias, user@host, or auto."},
    "hosts": {"type": ["array", "string"], "items": {"type": "string"}, "description": "Run on several hosts at once: a list of hosts, or a label selector such as \"web,env=prod\". Use instead of host."},
    "working_directory": {"type": "string", "description": "Working directory; ~ is the home directory."},
    "environment": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Extra environment variables."},
    "stdin": {"type": "string", "description": "Text fed to standard input."},
    "timeout": {"type": "integer", "minimum": 1, "description": "Seconds before the command is killed. Default 30."},
    "use_sudo": {"type": "boolean", "description": "Run through sudo -n (never prompts)."},
    "bypass_security": {"type": "boolean", "description": "Skip the command policy; only for tokens allowed to."}
  },
  "additionalProperties": false
}`)

var executeCommandOutput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "host": {"type": "string"},
    "route": {"type": "string"},
    "exit_code": {"type": "integer"},
    "signal": {"type": "string"},
    "timed_out": {"type": "boolean"},
    "duration_ms": {"type": "integer"},
    "stdout": {"type": "string"},
    "stderr": {"type": "string"},
    "stdout_bytes": {"type": "integer"},
    "stderr_bytes": {"type": "integer"},
    "stdout_dropped": {"type": "integer"},
    "stderr_dropped": {"type": "integer"},
    "error": {"type": "string"},
    "results": {"type": "array", "description": "One entry per host of a fan-out.", "items": {"type": "object"}}
  }
}`)

func (g *Gateway) executeCommandTool() Tool {
	return Tool{
		Name:         "execute_command",
		Description:  executeCommandDescription,
		InputSchema:  executeCommandInput,
		OutputSchema: executeCommandOutput,
		Risk:         Exec,
		Handler:      g.executeCommand,
	}
}

// executeArgs are execute_command's arguments.
type executeArgs struct {
	Command          string            `json:"command"`
	Argv             []string          `json:"argv"`
	Host             string            `json:"host"`
	Hosts            any               `json:"hosts"`
	WorkingDirectory string            `json:"working_directory"`
	Environment      map[string]string `json:"environment"`
	Stdin            *string           `json:"stdin"`
	Timeout          int64             `json:"timeout"`
	UseSudo          bool              `json:"use_sudo"`
	BypassSecurity   bool              `json:"bypass_security"`
}

// commandResult is execute_command's structuredContent.
type commandResult struct {
	Host          string `json:"host"`
	Route         string `json:"route"`
	ExitCode      int    `json:"exit_code"`
	Signal        string `json:"signal,omitempty"`
	TimedOut      bool   `json:"timed_out"`
	DurationMS    int64  `json:"duration_ms"`
	Stdout        string `json:"stdout"`
	Stderr        string `json:"stderr"`
	StdoutBytes   int64  `json:"stdout_bytes"`
	StderrBytes   int64  `json:"stderr_bytes"`
	StdoutDropped int64  `json:"stdout_dropped,omitempty"`
	StderrDropped int64  `json:"stderr_dropped,omitempty"`
	Error         string `json:"error,omitempty"`
}

func (g *Gateway) executeCommand(ctx context.Context, call *Call) (*mcp.CallToolResult, error) {
	var a executeArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	switch {
	case a.Command == "" && len(a.Argv) == 0:
		call.Outcome.Status = "invalid"
		return ErrorResult("execute_command needs `command` (a shell command line) or `argv` (an argument array)"), nil
	case a.Command != "" && len(a.Argv) > 0:
		call.Outcome.Status = "invalid"
		return ErrorResult("execute_command takes `command` or `argv`, not both"), nil
	}
	if a.Hosts != nil && a.Host != "" {
		call.Outcome.Status = "invalid"
		return ErrorResult("execute_command takes `host` or `hosts`, not both"), nil
	}
	timeout := g.cfg.DefaultTimeout
	if a.Timeout > 0 {
		if a.Timeout > int64(g.cfg.MaxTimeout/time.Second) {
			call.Outcome.Status = "invalid"
			return ErrorResult("timeout %ds exceeds this gateway's maximum of %ds", a.Timeout, int64(g.cfg.MaxTimeout/time.Second)), nil
		}
		timeout = time.Duration(a.Timeout) * time.Second
	}
	cmd := exec.Command{
		Shell:     a.Command,
		Argv:      a.Argv,
		Env:       a.Environment,
		Timeout:   timeout,
		Sudo:      a.UseSudo,
		MaxOutput: g.cfg.MaxOutput,
	}
	if a.Stdin != nil {
		cmd.Stdin = strings.NewReader(*a.Stdin)
	}
	if p := g.newProgress(ctx, call); p != nil {
		cmd.OnOutput = func(_ exec.Stream, b []byte) { p.output(len(b)) }
		pctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); p.run(pctx) }()
		defer func() { stop(); <-done }()
	}
	if a.Hosts != nil {
		return g.fanOut(ctx, call, a, cmd)
	}

	host := a.Host
	if host == "" {
		host = "local"
	}
	call.Outcome.Host = host
	target, err := g.route(ctx, host)
	if err != nil {
		call.Outcome.Status = "error"
		return ErrorResult("%v", err), nil
	}
	call.Outcome.Route = target.Route

	if target.Local {
		if cmd.Dir, err = g.localDir(a.WorkingDirectory); err != nil {
			call.Outcome.Status = "invalid"
			return ErrorResult("%v", err), nil
		}
	} else {
		cmd.Dir = a.WorkingDirectory
	}
	if res := g.checkPolicy(ctx, call, a, cmd.Dir); res != nil {
		return res, nil
	}
	res, err := target.Runner.Run(ctx, cmd)
	if err != nil {
		call.Outcome.Status = "error"
		return ErrorResult("could not run on %s: %v", host, err), nil
	}
	if res.Route == "" {
		res.Route = target.Route
	}
	return g.commandResult(call, host, describeCommand(a), res), nil
}

// route resolves a host argument through the routing ladder. Without SSH
// configured, only this machine is reachable.
func (g *Gateway) route(ctx context.Context, host string) (exec.Target, error) {
	if g.router != nil {
		return g.router.Resolve(ctx, host, g.principal(ctx).Name)
	}
	switch strings.ToLower(host) {
	case "", "local", "self", "localhost", "127.0.0.1", "::1":
		return exec.Target{Runner: g.cfg.Local, Route: "local", Host: host, Local: true}, nil
	}
	return exec.Target{}, fmt.Errorf("unknown host %q: this gateway runs commands only on this machine (host \"local\"); SSH hosts are not configured", host)
}

// localDir resolves a working directory for a local command: empty means the
// gateway's working directory, ~ and ~/x the home directory, a relative path
// is taken from the gateway's working directory.
func (g *Gateway) localDir(dir string) (string, error) {
	switch {
	case dir == "":
		return g.cfg.WorkDir, nil
	case dir == "~" || strings.HasPrefix(dir, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("working_directory %q: no home directory: %w", dir, err)
		}
		dir = filepath.Join(home, dir[1:])
	case !filepath.IsAbs(dir):
		dir = filepath.Join(g.cfg.WorkDir, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("working_directory %q does not exist", dir)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("working_directory %q is not a directory", dir)
	}
	return dir, nil
}

// describeCommand renders the command as the caller gave it: the shell line,
// or the argv quoted for a POSIX shell.
func describeCommand(a executeArgs) string {
	if a.Command != "" {
		return a.Command
	}
	parts := make([]string, len(a.Argv))
	for i, s := range a.Argv {
		q, err := syntax.Quote(s, syntax.LangBash)
		if err != nil {
			q = fmt.Sprintf("%q", s)
		}
		parts[i] = q
	}
	return strings.Join(parts, " ")
}

// commandResult turns an exec.Result into the tool result: text for the
// model, structuredContent for programs, and the outcome for the ledger.
func (g *Gateway) commandResult(call *Call, host, command string, res exec.Result) *mcp.CallToolResult {
	o := &call.Outcome
	exit := res.ExitCode
	o.ExitCode = &exit
	o.Signal = res.Signal
	o.StdoutBytes, o.StderrBytes = res.Stdout.Total, res.Stderr.Total
	o.Truncated = res.Truncated()

	stdout, stderr := outputText(res.Stdout), outputText(res.Stderr)
	failed := res.ExitCode != 0 || res.TimedOut || res.Canceled
	switch {
	case res.TimedOut:
		o.Status = "timeout"
	case res.Canceled:
		o.Status = "canceled"
	case failed:
		o.Status = "error"
	default:
		o.Status = "ok"
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "$ %s\n", redactLine(command))
	fmt.Fprintf(&sb, "host: %s (via %s)\n", host, res.Route)
	switch {
	case res.TimedOut:
		fmt.Fprintf(&sb, "timed out after %s: the process group was killed (%s)\n", res.Duration.Round(time.Millisecond), res.Signal)
	case res.Canceled:
		fmt.Fprintf(&sb, "canceled after %s: the process group was killed (%s)\n", res.Duration.Round(time.Millisecond), res.Signal)
	case res.Signal != "":
		fmt.Fprintf(&sb, "killed by %s after %s\n", res.Signal, res.Duration.Round(time.Millisecond))
	default:
		fmt.Fprintf(&sb, "exit code: %d (%s)\n", res.ExitCode, res.Duration.Round(time.Millisecond))
	}
	if stdout == "" && stderr == "" {
		sb.WriteString("(no output)\n")
	}
	if stdout != "" {
		sb.WriteByte('\n')
		writeStream(&sb, "stdout", stdout)
	}
	if stderr != "" {
		sb.WriteByte('\n')
		writeStream(&sb, "stderr", stderr)
	}

	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(sb.String())},
		StructuredContent: commandResult{
			Host:          host,
			Route:         res.Route,
			ExitCode:      res.ExitCode,
			Signal:        res.Signal,
			TimedOut:      res.TimedOut,
			DurationMS:    res.Duration.Milliseconds(),
			Stdout:        stdout,
			Stderr:        stderr,
			StdoutBytes:   res.Stdout.Total,
			StderrBytes:   res.Stderr.Total,
			StdoutDropped: res.Stdout.Dropped,
			StderrDropped: res.Stderr.Dropped,
		},
		IsError: failed,
	}
}

// outputText renders one captured stream: cleaned, redacted, and with a
// marker where the cap dropped the middle.
func outputText(o exec.Output) string {
	if o.Dropped == 0 {
		return validate.Redact(cleanText(o.Data))
	}
	head := validate.Redact(cleanText(o.Data[:o.Head]))
	tail := validate.Redact(cleanText(o.Data[o.Head:]))
	return fmt.Sprintf("%s\n[… %d bytes dropped: output over the cap keeps its first %d and last %d bytes …]\n%s",
		head, o.Dropped, o.Head, len(o.Data)-o.Head, tail)
}

// checkPolicy runs the command policy on what execute_command is about to
// run. It returns nil when the command may run, else the refusal. A caller
// may pass bypass_security only with a token that has the bypass scope;
// every bypass is recorded in the outcome.
func (g *Gateway) checkPolicy(ctx context.Context, call *Call, a executeArgs, dir string) *mcp.CallToolResult {
	opts := validate.Options{AllowSudo: a.UseSudo}
	if path.IsAbs(dir) {
		// Relative paths are judged against where the command will run.
		opts.Dir = dir
	}
	var d validate.Decision
	if a.Command != "" {
		d = g.cfg.Policy.Check(a.Command, opts)
	} else {
		d = g.cfg.Policy.CheckArgv(a.Argv, opts)
	}
	o := &call.Outcome
	if d.Allowed {
		o.Decision = "allow"
		return nil
	}
	o.Rule = d.Rule
	o.Decision = "deny"
	if d.Confirm {
		o.Decision = "confirm"
	}
	p := g.principal(ctx)
	bypassErr := p.Scopes.RequireBypass()
	if a.BypassSecurity && bypassErr == nil {
		o.Bypassed = true
		o.Decision = "bypass"
		g.log.LogAttrs(ctx, slog.LevelWarn, "command policy bypassed",
			slog.String("call", call.ID), slog.String("rule", d.Rule), slog.String("principal", p.Name))
		return nil
	}
	// A rule in confirm mode, or a bypass the token may not make by itself,
	// is put to the person behind the client when the client can ask.
	if d.Confirm || a.BypassSecurity {
		state, res := confirm(ctx, call, confirmQuestion(o.Host, describeCommand(a), d.Rule, d.Reason))
		switch state {
		case asking:
			o.Status = "awaiting-confirmation"
			return res
		case approved:
			o.Decision = "confirmed"
			o.Bypassed = !d.Confirm // the person overrode a deny rule
			g.log.LogAttrs(ctx, slog.LevelWarn, "held-back command confirmed by a person",
				slog.String("call", call.ID), slog.String("rule", d.Rule), slog.String("principal", p.Name))
			return nil
		case declined:
			o.Status = "denied"
			o.Decision = "declined"
			return ErrorResult("refused by policy rule %s: %s\nA person was asked and did not approve it. Nothing ran.", d.Rule, d.Reason)
		}
	}
	o.Status = "denied"
	var sb strings.Builder
	fmt.Fprintf(&sb, "refused by policy rule %s: %s", d.Rule, d.Reason)
	if d.Hint != "" {
		fmt.Fprintf(&sb, "\nInstead: %s", d.Hint)
	}
	switch {
	case a.BypassSecurity:
		fmt.Fprintf(&sb, "\nbypass_security was set, but %v, and this client cannot ask a person to approve it.", bypassErr)
	case d.Confirm:
		sb.WriteString("\nThis rule asks for a person's confirmation, and this client cannot ask (it declared no elicitation capability).")
	}
	sb.WriteString("\nNothing ran.")
	return ErrorResult("%s", sb.String())
}

// redactLine renders one line of caller-supplied text for a result: its
// first line, cut to 500 bytes, cleaned and redacted.
func redactLine(s string) string {
	return validate.Redact(cleanText([]byte(firstLine(s, 500))))
}
