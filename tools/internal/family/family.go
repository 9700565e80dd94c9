// Package family is the plumbing the tool families share, written once:
// where a host argument leads when the gateway has no SSH hosts, the
// default command gate, a constructor's working directory and timeouts,
// the answer to an invalid argument, and what a command's exec.Result
// puts in the call's audit outcome.
//
// It is internal to the tool families on purpose: an embedder's tool is
// built on the root package's exported API alone (rigout.Call,
// rigout.Outcome, rigout.ErrorResult) and needs none of it, and keeping
// it here leaves it free to change with the families.
package family

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
)

// Hosts is where a family runs commands: hosts when set (the SSH
// package's Router, or an embedder's own), else this machine alone with
// local (exec.LocalHosts, whose Targets have a nil Runner when local is
// nil, for a family that only asks whether a host is local).
func Hosts(local exec.Runner, hosts exec.Hosts) exec.Hosts {
	if hosts != nil {
		return hosts
	}
	return exec.LocalHosts{Local: local}
}

// IsLocalName reports whether host names this machine without SSH hosts:
// empty, "local", "self", "localhost" (in any case), 127.0.0.1 or ::1
// (exec.IsLocalName).
func IsLocalName(host string) bool { return exec.IsLocalName(host) }

// Gate returns g, or when g is nil a gate with the default policy: what
// every family's Config.Gate defaults to.
func Gate(g *gate.Gate) (*gate.Gate, error) {
	if g != nil {
		return g, nil
	}
	return gate.New(gate.Config{})
}

// Setup is the start of a constructor that runs commands: where they run
// (Hosts of local and hosts), an error wrapping exec.ErrNoSandbox when
// the runner for this machine is neither sandboxed nor marked unsafe (it
// names the family, name, and Config.Local), and the command gate (Gate
// of g).
func Setup(name string, local exec.Runner, hosts exec.Hosts, g *gate.Gate) (exec.Hosts, *gate.Gate, error) {
	h := Hosts(local, hosts)
	if err := h.CheckSandboxed(); err != nil {
		return nil, nil, fmt.Errorf("%s: Config.Local: %w", name, err)
	}
	g, err := Gate(g)
	if err != nil {
		return nil, nil, err
	}
	return h, g, nil
}

// WorkDir is a family's working directory for relative paths: dir, or the
// process's own when dir is empty. A relative dir is an error naming the
// family (name), as its constructor reports it.
func WorkDir(name, dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%s: working directory: %w", name, err)
		}
		return wd, nil
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%s: WorkDir %q is not absolute", name, dir)
	}
	return dir, nil
}

// Timeouts fills a family's default and largest command timeouts, each
// from its default (def, max) when zero or negative, and refuses a
// default above the largest, naming the family (name).
func Timeouts(name string, timeout, maxTimeout *time.Duration, def, max time.Duration) error {
	if *timeout <= 0 {
		*timeout = def
	}
	if *maxTimeout <= 0 {
		*maxTimeout = max
	}
	if *timeout > *maxTimeout {
		return fmt.Errorf("%s: DefaultTimeout %v exceeds MaxTimeout %v", name, *timeout, *maxTimeout)
	}
	return nil
}

// Invalid answers a call whose arguments cannot be acted on: the call is
// recorded as invalid, and the model gets a refusal of kind "argument"
// saying why (format and args, as for rigout.ErrorResult), in its text and
// its structuredContent, as the chain answers arguments its input schema
// does not admit.
func Invalid(call *rigout.Call, format string, args ...any) (*mcp.CallToolResult, error) {
	call.Outcome.Status = audit.StatusInvalid
	why := fmt.Sprintf(format, args...)
	instead := "call the tool again with the arguments corrected"
	if call.Tool != nil {
		instead = "call " + call.Tool.Name + " again with the arguments corrected"
	}
	return rigout.RefusalResult(rigout.Refusal{Kind: rigout.RefusedArgument, Why: why, Instead: instead}, why), nil
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
