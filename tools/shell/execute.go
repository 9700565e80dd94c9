package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/internal/family"
	"github.com/rigout/rigout/validate"
)

const executeCommandDescription = "Run a command and return its exit code, stdout and stderr. " +
	"Give `command` (a bash command line) or `argv` (exact arguments, no shell). " +
	"Long output shows head and tail; destructive commands are refused."

var executeCommandInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "Shell command line, run by bash -c."},
    "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Exact arguments, no shell; instead of command."},
    "host": {"type": "string", "description": "local (default), an SSH alias, user@host, or auto."},
    "hosts": {"type": ["array", "string"], "items": {"type": "string"}, "description": "Several at once: a list, or a label selector such as \"web,env=prod\"."},
    "working_directory": {"type": "string", "description": "~ is the home directory."},
    "environment": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Extra environment variables."},
    "stdin": {"type": "string", "description": "Text fed to standard input."},
    "timeout": {"type": "integer", "minimum": 1, "description": "Seconds before the command is killed. Default 30."},
    "use_sudo": {"type": "boolean", "description": "Run through sudo -n (never prompts)."},
    "bypass_security": {"type": "boolean", "description": "Skip the command policy; only for tokens allowed to."}
  },
  "additionalProperties": false
}`)

// executeCommandOutput names the fields a program reads most; the
// structuredContent has more (byte counts, dropped bytes, why a command ran
// unsandboxed, leftovers killed, the next call), which the schema allows
// without listing, to keep tools/list small.
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
    "error": {"type": "string"},
    "sandboxed": {"type": "boolean"},
    "process_id": {"type": "string"},
    "running": {"type": "boolean"},
    "results": {"type": "array", "items": {"type": "object"}}
  }
}`)

// waitSecondsProperty is the input property execute_command has when the
// family hands long commands off (Config.Processes).
const waitSecondsProperty = `"wait_seconds": {"type": "integer", "minimum": 0, "description": "Seconds before a still-running command becomes a background process (see process). Default 20."},
    `

// ExecuteCommand returns the execute_command tool, for an embedder that
// wants it alone beside its own tools.
func (f *Family) ExecuteCommand() rigout.Tool {
	hosts := rigout.HostArg{Name: "hosts"}
	if r, ok := f.hosts.(exec.FanOuter); ok {
		hosts.Select = func(_ context.Context, selector string) ([]string, error) { return r.Select(selector) }
	} else {
		hosts.Select = func(context.Context, string) ([]string, error) {
			return nil, fmt.Errorf("host selectors need SSH hosts, which this gateway does not have configured")
		}
	}
	input := executeCommandInput
	if f.cfg.Processes != nil {
		in := strings.Replace(string(input), `"use_sudo"`, waitSecondsProperty+`"use_sudo"`, 1)
		input = json.RawMessage(in)
	}
	// Bounds in words too: some clients strip them from schemas.
	input = json.RawMessage(strings.Replace(string(input), `killed. Default 30."`,
		fmt.Sprintf(`killed, in the background too. Default %d, at most %d."`,
			int64(f.cfg.DefaultTimeout/time.Second), int64(f.cfg.MaxTimeout/time.Second)), 1))
	if f.cfg.Credentials != nil {
		input = json.RawMessage(strings.Replace(string(input), `"stdin"`, secretsProperty+`"stdin"`, 1))
	}
	return rigout.Tool{
		Name:         "execute_command",
		Description:  executeCommandDescription,
		InputSchema:  input,
		OutputSchema: executeCommandOutput,
		Risk:         rigout.Exec,
		Hosts:        []rigout.HostArg{{Name: "host"}, hosts},
		DefaultHost:  "local",
		Paths:        []rigout.PathArg{{Name: "working_directory", Resolve: f.resolveDir}},
		Recorded:     []string{"command", "argv", "working_directory"},
		Handler:      f.executeCommand,
		Observes:     f.observes,
		Tasks:        true,
		// Its only side effect is the command, held until the intent row
		// is durable (cmd.Hold below).
		HoldsForIntent: true,
	}
}

