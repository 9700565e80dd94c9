// Package gate is the one command gate: every command any tool runs — a
// one-shot command, a background process, a terminal session's shell,
// docker, an installer, an embedder's own tool — passes through a [Gate]
// before it starts.
//
// # Overview
//
// [Gate.Check] decides, in order: the command policy (package validate)
// judges the environment the call adds and the command, against its
// resolved working directory; a refused command runs only when
//   - the caller set bypass and its token has the bypass scope; or
//   - a rule in confirm mode holds it back, the operator declared the
//     token's client a person's own interactive client
//     (auth.Scopes.InteractiveClient), and that person approves it through
//     MCP elicitation, answering a question this gateway asked in this
//     very call ([rigout.Call.Confirm]); or
//   - an operator approves it out of band, with a token of their own that
//     holds the approve scope ([rigout.Call.AwaitApproval]): a rule in
//     confirm mode, or a bypass from a token with the ask_bypass scope.
//
// A bypass is never put to the client. A call that carries an approval
// the gateway did not ask for in this call is refused. The decision, the
// rule, any bypass and the approver are recorded on the call's Outcome, so
// the audit ledger has them.
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
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/textsafe"
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
	// Dialect is the language of Shell: the shell of the host it runs on.
	// The zero value is POSIX; a Windows host's cmd.exe or PowerShell
	// makes the policy judge the command with its Windows rules (and
	// Dir as a Windows path) instead (validate.Options.Dialect).
	Dialect validate.Dialect
	// Local is set when the command runs on this machine: the paths it
	// deletes, writes or changes into are resolved through the symbolic
	// links that exist here (validate.Options.Readlink).
	Local bool
	// Readlink, when set and Local is not, reads the symbolic links of the
	// remote host the command runs on (remote.SSH.PolicyReadlink: through
	// its rigout helper), so that the paths it deletes, writes or changes
	// into are resolved there as Local resolves them here.
	Readlink func(name string) (string, error)
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
	opts := validate.Options{AllowSudo: cmd.Sudo, Stdin: cmd.Stdin, Dialect: cmd.Dialect}
	if cmd.Local {
		opts.Readlink = os.Readlink
	} else if cmd.Readlink != nil {
		opts.Readlink = cmd.Readlink
	}
	if path.IsAbs(cmd.Dir) || cmd.Dialect != validate.DialectPOSIX {
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
	if !d.Confirm && !cmd.Bypass {
		if call.CarriesAnswer() {
			return g.unsolicited(ctx, call, d)
		}
		return g.refuse(call, d, "")
	}
	// A rule in confirm mode is put to the person behind the client only
	// when the operator declared the token's client a person's own
	// interactive client, and only through a question this gateway asked
	// in this call. A bypass is never put to the client.
	if d.Confirm && !cmd.Bypass {
		state, res := call.Confirm(ctx, question(cmd, d))
		switch state {
		case rigout.Asking:
			o.Status = audit.StatusAwaitingConfirmation
			return res
		case rigout.Approved:
			o.Decision = audit.DecisionConfirmed
			g.log.LogAttrs(ctx, slog.LevelWarn, "held-back command confirmed by a person",
				slog.String("call", call.ID), slog.String("rule", d.Rule), slog.String("principal", p.Name))
			return nil
		case rigout.Declined:
			o.Status = audit.StatusDenied
			o.Decision = audit.DecisionDeclined
			return rigout.RefusalResult(rigout.Refusal{Kind: rigout.RefusedApproval, Rule: d.Rule, Why: d.Reason + " A person was asked and did not approve it.", Instead: d.Hint},
				fmt.Sprintf("refused by policy rule %s: %s\nA person was asked and did not approve it. Nothing ran.", d.Rule, d.Reason))
		case rigout.Unsolicited:
			return g.unsolicited(ctx, call, d)
		}
	} else if call.CarriesAnswer() {
		return g.unsolicited(ctx, call, d)
	}
	// Out of band: the operator decides.
	if cmd.Bypass && !p.Scopes.AskBypass {
		return g.refuse(call, d, fmt.Sprintf("bypass_security was set, but %v, and it may not ask an operator to approve a bypass (no ask_bypass scope).", bypassErr))
	}
	a, err := call.AwaitApproval(ctx, rigout.ApprovalRequest{
		Host: hostOf(cmd), Command: cmd.String(), Dir: cmd.Dir, Rule: d.Rule, Reason: d.Reason, Bypass: cmd.Bypass,
	})
	var aerr *rigout.ApprovalError
	switch {
	case err == nil:
		o.Decision = audit.DecisionConfirmed
		o.Bypassed = !d.Confirm // an operator overrode a deny rule
		g.log.LogAttrs(ctx, slog.LevelWarn, "held-back command approved by an operator",
			slog.String("call", call.ID), slog.String("rule", d.Rule), slog.String("principal", p.Name),
			slog.String("approver", a.Approver), slog.String("approval", a.ID))
		return nil
	case errors.Is(err, rigout.ErrNoApprovals):
		if cmd.Bypass {
			return g.refuse(call, d, fmt.Sprintf("bypass_security was set, but %v, and this gateway has no operator approval queue to ask (it has one when a token holds the approve scope).", bypassErr))
		}
		return g.refuse(call, d, "This rule asks for a person's confirmation, and no one can be asked: "+
			"this gateway has no operator approval queue (it has one when a token holds the approve scope), and this token's client is not one the operator declared a person's own interactive client, "+
			"or it cannot be asked (it declared no elicitation capability, or it uses protocol 2025-11-25 with a --stateless gateway, which keeps no capabilities).")
	case errors.As(err, &aerr) && aerr.Outcome == rigout.ApprovalDenied:
		o.Status = audit.StatusDenied
		o.Decision = audit.DecisionDeclined
		denied := fmt.Sprintf("Operator %s denied it (approval %s).", aerr.Approver, aerr.ID)
		return rigout.RefusalResult(rigout.Refusal{Kind: rigout.RefusedApproval, Rule: d.Rule, Why: d.Reason + " " + denied, Instead: d.Hint},
			fmt.Sprintf("refused by policy rule %s: %s\n%s Nothing ran.", d.Rule, d.Reason, denied))
	case errors.As(err, &aerr) && aerr.Outcome == rigout.ApprovalExpired:
		return g.refuse(call, d, fmt.Sprintf("It waited for an operator's approval (approval %s) and no operator decided within %s; do not retry at once: ask the operator to run `rigout approvals`.", aerr.ID, aerr.Wait))
	}
	return g.refuse(call, d, fmt.Sprintf("It was not approved: %v.", err))
}

