// Package terminal is the tool family of persistent terminal sessions:
// create_terminal_session, execute_in_terminal, list_terminal_sessions and
// close_terminal_session (Rigout's names), on the terminal sessions of a
// sessions.Manager — a long-lived bash on a pseudo-terminal, on this
// machine or on an SSH host.
//
// # Overview
//
// Each session belongs to the principal that created it; another
// principal's session ID is "no such session", for every tool. A
// command sent with execute_in_terminal passes the same command gate as
// execute_command (policy, bypass scope, confirmation by a person) before
// a byte of it reaches the shell, judged against the session's current
// working directory. The session keeps its working directory, variables
// and functions from one command to the next; the result gives the exit
// code and the working directory after the command. A command still
// running at the call's timeout keeps running: the result says so and
// shows its output so far, and the next execute_in_terminal on the
// session first waits for it (within its own timeout; an empty command
// only waits), or stops it with interrupt (Ctrl-C to the terminal's
// foreground process group). With send_keys, the command text is typed
// into the terminal as it is, for a program waiting for input: that
// cannot be judged by the policy, so it needs the terminals capability
// (auth.Scopes.Terminals), as process write does. Output is cleaned —
// escape sequences removed, carriage-return overwrites and backspaces
// applied — redacted, and capped (head and tail kept).
//
// With Config.Credentials, create_terminal_session takes `secrets`
// ({"ENV_NAME": "alias"}, each alias allowing the host and the tool):
// the session's shell has the values in its environment (see
// sessions.TerminalOptions.Secrets for how they reach an SSH shell) and
// its output is masked of them for its whole life.
//
// # Usage
//
//	tf, err := terminal.New(terminal.Config{Manager: m, Hosts: router, Gate: g})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: tf.Tools()})
package terminal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/internal/family"
	"github.com/rigout/rigout/tools/internal/secretarg"
)

// Defaults used when the corresponding Config field is zero.
const (
	DefaultTimeout    = 30 * time.Second
	DefaultMaxTimeout = 10 * time.Minute
	DefaultMaxOutput  = 64 << 10
)

// Config configures the family.
type Config struct {
	// Manager keeps the sessions (caps, idle expiry, Close). Required;
	// the caller closes it.
	Manager *sessions.Manager
	// Hosts, if set, resolves the host argument: a remote host whose
	// runner starts terminals (exec.PTYStarter; the SSH package's Router
	// leads to SSH hosts) carries sessions too. If nil, sessions are
	// local only.
	Hosts exec.Hosts
	// Gate checks every command before it is written to a shell. If nil,
	// a gate with the default policy.
	Gate *gate.Gate
	// WorkDir is where local sessions start. If empty, the process's
	// working directory.
	WorkDir string
	// DefaultTimeout is how long execute_in_terminal waits when the call
	// sets no timeout. If zero, DefaultTimeout.
	DefaultTimeout time.Duration
	// MaxTimeout caps the timeout a call may ask for. If zero,
	// DefaultMaxTimeout.
	MaxTimeout time.Duration
	// MaxOutput caps the output one result shows, in bytes (head and
	// tail kept). If zero, DefaultMaxOutput.
	MaxOutput int
	// Credentials, if set, lets create_terminal_session take `secrets`
	// ({"ENV_NAME": "alias"}): each alias must allow the host and the
	// tool create_terminal_session. The session's shell has the values in
	// its environment (see sessions.TerminalOptions.Secrets) and every
	// output of the session is masked of them for its whole life. If nil,
	// the argument is not offered.
	Credentials *credentials.Store
}

// Family is the terminal tool family. It is safe for concurrent use.
type Family struct {
	cfg  Config
	defs definitions
}