// executeArgs are execute_command's arguments.
type executeArgs struct {
	Command        string            `json:"command"`
	Argv           []string          `json:"argv"`
	Host           string            `json:"host"`
	Hosts          any               `json:"hosts"`
	Environment    map[string]string `json:"environment"`
	Secrets        map[string]string `json:"secrets"`
	Stdin          *string           `json:"stdin"`
	Timeout        int64             `json:"timeout"`
	UseSudo        bool              `json:"use_sudo"`
	BypassSecurity bool              `json:"bypass_security"`
	WaitSeconds    *int64            `json:"wait_seconds"`
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
	Sandboxed     bool   `json:"sandboxed"`
	Unsandboxed   string `json:"unsandboxed,omitempty"`
	Orphans       int    `json:"orphans_killed,omitempty"`
	// With a hand-off, or output over the cap that the process keeps:
	// the background process, and the call that reads it.
	ProcessID string           `json:"process_id,omitempty"`
	Running   bool             `json:"running,omitempty"`
	Next      *rigout.NextCall `json:"next,omitempty"`
	Note      string           `json:"note,omitempty"`
}

func (f *Family) executeCommand(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a executeArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	if s, ok := a.Hosts.(string); ok && s == "" {
		a.Hosts = nil // as the chain reads it: an empty optional field is unset
	}
	switch {
	case a.Command == "" && len(a.Argv) == 0:
		return family.Invalid(call, "execute_command needs `command` (a shell command line) or `argv` (an argument array)")
	case a.Command != "" && len(a.Argv) > 0:
		return family.Invalid(call, "execute_command takes `command` or `argv`, not both")
	case a.Hosts != nil && a.Host != "":
		return family.Invalid(call, "execute_command takes `host` or `hosts`, not both")
	}
	wait := f.cfg.Wait
	if a.WaitSeconds != nil {
		if *a.WaitSeconds < 0 || *a.WaitSeconds > int64(f.cfg.MaxTimeout/time.Second) {
			return family.Invalid(call, "wait_seconds must be between 0 and %d", int64(f.cfg.MaxTimeout/time.Second))
		}
		wait = time.Duration(*a.WaitSeconds) * time.Second
	}
	timeout := f.cfg.DefaultTimeout
	if a.Timeout > 0 {
		if a.Timeout > int64(f.cfg.MaxTimeout/time.Second) {
			return family.Invalid(call, "timeout %ds exceeds this gateway's maximum of %ds", a.Timeout, int64(f.cfg.MaxTimeout/time.Second))
		}
		timeout = time.Duration(a.Timeout) * time.Second
	}
	cmd := exec.Command{
		Shell:     a.Command,
		Argv:      a.Argv,
		Env:       a.Environment,
		Timeout:   timeout,
		Sudo:      a.UseSudo,
		MaxOutput: f.cfg.MaxOutput,
		// Prepared while the gateway writes the call's intent row, run
		// only once it is durable.
		Hold: func() error { return rigout.AwaitIntent(ctx) },
	}
	if a.Stdin != nil {
		cmd.Stdin = strings.NewReader(*a.Stdin)
	}
	check := gate.Command{Shell: a.Command, Argv: a.Argv, Env: a.Environment, Stdin: a.Stdin, Sudo: a.UseSudo, Bypass: a.BypassSecurity}
	if res := f.injectSecrets(ctx, call, a.Secrets, a.Environment, &cmd, &check.Env); res != nil {
		return res, nil
	}
	if p := f.newProgress(ctx, call); p != nil {
		cmd.OnOutput = func(_ exec.Stream, b []byte) { p.output(len(b)) }
		pctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); p.run(pctx) }()
		defer func() { stop(); <-done }()
	}
	if a.Hosts != nil {
		r, err := f.fanOut(ctx, call, cmd, check)
		if r != nil && a.WaitSeconds != nil && f.cfg.Processes != nil {
			addNote(r, "wait_seconds does not apply to a fan-out: every host ran to its end within the call")
		}
		return r, err
	}

	host := call.Hosts()[0]
	target, err := f.hosts.Resolve(ctx, host, call.Principal().Name)
	if err != nil {
		call.Outcome.Status = audit.StatusError
		return rigout.ErrorResult("%v", err), nil
	}
	call.Outcome.Route = target.Route
	dir, set := call.Path("working_directory")
	if target.Local && !set {
		if dir, err = f.localDir(""); err != nil {
			return family.Invalid(call, "working directory: %v", err)
		}
		// The default directory is a path the command touches too.
		if err := call.Principal().Scopes.RequirePath(dir); err != nil {
			call.Outcome.Status = audit.StatusDenied
			return nil, err
		}
	}
	cmd.Dir = dir
	check.Host, check.Dir, check.Local = host, dir, target.Local
	if check.Dialect, cmd.JudgedFor, err = dialect(ctx, target); err != nil {
		// The host could not be reached to learn its shell: the command
		// could not run there, as Run would have found.
		call.Outcome.Status = audit.StatusError
		call.Outcome.Error = "could not run: " + err.Error()
		return rigout.ErrorResult("could not run on %s: %v", host, err), nil
	}
	check.Readlink = hostReadlink(ctx, target)
	refusal, d := f.gateCheck(ctx, call, check)
	if refusal != nil {
		return refusal, nil
	}
	if target.Local && a.Command != "" && d.Allowed {
		// One simple command of literal words: exec.Local runs it without
		// bash when bash would run it the same way.
		cmd.Direct = d.Argv()
	}
	if st := f.starter(target); st != nil {
		if call.Task() {
			if a.Timeout == 0 {
				// A task's command ends by its own timeout only when the
				// caller set one; else tasks/cancel or the ceiling ends it.
				cmd.Timeout = 0
			}
			return f.runTask(ctx, call, host, check.String(), st, cmd)
		}
		return f.runHandOff(ctx, call, host, check.String(), st, cmd, wait)
	}
	res, err := target.Runner.Run(ctx, cmd)
	if err != nil {
		call.Outcome.Status = audit.StatusError
		call.Outcome.Error = "could not run: " + err.Error()
		return rigout.ErrorResult("could not run on %s: %v", host, err), nil
	}
	if res.Route == "" {
		res.Route = target.Route
	}
	return f.commandResult(call, host, check.String(), res), nil
}

