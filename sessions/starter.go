package sessions

import (
	"context"
	"syscall"

	"github.com/rigout/rigout/exec"
)

// Starter starts the commands a Manager runs: [Local] on this machine, or
// [SSH] on a remote host over the Router's pooled connections. Local and
// SSH processes share one table, one set of caps and one spool.
type Starter interface {
	// Route names where the commands run: "local" or the SSH route.
	Route() string
	// Start starts cmd; ctx bounds the command's life, as for
	// exec.Local.Start.
	Start(ctx context.Context, cmd exec.Command) (Handle, error)
}

// Handle is a started command, as a Starter returns it: *exec.Process or
// *exec.SSHProcess.
type Handle interface {
	// Pid is the command's process id (on the remote host for SSH; 0
	// until it is known).
	Pid() int
	// Sandbox reports whether the command runs in the kernel sandbox and,
	// if not, why.
	Sandbox() (sandboxed bool, unsandboxed string)
	// Signal sends sig to the command's process tree; exec.ErrProcessDone
	// once it has ended.
	Signal(sig syscall.Signal) error
	// Wait waits for the end and returns the Result; every call returns
	// the same.
	Wait() (exec.Result, error)
}

var (
	_ Handle = (*exec.Process)(nil)
	_ Handle = (*exec.SSHProcess)(nil)
)

// Local returns the Starter that runs commands on this machine with l.
func Local(l *exec.Local) Starter { return localStarter{l} }

// SSH returns the Starter that runs commands on s's host, each on a
// session channel of the pooled connection.
func SSH(s *exec.SSH) Starter { return sshStarter{s} }

type localStarter struct{ l *exec.Local }

func (s localStarter) Route() string { return "local" }

func (s localStarter) Start(ctx context.Context, cmd exec.Command) (Handle, error) {
	p, err := s.l.Start(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return p, nil
}

type sshStarter struct{ s *exec.SSH }

func (s sshStarter) Route() string {
	ep := s.s.Endpoint()
	return ep.Route()
}

func (s sshStarter) Start(ctx context.Context, cmd exec.Command) (Handle, error) {
	p, err := s.s.Start(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Local returns the Starter of the Manager's own Config.Local, which Start
// and Run use.
func (m *Manager) Local() Starter { return m.local }