// New builds the family from cfg, which is copied.
func New(cfg Config) (*Family, error) {
	c := cfg
	if c.Manager == nil {
		return nil, errors.New("terminal: Config.Manager is required")
	}
	g, err := family.Gate(c.Gate)
	if err != nil {
		return nil, err
	}
	c.Gate = g
	if c.WorkDir, err = family.WorkDir("terminal", c.WorkDir); err != nil {
		return nil, err
	}
	if err := family.Timeouts("terminal", &c.DefaultTimeout, &c.MaxTimeout, DefaultTimeout, DefaultMaxTimeout); err != nil {
		return nil, err
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	return &Family{cfg: c}, nil
}

// Tools returns the family's tools, in the order tools/list shows them.
func (f *Family) Tools() []rigout.Tool {
	return []rigout.Tool{f.create(), f.execute(), f.list(), f.closeTool()}
}

// Instructions is the family's part of the initialize instructions.
func (f *Family) Instructions() string {
	return "For a shell that keeps its directory and variables, create_terminal_session, then execute_in_terminal."
}

var createInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "session_name": {"type": "string", "minLength": 1, "maxLength": 64, "description": "Optional label, 1-64 chars, unique."},
    "host": {"type": "string", "description": "local (default), an SSH alias, user@host, or auto."}
  },
  "additionalProperties": false
}`)

var executeInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "session_id": {"type": "string"},
    "command": {"type": "string", "description": "Command line for the session's bash. Empty: wait for the running one."},
    "timeout": {"type": "integer", "minimum": 1, "description": "Seconds to wait (30); the command runs on after."},
    "interrupt": {"type": "boolean", "description": "Send Ctrl-C first."},
    "send_keys": {"type": "boolean", "description": "Type command as-is into the running program (no policy check)."},
    "use_sudo": {"type": "boolean", "description": "Run through sudo -n."},
    "bypass_security": {"type": "boolean", "description": "Skip the command policy; only for tokens allowed to."}
  },
  "required": ["session_id"],
  "additionalProperties": false
}`)

var sessionIDInput = json.RawMessage(`{
  "type": "object",
  "properties": {"session_id": {"type": "string"}},
  "required": ["session_id"],
  "additionalProperties": false
}`)

func (f *Family) create() rigout.Tool {
	input := createInput
	if f.cfg.Credentials != nil {
		input = json.RawMessage(strings.Replace(string(input), `"host"`, secretarg.Property+`"host"`, 1))
	}
	return rigout.Tool{
		Name:        "create_terminal_session",
		Description: "Open a persistent bash session (local or SSH); cwd and variables persist between commands.",
		InputSchema: input,
		Risk:        rigout.Exec,
		Hosts:       []rigout.HostArg{{Name: "host"}},
		DefaultHost: "local",
		Needs:       []rigout.Need{{Capability: rigout.Terminals}},
		Handler:     f.createSession,
	}
}

func (f *Family) execute() rigout.Tool {
	return rigout.Tool{
		Name:        "execute_in_terminal",
		Description: "Run a command in a terminal session; returns output, exit code and cwd.",
		InputSchema: executeInput,
		Risk:        rigout.Exec,
		Needs:       []rigout.Need{{Capability: rigout.Terminals, When: "send_keys"}},
		Handler:     f.executeIn,
	}
}

func (f *Family) list() rigout.Tool {
	return rigout.Tool{
		Name:        "list_terminal_sessions",
		Description: "List your terminal sessions.",
		Risk:        rigout.ReadOnly,
		Handler:     f.listSessions,
	}
}

func (f *Family) closeTool() rigout.Tool {
	return rigout.Tool{
		Name:        "close_terminal_session",
		Description: "Close a terminal session, ending everything running in it.",
		InputSchema: sessionIDInput,
		Risk:        rigout.Exec,
		Handler:     f.closeSession,
	}
}

func failed(call *rigout.Call, format string, args ...any) (*mcp.CallToolResult, error) {
	r := rigout.ErrorResult(format, args...)
	call.Outcome.Status = audit.StatusError
	call.Outcome.Error = r.Content[0].(mcp.TextContent).Text
	return r, nil
}

