// Package gate is the one command gate: every command any tool runs — a
// one-shot command, a background process, a terminal session's shell,
// docker, an installer, an embedder's own tool — passes through a [Gate]
// before it starts.
//
// # Overview
//
// [Gate.Check] decides, in order: the command policy (package validate)
// judges the environment the call adds and the command, against its
// resolved working directory; a refused
// command runs only when the caller set bypass and its token has the
// bypass scope, or when the person at the client approves it (a rule in
// confirm mode, or a bypass the token may not make by itself) through MCP
// elicitation ([rigout.Call.Confirm]); the decision, the rule and any
// bypass are recorded on the call's Outcome, so the audit ledger has them.
// A refusal is an error result that names the rule, what was found and
// what to do instead; nothing runs.
//
// The gate is a guard against accidents and obvious abuse, not a sandbox:
// what a program does once it runs is beyond any parser.
//
// # Usage
//
// A command-running tool holds a Gate and calls Check with the command it
// is about to run; a non-nil result is the call's answer:
//
//	if res := g.Check(ctx, call, gate.Command{Host: "local", Shell: line, Dir: dir}); res != nil {
//		return res, nil // refused, or a question for the person
//	}
//	// run it
package gate

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/validate"
)

// Config configures a Gate. The zero value is valid: the default policy.
type Config struct {
	// Policy decides which commands may run. It is copied. If nil, the
	// default policy (validate.Policy's zero value: every rule on).
	Policy *validate.Policy
	// Logger receives a warning for every bypass and confirmed command. If
	// nil, logs are discarded.
	Logger *slog.Logger
}

// Gate checks commands before tools run them. It is safe for concurrent
// use and holds no per-call state.
type Gate struct {
	policy *validate.Policy
	log    *slog.Logger
}

