package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/rigout/rigout/sessions"
)

// terminalFlags are the terminal family's flags.
type terminalFlags struct {
	off    bool
	idle   time.Duration
	max    int // open terminal sessions of all tokens together
	maxPer int // open terminal sessions of one token
}

func (t *terminalFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&t.off, "no-terminals", false, "leave out the terminal session tools (create_terminal_session, …)")
	fs.DurationVar(&t.idle, "terminal-idle", sessions.DefaultTerminalIdle, "close a terminal session after this long without a call")
	fs.IntVar(&t.max, "max-terminals", sessions.DefaultMaxTerminals, "open terminal sessions of all tokens together; more are refused as busy")
	fs.IntVar(&t.maxPer, "max-terminals-per-token", sessions.DefaultMaxTerminalsPerPrincipal, "open terminal sessions of one token (or the stdio client)")
}

// check refuses caps below one: zero would mean the default to
// sessions.Config, not "none" (--no-terminals is that).
func (t *terminalFlags) check() error {
	if t.max < 1 {
		return fmt.Errorf("--max-terminals %d: must be at least 1 (--no-terminals leaves the tools out)", t.max)
	}
	if t.maxPer < 1 {
		return fmt.Errorf("--max-terminals-per-token %d: must be at least 1 (--no-terminals leaves the tools out)", t.maxPer)
	}
	return nil
}