// commandResult turns an exec.Result into the tool result: text for the
// model, structuredContent for programs, and the outcome for the ledger.
func (f *Family) commandResult(call *rigout.Call, host, command string, res exec.Result) *mcp.CallToolResult {
	o := &call.Outcome
	family.Ran(o, res.Route == "local", res)

	outParts, errParts := outputParts(res.Stdout), outputParts(res.Stderr)
	failed := res.ExitCode != 0 || res.TimedOut || res.Canceled
	var sb strings.Builder
	fmt.Fprintf(&sb, "$ %s\n", showCommand(command))
	fmt.Fprintf(&sb, "host: %s (via %s)\n", host, res.Route)
	if !res.Sandboxed && res.Unsandboxed != "" {
		fmt.Fprintf(&sb, "not sandboxed: %s\n", res.Unsandboxed)
	}
	d := res.Duration.Round(time.Millisecond)
	switch {
	case res.TimedOut:
		o.Status, o.Error = audit.StatusTimeout, fmt.Sprintf("timed out after %s", d)
		fmt.Fprintf(&sb, "timed out after %s: the process group was killed (%s)\n", d, res.Signal)
	case res.Canceled:
		o.Status, o.Error = audit.StatusCanceled, fmt.Sprintf("canceled after %s", d)
		fmt.Fprintf(&sb, "canceled after %s: the process group was killed (%s)\n", d, res.Signal)
	case res.Signal != "":
		o.Status, o.Error = audit.StatusError, "killed by "+res.Signal
		fmt.Fprintf(&sb, "killed by %s after %s\n", res.Signal, d)
	default:
		o.Status = audit.StatusOK
		if failed {
			o.Status, o.Error = audit.StatusError, fmt.Sprintf("exit code %d", res.ExitCode)
		}
		fmt.Fprintf(&sb, "exit code: %d (%s)\n", res.ExitCode, d)
	}
	if res.Orphans > 0 {
		fmt.Fprintf(&sb, "ended %d background process(es) the command left behind (no process outlives its call)\n", res.Orphans)
	}
	if len(outParts) == 0 && len(errParts) == 0 {
		sb.WriteString("(no output)\n")
	}
	text, stdout, stderr := joinStreams(sb.String(), outParts, errParts)

	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(text)},
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
			Sandboxed:     res.Sandboxed,
			Unsandboxed:   res.Unsandboxed,
			Orphans:       res.Orphans,
		},
		IsError: failed,
	}
}