// noSuchSession is the answer for an unknown ID and for another
// principal's alike; for an ID made by another gateway it names that
// gateway.
func noSuchSession(call *rigout.Call, id string, err error) (*mcp.CallToolResult, error) {
	if ee, ok := errors.AsType[*sessions.ElsewhereError](err); ok {
		return family.Invalid(call, "terminal session %s belongs to gateway %s; this is gateway %s — route by Mcp-Session-Id (sticky sessions) to reach it",
			textsafe.Text([]byte(id)), textsafe.Text([]byte(ee.Owner)), textsafe.Text([]byte(ee.HereName())))
	}
	return family.Invalid(call, "no such session %s: list_terminal_sessions shows yours", textsafe.Text([]byte(id)))
}

type createArgs struct {
	Name    string            `json:"session_name"`
	Secrets map[string]string `json:"secrets"`
}

func (f *Family) createSession(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a createArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	host := call.Hosts()[0]
	p := call.Principal()
	o := sessions.TerminalOptions{Name: a.Name, Host: host}
	if len(a.Secrets) > 0 {
		r, res := secretarg.Resolve(ctx, call, f.cfg.Credentials, a.Secrets, nil)
		if r == nil {
			return res, nil
		}
		o.Secrets = r.Use.Env()
	}
	route := "local"
	if f.cfg.Hosts != nil {
		t, err := f.cfg.Hosts.Resolve(ctx, host, p.Name)
		if err != nil {
			return failed(call, "%v", err)
		}
		route = t.Route
		if !t.Local {
			pty, ok := t.Runner.(exec.PTYStarter)
			if !ok {
				return failed(call, "host %s cannot carry a terminal session", host)
			}
			o.SSH = pty
		}
	} else if !family.IsLocalName(host) {
		return failed(call, "unknown host %q: this gateway opens terminal sessions only on this machine (host \"local\"); SSH hosts are not configured", host)
	}
	call.Outcome.Route = route
	if o.SSH == nil {
		o.Dir = f.cfg.WorkDir
		if err := p.Scopes.RequirePath(o.Dir); err != nil {
			call.Outcome.Status = audit.StatusDenied
			return nil, err
		}
	}
	t, err := f.cfg.Manager.OpenTerminal(ctx, p.Name, o)
	if err != nil {
		var taken *sessions.NameTakenError
		var limit *sessions.LimitError
		switch {
		case errors.As(err, &taken):
			return family.Invalid(call, "a terminal session named %q is already open: %s. Use it, close it first, or pick another session_name.",
				textsafe.Text([]byte(taken.Name)), taken.ID)
		case errors.As(err, &limit):
			call.Outcome.Status = audit.StatusBusy
			return rigout.ErrorResult("%v", err), nil
		}
		return failed(call, "could not open a terminal session on %s: %v", host, err)
	}
	in := t.Info()
	call.Outcome.Route = in.Route
	if !in.Sandboxed {
		call.Outcome.Unsandboxed = in.Unsandboxed
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "session_id: %s\nhost: %s (via %s)\ncwd: %s\n", in.ID, host, in.Route, in.Cwd)
	if in.Name != "" {
		fmt.Fprintf(&sb, "session_name: %s\n", textsafe.Text([]byte(in.Name)))
	}
	if !in.Sandboxed && in.Unsandboxed != "" {
		fmt.Fprintf(&sb, "not sandboxed: %s\n", in.Unsandboxed)
	}
	next := rigout.NextCall{Tool: "execute_in_terminal", Why: "runs a command in the session; cwd and variables persist",
		Arguments: map[string]any{"session_id": in.ID, "command": "…"}}
	sb.WriteString(next.Line())
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(sb.String())},
		StructuredContent: opened{TerminalInfo: in, Next: next}}, nil
}

type executeArgs struct {
	SessionID      string `json:"session_id"`
	Command        string `json:"command"`
	Timeout        int64  `json:"timeout"`
	Interrupt      bool   `json:"interrupt"`
	SendKeys       bool   `json:"send_keys"`
	UseSudo        bool   `json:"use_sudo"`
	BypassSecurity bool   `json:"bypass_security"`
}

// ExecResult is execute_in_terminal's structuredContent.
// opened is create_terminal_session's structuredContent: the session and
// the call that uses it.
type opened struct {
	sessions.TerminalInfo
	Next rigout.NextCall `json:"next"`
}

