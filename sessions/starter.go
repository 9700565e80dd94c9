package sessions

import (
	"context"

	"github.com/rigout/rigout/exec"
)

// Starter starts the commands a Manager runs: [Local] on this machine, or
// [Remote] on a remote host (over the SSH Router's pooled connections). Local and
// SSH processes share one table, one set of caps and one spool.
type Starter interface {
	// Route names where the commands run: "local" or the SSH route.
	Route() string
	// Start starts cmd; ctx bounds the command's life, as for
	// exec.Local.Start.
	Start(ctx context.Context, cmd exec.Command) (Handle, error)
}

// Handle is a started command, as a Starter returns it: *exec.Process,
// or a remote runner's process (remote.SSHProcess).
type Handle = exec.Handle

// Local returns the Starter that runs commands on this machine with l.
func Local(l *exec.Local) Starter { return localStarter{l} }

// Remote returns the Starter that runs commands on a remote host with s
// (the SSH package's *SSH: each command on a session channel of the
// pooled connection); route names the host's route (exec.Target.Route).
func Remote(route string, s exec.HandleStarter) Starter { return remoteStarter{route, s} }

type localStarter struct{ l *exec.Local }

func (s localStarter) Route() string { return "local" }

func (s localStarter) Start(ctx context.Context, cmd exec.Command) (Handle, error) {
	p, err := s.l.Start(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return p, nil
}

type remoteStarter struct {
	route string
	s     exec.HandleStarter
}

func (s remoteStarter) Route() string { return s.route }

func (s remoteStarter) Start(ctx context.Context, cmd exec.Command) (Handle, error) {
	return s.s.StartHandle(ctx, cmd)
}

// Local returns the Starter of the Manager's own Config.Local, which Start
// and Run use.
func (m *Manager) Local() Starter { return m.local }