// refuse records a refusal by the policy and returns its result: the rule,
// what was found, the hint, then why no one approved it (why, if any).
func (g *Gate) refuse(call *rigout.Call, d validate.Decision, why string) *mcp.CallToolResult {
	call.Outcome.Status = audit.StatusDenied
	var sb strings.Builder
	fmt.Fprintf(&sb, "refused by policy rule %s: %s", d.Rule, d.Reason)
	if d.Hint != "" {
		fmt.Fprintf(&sb, "\nInstead: %s", d.Hint)
	}
	if why != "" {
		sb.WriteString("\n" + why)
	}
	sb.WriteString("\nNothing ran.")
	r := rigout.Refusal{Kind: rigout.RefusedPolicy, Rule: d.Rule, Why: d.Reason, Instead: d.Hint}
	if why != "" {
		r.Why += " " + why
	}
	return rigout.RefusalResult(r, sb.String())
}

// unsolicited refuses a call that carries an approval this gateway did not
// ask for in this call: none was asked, or it was answered before, or it
// was altered, expired, or asked about something else.
func (g *Gate) unsolicited(ctx context.Context, call *rigout.Call, d validate.Decision) *mcp.CallToolResult {
	call.Outcome.Status = audit.StatusDenied
	call.Outcome.Decision = audit.DecisionDeny
	if call.Outcome.Detail == nil {
		call.Outcome.Detail = map[audit.DetailKey]string{}
	}
	call.Outcome.Detail[audit.DetailRefused] = "unsolicited approval"
	g.log.LogAttrs(ctx, slog.LevelWarn, "call carried an approval the gateway did not ask for",
		slog.String("call", call.ID), slog.String("rule", d.Rule), slog.String("principal", call.Principal().Name))
	const stray = "The call carried an approval that answers no question this gateway asked in this call (none was asked, or it was already used, expired, altered, or asked about other arguments). An approval cannot be sent with a call; nothing ran."
	return rigout.RefusalResult(rigout.Refusal{Kind: rigout.RefusedApproval, Rule: d.Rule, Why: d.Reason + " " + stray, Instead: "call again without an approval; the gateway asks when a rule lets a person decide"},
		fmt.Sprintf("refused by policy rule %s: %s\n%s", d.Rule, d.Reason, stray))
}

// hostOf is where cmd runs, as a person reads it.
func hostOf(cmd Command) string {
	if cmd.Host == "" {
		return "local"
	}
	return cmd.Host
}

// question is what the person is asked about a held-back command: the
// whole command (bounded), where, and why it was held back.
func question(cmd Command, d validate.Decision) string {
	host := hostOf(cmd)
	text := textsafe.Block(cmd.String(), maxShown)
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