// outputText renders one captured stream: cleaned, redacted, and with a
// marker where the cap dropped the middle.
func outputText(o exec.Output) string { return strings.Join(outputParts(o), "") }

// outputParts renders one captured stream as the pieces of outputText,
// none empty, so that a result can copy them once into its text: the
// whole stream, or its head, the marker and its tail (cleaned and redacted
// apart, so that an escape sequence cut by the cap cannot swallow the
// marker).
func outputParts(o exec.Output) []string {
	if o.Dropped == 0 {
		if s := textsafe.Text(o.Data); s != "" {
			return []string{s}
		}
		return nil
	}
	parts := []string{textsafe.Text(o.Data[:o.Head]),
		fmt.Sprintf("\n[… %d bytes dropped: output over the cap keeps its first %d and last %d bytes …]\n", o.Dropped, o.Head, len(o.Data)-o.Head),
		textsafe.Text(o.Data[o.Head:])}
	return slices.DeleteFunc(parts, func(p string) bool { return p == "" })
}

// joinStreams builds a command result's text in one allocation of its
// exact size: header, then each stream that has output, labelled, as
// writeStream writes them. It returns the text and the two streams' text
// as substrings of it, so that structuredContent shares the text's bytes
// instead of holding the output a second time.
func joinStreams(header string, outParts, errParts []string) (text, stdout, stderr string) {
	size := len(header)
	for _, s := range [][]string{outParts, errParts} {
		if len(s) > 0 {
			size += len("\nstdout:\n\n")
			for _, p := range s {
				size += len(p)
			}
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	sb.WriteString(header)
	var spans [2][2]int
	for i, s := range [][]string{outParts, errParts} {
		if len(s) == 0 {
			continue
		}
		sb.WriteString([]string{"\nstdout:\n", "\nstderr:\n"}[i])
		spans[i][0] = sb.Len()
		for _, p := range s {
			sb.WriteString(p)
		}
		spans[i][1] = sb.Len()
		if last := s[len(s)-1]; !strings.HasSuffix(last, "\n") {
			sb.WriteByte('\n')
		}
	}
	text = sb.String()
	return text, text[spans[0][0]:spans[0][1]], text[spans[1][0]:spans[1][1]]
}

// showCommand renders the command for a result: whole when short (every
// line of it), bounded when long, cleaned and redacted.
func showCommand(s string) string {
	return strings.ReplaceAll(textsafe.Block(s, 2000), "\n", "\n  ")
}

// writeStream appends one labelled output stream, if it has any text.
func writeStream(sb *strings.Builder, name, text string) {
	if text == "" {
		return
	}
	fmt.Fprintf(sb, "%s:\n%s", name, text)
	if !strings.HasSuffix(text, "\n") {
		sb.WriteByte('\n')
	}
}

// judged is what execute_command's Observes hook found: the command as the
// handler will check it and the policy's decision, made once.
type judged struct {
	check gate.Command
	d     validate.Decision
}

// observes is execute_command's Observes hook: a call on one host whose
// command the policy classifies read-only (validate.Decision.ReadOnly),
// with no environment, sudo or bypass, only observes. It judges the command
// as the handler will run it, in the same working directory, and keeps the
// decision in call.State so that the handler does not parse it again.
func (f *Family) observes(ctx context.Context, call *rigout.Call) bool {
	var a executeArgs
	if err := call.Bind(&a); err != nil {
		return false
	}
	if s, ok := a.Hosts.(string); a.Hosts != nil && (!ok || s != "") {
		return false // a fan-out is audited as a change
	}
	if (a.Command == "") == (len(a.Argv) == 0) || len(a.Environment) > 0 || a.UseSudo || a.BypassSecurity {
		return false
	}
	hosts := call.Hosts()
	if len(hosts) != 1 {
		return false
	}
	target, err := f.hosts.Resolve(ctx, hosts[0], call.Principal().Name)
	if err != nil {
		return false
	}
	dir, set := call.Path("working_directory")
	if target.Local && !set {
		if dir, err = f.localDir(""); err != nil {
			return false
		}
	}
	// Observes runs before the chain checks the token's hosts: it never
	// contacts a host, so an SSH host whose shell is not known yet is not
	// classified (the handler judges the command once it is), and the
	// host's links are not read here (the handler judges again with them).
	d, known := knownDialect(target)
	if !known {
		return false
	}
	check := gate.Command{Host: hosts[0], Shell: a.Command, Argv: a.Argv, Dir: dir, Stdin: a.Stdin, Local: target.Local, Dialect: d}
	j := &judged{check: check, d: f.cfg.Gate.Judge(check)}
	call.State = j
	return j.d.Allowed && j.d.ReadOnly
}

// gateCheck passes the command through the gate, reusing the Observes
// hook's decision when it judged this very command, and returns the
// gate's answer (nil when the command may run) with the policy's
// decision. A call classified read-only runs only the command that was
// classified.
func (f *Family) gateCheck(ctx context.Context, call *rigout.Call, check gate.Command) (*mcp.CallToolResult, validate.Decision) {
	j, ok := call.State.(*judged)
	if ok && sameCommand(j.check, check) {
		d := j.d
		if check.Readlink != nil && j.check.Readlink == nil {
			// Observes judged without the host's links, which it may not
			// read (it contacts no host): judge again with them.
			d = f.cfg.Gate.Judge(check)
			if d.Allowed && call.ReadOnly() && !d.ReadOnly {
				call.Outcome.Status = audit.StatusError
				call.Outcome.Error = "read-only classification does not match the command"
				return rigout.ErrorResult("the command classified read-only is not read-only once the host's links are read. Nothing ran."), validate.Decision{}
			}
		}
		return f.cfg.Gate.CheckJudged(ctx, call, check, d), d
	}
	if call.ReadOnly() && call.Risk() > rigout.ReadOnly {
		call.Outcome.Status = audit.StatusError
		call.Outcome.Error = "read-only classification does not match the command"
		return rigout.ErrorResult("internal error: the command classified read-only is not the one about to run. Nothing ran."), validate.Decision{}
	}
	d := f.cfg.Gate.Judge(check)
	return f.cfg.Gate.CheckJudged(ctx, call, check, d), d
}

// hostReadlink reads the symbolic links of an SSH target's host for the
// policy, through its rigout helper (nil elsewhere: see
// remote.SSH.PolicyReadlink).
func hostReadlink(ctx context.Context, target exec.Target) func(string) (string, error) {
	if s, ok := target.Runner.(exec.PolicyReadlinker); ok && !target.Local {
		return s.PolicyReadlink(ctx)
	}
	return nil
}

func sameCommand(a, b gate.Command) bool {
	return a.Host == b.Host && a.Shell == b.Shell && a.Dir == b.Dir && a.Sudo == b.Sudo && a.Local == b.Local && a.Dialect == b.Dialect &&
		a.Bypass == b.Bypass && len(a.Env) == 0 && len(b.Env) == 0 && slices.Equal(a.Argv, b.Argv) &&
		(a.Stdin == nil) == (b.Stdin == nil) && (a.Stdin == nil || *a.Stdin == *b.Stdin)
}
