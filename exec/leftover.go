package exec

import (
	"context"
	"errors"
	"fmt"
)

// callKey is the context key of the call ID (WithCall).
type callKey struct{}

// maxCallID bounds a call ID that names cgroups and markers.
const maxCallID = 64

// WithCall returns ctx naming call, the ID under which the audit ledger
// records the call that runs commands (rigout.Call.ID). Local then marks
// each command's processes with it (the call cgroup's name, or the
// RIGOUT_CALL_ID marker), so that when the gateway dies mid-call the next
// start can find what the call left running and end it ([EndLeftovers]).
// An ID of other characters than letters, digits, '-' and '_', or longer
// than 64, is ignored: the command is then marked at random, as without
// it.
func WithCall(ctx context.Context, call string) context.Context {
	if !validCallID(call) {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, call)
}

// CallFrom returns the call ID WithCall put in ctx, or "".
func CallFrom(ctx context.Context) string {
	s, _ := ctx.Value(callKey{}).(string)
	return s
}

func validCallID(s string) bool {
	if s == "" || len(s) > maxCallID {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// GatewayProcess names the gateway process that ran a call: its PID and
// its start time in clock ticks since boot (the 22nd field of
// /proc/PID/stat), which tells it apart from a later process given the
// same PID.
type GatewayProcess struct {
	PID       int
	StartTime uint64
}

// Leftover is what [EndLeftovers] found of one call and ended.
type Leftover struct {
	// Cgroups are the call cgroups ended and removed.
	Cgroups []string
	// PIDs are the processes ended: the members of those cgroups and the
	// processes carrying the call's marker.
	PIDs []int
}

// String says what was ended, for logs and the ledger.
func (l Leftover) String() string {
	if len(l.PIDs) == 0 && len(l.Cgroups) == 0 {
		return "no process of the call was left running"
	}
	return fmt.Sprintf("ended %d process(es) the call left running (PIDs %v; call cgroups %v)", len(l.PIDs), l.PIDs, l.Cgroups)
}

// Errors of EndLeftovers.
var (
	// ErrGatewayAlive means the gateway named is this process or still
	// runs: its calls' processes are its own to end.
	ErrGatewayAlive = errors.New("exec: the gateway that ran the call still runs")
	// ErrBadCallID means the call ID is not one WithCall accepts.
	ErrBadCallID = errors.New("exec: not a call ID (letters, digits, '-' and '_', at most 64)")
)

func checkLeftoverArgs(g GatewayProcess, call string) error {
	if !validCallID(call) {
		return fmt.Errorf("%w: %q", ErrBadCallID, call)
	}
	if g.PID <= 0 {
		return fmt.Errorf("exec: gateway PID %d", g.PID)
	}
	return nil
}