// New returns a gate for cfg. It refuses an invalid policy.
func New(cfg Config) (*Gate, error) {
	p := cfg.Policy.Clone()
	if p == nil {
		p = &validate.Policy{}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gate: policy: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Gate{policy: p, log: log}, nil
}

// Policy returns a copy of the gate's policy.
func (g *Gate) Policy() *validate.Policy { return g.policy.Clone() }

// Command is one command a tool is about to run.
type Command struct {
	// Host is where it runs, as the person asked to confirm it should read
	// it: "local", "web1", "3 hosts (web1, web2, web3)".
	Host string
	// Shell is a shell command line; or
	Shell string
	// Argv is an exact argument vector.
	Argv []string
	// Dir is the resolved working directory. When absolute, relative paths
	// in the command are judged against it.
	Dir string
	// Env are the environment variables the call adds. Those that change
	// what runs without the command showing it (BASH_ENV, LD_PRELOAD, a
	// PATH that puts other directories first, …) are judged too.
	Env map[string]string
	// Stdin is the standard input the call gives the command, if any: the
	// policy judges it as code when the command reads its program from
	// stdin (bash -s, python3 -, … | sh).
	Stdin *string
	// Local is set when the command runs on this machine: the paths it
	// deletes, writes or changes into are resolved through the symbolic
	// links that exist here (validate.Options.Readlink).
	Local bool
	// Sudo is set when the call asked for sudo.
	Sudo bool
	// Bypass is set when the caller asked to skip the policy
	// (bypass_security).
	Bypass bool
}

// String renders the command as the caller gave it: the shell line, or the
// argv quoted for a POSIX shell.
func (c Command) String() string {
	if c.Shell != "" || len(c.Argv) == 0 {
		return c.Shell
	}
	parts := make([]string, len(c.Argv))
	for i, s := range c.Argv {
		q, err := syntax.Quote(s, syntax.LangBash)
		if err != nil {
			q = fmt.Sprintf("%q", s)
		}
		parts[i] = q
	}
	return strings.Join(parts, " ")
}

// Judge returns the policy's decision on cmd, without asking anyone or
// recording anything: what `rigout check` prints.
func (g *Gate) Judge(cmd Command) validate.Decision {
	if len(cmd.Env) > 0 {
		if d := g.policy.CheckEnv(cmd.Env); !d.Allowed {
			return d
		}
	}
	opts := validate.Options{AllowSudo: cmd.Sudo, Stdin: cmd.Stdin}
	if cmd.Local {
		opts.Readlink = os.Readlink
	}
	if path.IsAbs(cmd.Dir) {
		opts.Dir = cmd.Dir
	}
	if cmd.Shell != "" {
		return g.policy.Check(cmd.Shell, opts)
	}
	return g.policy.CheckArgv(cmd.Argv, opts)
}

// maxShown bounds the command text in refusals and questions.
const maxShown = 2000

// Check decides whether cmd may run for call. It returns nil when it may;
// otherwise the result to return as the call's answer: a refusal naming
// the rule, or (while a person is being asked) the question. Either way
// the decision is recorded on call.Outcome.
func (g *Gate) Check(ctx context.Context, call *rigout.Call, cmd Command) *mcp.CallToolResult {
	return g.CheckJudged(ctx, call, cmd, g.Judge(cmd))
}

// CheckJudged is Check with the policy's decision on cmd already made by
// [Gate.Judge] (by a tool's Observes hook, say), so that the command is
// parsed once. d must be Judge(cmd)'s for this gate.
func (g *Gate) CheckJudged(ctx context.Context, call *rigout.Call, cmd Command, d validate.Decision) *mcp.CallToolResult {
	o := &call.Outcome
	if d.Allowed {
		o.Decision = audit.DecisionAllow
		return nil
	}
	o.Rule = d.Rule
	o.Decision = audit.DecisionDeny
	if d.Confirm {
		o.Decision = audit.DecisionConfirm
	}
	p := call.Principal()
	bypassErr := p.Scopes.RequireBypass()
	if cmd.Bypass && bypassErr == nil {
		o.Bypassed = true
		o.Decision = audit.DecisionBypass
		g.log.LogAttrs(ctx, slog.LevelWarn, "command policy bypassed",
			slog.String("call", call.ID), slog.String("rule", d.Rule), slog.String("principal", p.Name))
		return nil
	}
	// A rule in confirm mode, or a bypass the token may not make by itself,
	// is put to the person behind the client when the client can ask.
	if d.Confirm || cmd.Bypass {
		state, res := call.Confirm(ctx, question(cmd, d))
		switch state {
		case rigout.Asking:
			o.Status = audit.StatusAwaitingConfirmation
			return res
		case rigout.Approved:
			o.Decision = audit.DecisionConfirmed
			o.Bypassed = !d.Confirm // the person overrode a deny rule
			g.log.LogAttrs(ctx, slog.LevelWarn, "held-back command confirmed by a person",
				slog.String("call", call.ID), slog.String("rule", d.Rule), slog.String("principal", p.Name))
			return nil
		case rigout.Declined:
			o.Status = audit.StatusDenied
			o.Decision = audit.DecisionDeclined
			return rigout.ErrorResult("refused by policy rule %s: %s\nA person was asked and did not approve it. Nothing ran.", d.Rule, d.Reason)
		}
	}
	o.Status = audit.StatusDenied
	var sb strings.Builder
	fmt.Fprintf(&sb, "refused by policy rule %s: %s", d.Rule, d.Reason)
	if d.Hint != "" {
		fmt.Fprintf(&sb, "\nInstead: %s", d.Hint)
	}
	switch {
	case cmd.Bypass:
		fmt.Fprintf(&sb, "\nbypass_security was set, but %v, and this client cannot ask a person to approve it.", bypassErr)
	case d.Confirm:
		sb.WriteString("\nThis rule asks for a person's confirmation, and this client cannot ask (it declared no elicitation capability).")
	}
	sb.WriteString("\nNothing ran.")
	return rigout.ErrorResult("%s", sb.String())
}

// question is what the person is asked about a held-back command: the
// whole command (bounded), where, and why it was held back.
func question(cmd Command, d validate.Decision) string {
	host := cmd.Host
	if host == "" {
		host = "local"
	}
	text := rigout.SafeBlock(cmd.String(), maxShown)
	lines := strings.Count(text, "\n") + 1
	shown := "  " + strings.ReplaceAll(text, "\n", "\n  ")
	what := "this command"
	if lines > 1 {
		what = fmt.Sprintf("this %d-line command", lines)
	}
	dir := ""
	if cmd.Dir != "" {
		dir = " in " + cmd.Dir
	}
	return fmt.Sprintf("An agent asks to run %s on %s%s:\n\n%s\n\nrigout's policy holds it back (rule %s): %s\n\nRun it anyway?",
		what, host, dir, shown, d.Rule, d.Reason)
}
