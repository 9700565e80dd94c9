// Package family is the plumbing the tool families share, written once:
// where a host argument leads when the gateway has no SSH router, the
// default command gate, the answer to an invalid argument, and what a
// command's exec.Result puts in the call's audit outcome.
//
// It is internal to the tool families on purpose: an embedder's tool is
// built on the root package's exported API alone (rigout.Call,
// rigout.Outcome, rigout.ErrorResult) and needs none of it, and keeping
// it here leaves it free to change with the families.
package family

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
)

// Runners is where a family runs commands: this machine, and SSH hosts
// when Router is set. The zero value reaches this machine's names only,
// with a nil Runner (for a family that only asks whether a host is local).
type Runners struct {
	// Local runs commands on this machine when Router is nil.
	Local exec.Runner
	// Router, if set, resolves every host through its routing ladder,
	// this machine included.
	Router *exec.Router
}

// CheckSandboxed returns exec.ErrNoSandbox (wrapped) unless the runner
// that runs commands on this machine is sandboxed or says it is unsafe
// not to be: the router's local runner with a Router, else Local.
func (r Runners) CheckSandboxed() error {
	if r.Router != nil {
		return r.Router.CheckSandboxed()
	}
	return exec.CheckSandboxed(r.Local)
}

// Resolve says where host leads for principal: through the Router's
// ladder when there is one; else to Local for one of this machine's names
// (IsLocalName), and an error naming host for any other.
func (r Runners) Resolve(ctx context.Context, host, principal string) (exec.Target, error) {
	if r.Router != nil {
		return r.Router.Resolve(ctx, host, principal)
	}
	if IsLocalName(host) {
		return exec.Target{Runner: r.Local, Route: "local", Host: host, Local: true}, nil
	}
	return exec.Target{}, fmt.Errorf("unknown host %q: this gateway reaches only this machine (host \"local\"); SSH hosts are not configured", host)
}

// IsLocalName reports whether host names this machine without a router:
// empty, "local", "self", "localhost" (in any case), 127.0.0.1 or ::1.
func IsLocalName(host string) bool {
	switch strings.ToLower(host) {
	case "", "local", "self", "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// Gate returns g, or when g is nil a gate with the default policy: what
// every family's Config.Gate defaults to.
func Gate(g *gate.Gate) (*gate.Gate, error) {
	if g != nil {
		return g, nil
	}
	return gate.New(gate.Config{})
}

// Invalid answers a call whose arguments cannot be acted on: the call is
// recorded as invalid, and the model gets an error result saying why
// (format and args, as for rigout.ErrorResult).
func Invalid(call *rigout.Call, format string, args ...any) (*mcp.CallToolResult, error) {
	call.Outcome.Status = audit.StatusInvalid
	return rigout.ErrorResult(format, args...), nil
}

// Ran adds what a command that ran tells the ledger to o: its exit code
// and signal, the bytes of each stream (added to what o holds, so a call
// running several commands counts them all), whether output was cut, and,
// for a command on this machine (local) that ran outside the kernel
// sandbox, why (as Unsandboxed). The status is the family's to set: what
// counts as a failure, and how to say it, is its own.
func Ran(o *rigout.Outcome, local bool, res exec.Result) {
	code := res.ExitCode
	o.ExitCode, o.Signal = &code, res.Signal
	o.StdoutBytes += res.Stdout.Total
	o.StderrBytes += res.Stderr.Total
	o.Truncated = o.Truncated || res.Truncated()
	Unsandboxed(o, local, res)
}

// Unsandboxed records in o why a command on this machine (local) ran
// outside the kernel sandbox, if it did: for a tool whose commands are
// probes of its own, whose exit codes and output are not the call's, this
// is all of Ran the ledger needs. A command over SSH records nothing here
// (its host's sandbox is the helper's to report).
func Unsandboxed(o *rigout.Outcome, local bool, res exec.Result) {
	if local && !res.Sandboxed && res.Unsandboxed != "" {
		o.Unsandboxed = res.Unsandboxed
	}
}
