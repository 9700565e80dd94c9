package exec

import (
	"context"
	"fmt"
	"strings"
	"syscall"
)

// Hosts is what a tool family needs to reach a host: the host argument of
// a call, for a principal (the caller identity), resolved to a [Target].
// [LocalHosts] reaches this machine alone and links no SSH code; package
// exec/remote's Router reaches SSH hosts through its routing ladder too.
//
// What else a host set or a Target's runner can do is discovered by
// interface assertion, so a family works with either and says clearly
// what a host lacks: [FanOuter] (several hosts at once), [ShellDetector]
// (the shell of a remote host), [PTYStarter] (terminals), [HandleStarter]
// (background processes) and [PolicyReadlinker] (the host's symbolic
// links, for the command policy).
//
// Implementations are safe for concurrent use.
type Hosts interface {
	// Resolve says where host leads for principal. An error says why
	// host leads nowhere (a malformed or unknown host, an SSH host where
	// none is configured, a closed router).
	Resolve(ctx context.Context, host, principal string) (Target, error)
	// CheckSandboxed returns [ErrNoSandbox] (wrapped or not) unless the
	// runner that runs commands on this machine is sandboxed or says it
	// is unsafe not to be (see [CheckSandboxed]).
	CheckSandboxed() error
}

// Target is where a host argument leads.
type Target struct {
	// Runner runs commands there: the Local runner, or a remote runner
	// (package exec/remote's *SSH).
	Runner Runner
	// Route describes the path: "local", or "ssh(web1 → 10.0.0.5:22)".
	Route string
	// Host is the host asked for; for "auto", the host chosen.
	Host string
	// Local is set when the commands run on this machine.
	Local bool
}

// LocalHosts is the Hosts of a gateway without SSH: this machine's names
// (see [IsLocalName]) lead to Local; any other host is a *LocalOnlyError.
// A nil Local gives Targets with a nil Runner, for a caller that only asks
// whether a host is this machine.
type LocalHosts struct {
	// Local runs commands on this machine.
	Local Runner
}

var _ Hosts = LocalHosts{}

// Resolve returns the local Target for one of this machine's names and a
// *LocalOnlyError for any other host.
func (h LocalHosts) Resolve(_ context.Context, host, _ string) (Target, error) {
	if !IsLocalName(host) {
		return Target{}, &LocalOnlyError{Host: host}
	}
	return Target{Runner: h.Local, Route: "local", Host: host, Local: true}, nil
}

// CheckSandboxed is [CheckSandboxed] of Local.
func (h LocalHosts) CheckSandboxed() error { return CheckSandboxed(h.Local) }

// IsLocalName reports whether host names this machine for [LocalHosts]:
// empty, "local", "self", "localhost" (in any case), 127.0.0.1 or ::1.
func IsLocalName(host string) bool {
	switch strings.ToLower(host) {
	case "", "local", "self", "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// LocalOnlyError is a host that is not this machine, asked of a gateway
// that reaches only this machine (no SSH hosts are configured).
type LocalOnlyError struct {
	// Host is the host asked for.
	Host string
}

func (e *LocalOnlyError) Error() string {
	return fmt.Sprintf("unknown host %q: this gateway reaches only this machine (host \"local\"); SSH hosts are not configured", e.Host)
}

// FanOuter is a Hosts that runs one command on several hosts at once (the
// Router of package exec/remote). [LocalHosts] is not one.
type FanOuter interface {
	// Select returns the configured hosts a label selector picks (see
	// FanOutRequest.Selector).
	Select(selector string) ([]string, error)
	// FanOut runs req.Command on every host of req, one FanResult per
	// host in request order; the error is for the request itself.
	FanOut(ctx context.Context, req FanOutRequest) ([]FanResult, error)
}

// ShellDetector is a remote runner whose host may run another shell than
// POSIX sh (cmd.exe, PowerShell).
type ShellDetector interface {
	// Shell returns the host's configured or detected shell, which may
	// connect to the host to learn it.
	Shell(ctx context.Context) (Shell, error)
	// KnownShell returns the host's shell without contacting it: ok is
	// false when it is not known yet.
	KnownShell() (sh Shell, ok bool)
}

// PTYStarter is a remote runner that starts a command on a new
// pseudo-terminal, as terminal sessions need (on this machine,
// [Local.StartPTY]).
type PTYStarter interface {
	StartPTY(ctx context.Context, cmd Command, size PTYSize) (*PTY, error)
}

// Handle is a command started without waiting for it: a *Process, or a
// remote runner's process (package exec/remote's *SSHProcess).
type Handle interface {
	// Pid is the command's process id (on the remote host for a remote
	// command; 0 until it is known).
	Pid() int
	// Sandbox reports whether the command runs in the kernel sandbox and,
	// if not, why.
	Sandbox() (sandboxed bool, unsandboxed string)
	// Signal sends sig to the command's process tree; ErrProcessDone
	// once it has ended.
	Signal(sig syscall.Signal) error
	// Wait waits for the end and returns the Result; every call returns
	// the same.
	Wait() (Result, error)
}

var _ Handle = (*Process)(nil)

// HandleStarter is a remote runner that starts commands in the
// background, as background processes need (on this machine,
// [Local.Start]).
type HandleStarter interface {
	// StartHandle starts cmd without waiting for it; ctx bounds the
	// command's life, as for [Local.Start].
	StartHandle(ctx context.Context, cmd Command) (Handle, error)
}

// PolicyReadlinker is a remote runner that reads its host's symbolic
// links for the command policy (validate.Options.Readlink).
type PolicyReadlinker interface {
	// PolicyReadlink returns the function that reads a link on the host
	// within ctx, or nil when it cannot (the policy then judges without
	// the host's links).
	PolicyReadlink(ctx context.Context) func(name string) (string, error)
}

// FanOutRequest is one command for several hosts.
type FanOutRequest struct {
	// Hosts are host arguments, each resolved through the routing ladder
	// (aliases, user@host, local, ...). Duplicates run once.
	Hosts []string
	// Selector picks configured hosts by label, added after Hosts:
	// comma-separated terms that must all hold, each a label the host must
	// carry ("web", "env=prod") or "!label" that it must not; "*" is every
	// configured host.
	Selector string
	// Principal is the caller identity (see Resolve).
	Principal string
	// Command runs on every host. Its Stdin, if set, is read once up front
	// and fed to each host; OnOutput is called from several goroutines.
	Command Command
	// Limit is how many hosts run at once. If zero,
	// RouterConfig.FanOutLimit.
	Limit int
}

// FanResult is what happened on one host.
type FanResult struct {
	// Host is the host argument.
	Host string
	// Route is where it led ("" if it did not resolve).
	Route string
	// Result is the command's result when Err is nil (and may hold partial
	// output when Err is a *DisconnectError).
	Result Result
	// Err is set when the command could not run on this host: resolution,
	// dial, host key, login, policy. It does not affect other hosts.
	Err error
}