type ExecResult struct {
	SessionID  string      `json:"session_id"`
	Command    string      `json:"command,omitempty"`
	Sent       bool        `json:"sent"`
	Done       bool        `json:"done"`
	Running    bool        `json:"running"`
	ExitCode   *int        `json:"exit_code,omitempty"`
	Signal     string      `json:"signal,omitempty"`
	Cwd        string      `json:"cwd,omitempty"`
	DurationMS int64       `json:"duration_ms"`
	Output     string      `json:"output"`
	Dropped    int64       `json:"dropped,omitempty"`
	Previous   *ExecResult `json:"previous,omitempty"`
	Ended      bool        `json:"ended,omitempty"`
	Note       string      `json:"note,omitempty"`
	// Next is the call that waits for a command still running.
	Next *rigout.NextCall `json:"next,omitempty"`
}

func (f *Family) executeIn(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a executeArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	p := call.Principal()
	t, err := f.cfg.Manager.Terminal(p.Name, a.SessionID)
	if err != nil {
		return noSuchSession(call, a.SessionID, err)
	}
	if v := t.Secrets(); len(v) > 0 {
		// The session's output is masked already; its values are masked
		// in this call's result and ledger row too.
		if err := call.MaskSecrets(v...); err != nil {
			return failed(call, "session %s: %v", t.ID(), err)
		}
	}
	in := t.Info()
	call.Outcome.Route = in.Route
	timeout := f.cfg.DefaultTimeout
	if a.Timeout > 0 {
		if a.Timeout > int64(f.cfg.MaxTimeout/time.Second) {
			return family.Invalid(call, "timeout %ds exceeds this gateway's maximum of %ds", a.Timeout, int64(f.cfg.MaxTimeout/time.Second))
		}
		timeout = time.Duration(a.Timeout) * time.Second
	}
	req := sessions.ExecRequest{Timeout: timeout, Interrupt: a.Interrupt}
	switch {
	case a.SendKeys && (a.UseSudo || a.BypassSecurity):
		return family.Invalid(call, "send_keys types text into the running program: use_sudo and bypass_security do not apply")
	case a.SendKeys:
		// The chain has checked the terminals capability.
		req.Keys = []byte(a.Command)
	case a.Command != "":
		if a.UseSudo && in.Sandboxed {
			return family.Invalid(call, "use_sudo cannot work in this session: it runs in the kernel sandbox, whose no_new_privs stops sudo. Use execute_command with use_sudo.")
		}
		if in.Route == "local" {
			if err := p.Scopes.RequirePath(in.Cwd); err != nil {
				call.Outcome.Status = audit.StatusDenied
				return nil, err
			}
		}
		check := gate.Command{Host: in.Host, Shell: a.Command, Dir: in.Cwd, Sudo: a.UseSudo, Bypass: a.BypassSecurity, Local: in.Route == "local"}
		d := f.cfg.Gate.Judge(check)
		defs := definitionsOf(a.Command)
		if prior := f.defs.get(p.Name, t.ID()); d.Allowed && prior != "" {
			// Judged after what earlier commands of the session defined.
			with := check
			with.Shell = prior + a.Command
			if dw := f.cfg.Gate.Judge(with); !dw.Allowed {
				d = dw
				d.Reason += " (after the aliases, functions, traps and variables that earlier commands of this session defined)"
			}
		}
		if d.Allowed && !f.defs.fits(p.Name, t.ID(), defs) {
			call.Outcome.Status = audit.StatusDenied
			return rigout.ErrorResult("session %s holds more definitions (aliases, functions, traps, variables) than the policy tracks: open a new session. Nothing ran.", t.ID()), nil
		}
		if res := f.cfg.Gate.CheckJudged(ctx, call, check, d); res != nil {
			return res, nil
		}
		if call.Outcome.Decision == audit.DecisionAllow {
			// Definitions made by a bypassed or confirmed command are not
			// kept: they would hold back every later command.
			f.defs.add(f.cfg.Manager, p.Name, t.ID(), defs)
		}
		req.Command = a.Command
		if a.UseSudo {
			q, err := syntax.Quote(a.Command, syntax.LangBash)
			if err != nil {
				return family.Invalid(call, "cannot run this command through sudo: %v", err)
			}
			req.Command = "sudo -n -- bash -c " + q
		}
	case a.UseSudo || a.BypassSecurity:
		return family.Invalid(call, "use_sudo and bypass_security apply to a command: give `command`")
	}
	r, err := t.Exec(ctx, req)
	switch {
	case errors.Is(err, sessions.ErrTerminalEnded):
		return failed(call, "session %s has ended (%s): create a new one", t.ID(), t.Info().Ended)
	case errors.Is(err, sessions.ErrNothingRunning):
		return family.Invalid(call, "send_keys types into a running program, and no command is running in session %s: send the text as a command", t.ID())
	case errors.Is(err, sessions.ErrTerminalBusy):
		call.Outcome.Status = audit.StatusBusy
		return rigout.ErrorResult("session %s is busy with another call for all of %v: try again, or use another session", t.ID(), timeout), nil
	case err != nil:
		return failed(call, "session %s: %v", t.ID(), err)
	}
	if a.UseSudo && r.Command == req.Command {
		r.Command = a.Command
	}
	return f.execResult(call, t.ID(), a, r), nil
}

