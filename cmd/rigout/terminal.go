package main

import (
	"flag"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/terminal"
)

// terminalFlags are the terminal family's flags.
type terminalFlags struct {
	off  bool
	idle time.Duration
}

func (t *terminalFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&t.off, "no-terminals", false, "leave out the terminal session tools (create_terminal_session, …)")
	fs.DurationVar(&t.idle, "terminal-idle", sessions.DefaultTerminalIdle, "close a terminal session after this long without a call")
}

// terminals returns the terminal family's tools and instructions, on the
// background processes' Manager (its caps, idle expiry and Close), the SSH
// router and the shell family's gate: every command written to a session
// passes the same gate as execute_command. With a credential store,
// create_terminal_session takes `secrets`.
func (c *common) terminals(a *assembly, g *gate.Gate, creds *credentials.Store) ([]rigout.Tool, []string, error) {
	if c.term.off {
		return nil, nil, nil
	}
	tf, err := terminal.New(terminal.Config{Manager: a.processes, Router: a.router, Gate: g, WorkDir: c.workDir, Credentials: creds})
	if err != nil {
		return nil, nil, err
	}
	return tf.Tools(), []string{tf.Instructions()}, nil
}
