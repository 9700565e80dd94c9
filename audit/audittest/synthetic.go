package audittest

import (
	"fmt"
	"time"

	"github.com/rigout/rigout/audit"
)

// SyntheticStart returns the time of the first call of a synthetic ledger
// (see [Synthetic]).
func SyntheticStart() time.Time { return time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC) }

// SyntheticStep is the time between two calls of a synthetic ledger.
const SyntheticStep = 500 * time.Millisecond

// SyntheticEnd is the time of the last call of a synthetic ledger of rows
// rows.
func SyntheticEnd(rows int) time.Time {
	return SyntheticStart().Add(time.Duration(rows/2) * SyntheticStep)
}

// syntheticTool is the tool of synthetic call number call: a mix of
// common and less common ones, like a gateway's.
func syntheticTool(call int) string {
	if call%1009 == 0 {
		return "rare_tool"
	}
	tools := [...]string{"execute_command", "execute_command", "execute_command", "read_file", "write_file", "get_server_activity", "ssh_hosts"}
	return tools[call%len(tools)]
}

// Synthetic fills e with row i of a synthetic ledger, the same for every
// i on every run: even rows are the intents of tool calls, odd rows the
// done rows of the same calls 40ms later, one call every [SyntheticStep]
// from [SyntheticStart](); four principals; one call in 1009 is of
// "rare_tool"; of 53 calls, 2 fail, 1 is denied and 1 is left unfinished
// (its done row names another call). Large ledgers for benchmarks are
// built from it, so that tests and benchmarks that time queries on them
// agree on the rows.
func Synthetic(i int, e *audit.Event) {
	c := i / 2
	at := SyntheticStart().Add(time.Duration(c) * SyntheticStep)
	*e = audit.Event{Time: at, Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: fmt.Sprintf("%016x", uint64(c)*0x9e3779b97f4a7c15),
		Principal: [...]string{"ci", "ops", "deploy", "observer"}[c%4], Transport: audit.TransportHTTP, RemoteAddr: "127.0.0.1:54321",
		Tool: syntheticTool(c), Host: "local", Route: "local", Decision: audit.DecisionAllow, Rule: "default",
		Status: audit.StatusStarted, ArgsDigest: "0123456789abcdef"}
	if i%2 == 0 {
		return
	}
	e.Phase, e.Status = audit.PhaseDone, audit.StatusOK
	e.Time = at.Add(40 * time.Millisecond)
	e.Duration = time.Duration(1000+(c*7919)%200000) * time.Microsecond / 10
	code := 0
	switch c % 53 {
	case 7:
		e.Status, e.Decision = audit.StatusDenied, audit.DecisionDeny
	case 11, 12:
		code = 1
		e.Status = audit.StatusError
	case 13:
		e.CallID = fmt.Sprintf("unfinished-%d", c) // leaves the intent open
	}
	e.ExitCode = &code
}