// execResult renders what Exec returned.
func (f *Family) execResult(call *rigout.Call, id string, a executeArgs, r sessions.ExecResult) *mcp.CallToolResult {
	o := &call.Outcome
	sc := f.structured(id, r)
	var sb strings.Builder
	if r.Previous != nil {
		prev := sc.Previous
		fmt.Fprintf(&sb, "the previous command finished first: %s\n", status(*prev))
		writeOutput(&sb, prev.Output)
		sb.WriteByte('\n')
	}
	if a.Command != "" && !a.SendKeys {
		fmt.Fprintf(&sb, "$ %s\n", strings.ReplaceAll(textsafe.Block(a.Command, 2000), "\n", "\n  "))
	}
	fmt.Fprintf(&sb, "session %s (%s)", id, call.Outcome.Route)
	if r.Cwd != "" {
		fmt.Fprintf(&sb, " cwd: %s", textsafe.Text([]byte(r.Cwd)))
	}
	sb.WriteByte('\n')
	wait := rigout.NextCall{Tool: "execute_in_terminal", Why: `waits for it; "interrupt": true stops it (Ctrl-C)`,
		Arguments: map[string]any{"session_id": id, "command": ""}}
	next := "next: " + wait.String()
	switch {
	case r.Ended:
		o.Status, o.Error = audit.StatusError, "the session's shell exited"
		sc.Note = "the session's shell exited; the session is closed"
		fmt.Fprintf(&sb, "%s\n", sc.Note)
	case r.Done:
		exit := r.ExitCode
		o.ExitCode, o.Signal = &exit, r.Signal
		o.Status = audit.StatusOK
		if exit != 0 {
			o.Status, o.Error = audit.StatusError, fmt.Sprintf("exit code %d", exit)
		}
		fmt.Fprintf(&sb, "%s\n", status(sc))
	case r.Running && !r.Sent && a.Command != "" && !a.SendKeys:
		o.Status, o.Error = audit.StatusBusy, "the previous command is still running"
		sc.Note = fmt.Sprintf("not sent: the previous command (%s) is still running after %s. %s",
			textsafe.FirstLine(textsafe.Text([]byte(r.Command)), 80), r.Duration.Round(time.Second), next)
		sc.Next = &wait
		fmt.Fprintf(&sb, "%s\nits output since the last call:\n", sc.Note)
	case r.Running:
		o.Status, o.Error = audit.StatusBackground, "still running in terminal session "+id
		sc.Note = fmt.Sprintf("still running after %s: the command may still be running in the session. %s", r.Duration.Round(time.Second), next)
		sc.Next = &wait
		fmt.Fprintf(&sb, "%s\n", sc.Note)
	default:
		sb.WriteString("no command running\n")
	}
	writeOutput(&sb, sc.Output)
	if r.Dropped > 0 {
		fmt.Fprintf(&sb, "[%d earlier bytes were dropped: the session keeps at most its buffer of unread output]\n", r.Dropped)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(sb.String())},
		StructuredContent: sc,
		IsError:           r.Ended || (r.Done && r.ExitCode != 0) || (r.Running && !r.Sent && a.Command != "" && !a.SendKeys),
	}
}

func (f *Family) structured(id string, r sessions.ExecResult) ExecResult {
	sc := ExecResult{
		SessionID: id, Command: textsafe.Block(r.Command, 2000), Sent: r.Sent, Done: r.Done, Running: r.Running,
		Signal: r.Signal, Cwd: textsafe.Text([]byte(r.Cwd)), DurationMS: r.Duration.Milliseconds(),
		Output: f.output(r.Output), Dropped: r.Dropped, Ended: r.Ended,
	}
	if r.Done {
		exit := r.ExitCode
		sc.ExitCode = &exit
	}
	if r.Previous != nil {
		prev := f.structured(id, *r.Previous)
		sc.Previous = &prev
	}
	return sc
}

// status renders a finished command's end.
func status(r ExecResult) string {
	d := time.Duration(r.DurationMS) * time.Millisecond
	if r.ExitCode == nil {
		return "still running"
	}
	if r.Signal != "" {
		return fmt.Sprintf("exit code: %d (%s, killed by %s)", *r.ExitCode, d, r.Signal)
	}
	return fmt.Sprintf("exit code: %d (%s)", *r.ExitCode, d)
}

func writeOutput(sb *strings.Builder, text string) {
	if strings.TrimSpace(text) == "" {
		sb.WriteString("(no output)\n")
		return
	}
	sb.WriteString("output:\n" + text)
	if !strings.HasSuffix(text, "\n") {
		sb.WriteByte('\n')
	}
}

// output renders terminal output for the model: the screen's effect of
// carriage returns and backspaces applied, escape sequences removed,
// secrets masked, and capped to MaxOutput (its first quarter and last
// three quarters kept).
func (f *Family) output(b []byte) string {
	s := textsafe.Text(Screen(b))
	if max := f.cfg.MaxOutput; len(s) > max {
		head, tail := max/4, max-max/4
		s = fmt.Sprintf("%s\n[… %d bytes dropped …]\n%s", s[:head], len(s)-head-tail, s[len(s)-tail:])
	}
	return s
}

func (f *Family) listSessions(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	infos := f.cfg.Manager.Terminals(call.Principal().Name)
	var sb strings.Builder
	if len(infos) == 0 {
		sb.WriteString("no terminal sessions\n")
	}
	for i := range infos {
		in := &infos[i]
		in.Command = textsafe.Block(in.Command, 200)
		in.Name = textsafe.Text([]byte(in.Name))
		state := "idle"
		if in.Running {
			state = "running: " + textsafe.FirstLine(in.Command, 60)
		}
		name := ""
		if in.Name != "" {
			name = " " + in.Name
		}
		fmt.Fprintf(&sb, "%s%s on %s (via %s), cwd %s, %d commands, %s\n", in.ID, name, in.Host, in.Route, in.Cwd, in.Commands, state)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(sb.String())},
		StructuredContent: map[string]any{"sessions": infos},
	}, nil
}

type idArgs struct {
	SessionID string `json:"session_id"`
}

func (f *Family) closeSession(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a idArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	in, err := f.cfg.Manager.CloseTerminal(call.Principal().Name, a.SessionID)
	if err != nil {
		return noSuchSession(call, a.SessionID, err)
	}
	f.defs.forget(call.Principal().Name, in.ID)
	call.Outcome.Route = in.Route
	text := fmt.Sprintf("session %s closed after %d commands: its shell and everything running in it ended\n", in.ID, in.Commands)
	if in.Route != "local" {
		text = fmt.Sprintf("session %s closed after %d commands: the remote terminal was hung up (a remote process that ignores SIGHUP may survive)\n", in.ID, in.Commands)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: in}, nil
}
