package assembly

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/runstate"
)

// gatewayDetail is the detail key of an intent row that names the gateway
// process that wrote it: "PID/STARTTIME/BOOTID" (see runstate.Identity).
const gatewayDetail = audit.DetailGateway

// maxReconcile bounds the unfinished calls one start reconciles; the rest
// are left for the next start (and logged).
const maxReconcile = 10000

// stampedLedger adds the gateway's process identity to every intent row,
// so that a later start can tell a call interrupted by this process's end
// from one another gateway on the same ledger is running now.
type stampedLedger struct {
	Ledger
	self string
}

// stampLedger returns l stamping intent rows with self.
func stampLedger(l Ledger, self runstate.Identity) *stampedLedger {
	return &stampedLedger{Ledger: l, self: identityString(self)}
}

func identityString(id runstate.Identity) string {
	return fmt.Sprintf("%d/%d/%s", id.PID, id.StartTime, id.BootID)
}

// Record stamps an intent row's detail with the gateway, then records e.
func (s *stampedLedger) Record(ctx context.Context, e audit.Event) error {
	if e.Phase == audit.PhaseIntent {
		d := map[audit.DetailKey]string{}
		if e.Detail == "" || json.Unmarshal([]byte(e.Detail), &d) == nil {
			d[gatewayDetail] = s.self
			e.Detail = rigout.DetailJSON(d)
		}
	}
	return s.Ledger.Record(ctx, e)
}

// Unwrap returns the ledger under the stamp.
func (s *stampedLedger) Unwrap() Ledger { return s.Ledger }

// unfinishedLister is a ledger that lists the intent rows no done row
// finished (the SQLite ledger).
type unfinishedLister interface {
	Unfinished(ctx context.Context, limit int) ([]audit.Event, error)
}

// reconcileInterrupted records a done row, status aborted, for every call
// whose intent row is unfinished and was written by a gateway process that
// is gone (killed mid-call, or the machine restarted): the ledger then says
// that the call was interrupted rather than leaving it open forever. A
// call of a gateway that still runs, or of an intent row that names no
// gateway (written before rows were stamped, or by an embedder), is left
// as it is. It returns how many calls it reconciled and how many it left.
// Processes such a call left running on this boot (a gateway without
// per-principal views, whose commands' processes the kernel does not end
// with it) are ended, found by the call's cgroup or marker
// (exec.EndLeftovers), and the done row says what was ended
// (detail "left_over").
func reconcileInterrupted(ctx context.Context, l Ledger, self runstate.Identity, now time.Time, logger *slog.Logger) (done, left int, err error) {
	u, ok := l.(unfinishedLister)
	if !ok {
		return 0, 0, nil
	}
	open, err := u.Unfinished(ctx, maxReconcile)
	if err != nil {
		return 0, 0, fmt.Errorf("unfinished calls: %w", err)
	}
	for _, in := range open {
		var d map[audit.DetailKey]string
		_ = json.Unmarshal([]byte(in.Detail), &d)
		owner, ok := parseIdentity(d[gatewayDetail])
		if !ok || gatewayAlive(owner, self) {
			left++
			continue
		}
		e := in
		e.Seq, e.Hash, e.PrevHash = 0, "", ""
		e.Phase = audit.PhaseDone
		e.Status = audit.StatusAborted
		e.Time = now.UTC()
		e.Duration = now.Sub(in.Time)
		e.Error = fmt.Sprintf("interrupted: the gateway (PID %d) stopped before the call finished", owner.PID)
		detail := map[audit.DetailKey]string{
			audit.DetailInterrupted: fmt.Sprintf("reconciled at the start of PID %d; intent row %d", self.PID, in.Seq),
			gatewayDetail:           d[gatewayDetail],
		}
		if left := endLeftovers(owner, self, in.CallID, logger); left != "" {
			detail[leftoverDetail] = left
		}
		e.Detail = rigout.DetailJSON(detail)
		if err := l.Record(context.WithoutCancel(ctx), e); err != nil {
			return done, left, fmt.Errorf("reconcile call %s: %w", in.CallID, err)
		}
		done++
	}
	if done > 0 || left > 0 {
		logger.Warn("audit ledger: calls left unfinished by an earlier gateway",
			"reconciled_as_interrupted", done, "left_open", left, "limit", maxReconcile)
	}
	return done, left, nil
}

// leftoverDetail is the detail key of an interrupted call's done row that
// says what of the call was found still running and ended.
const leftoverDetail = audit.DetailLeftOver

// endLeftovers ends what call, run by the gone gateway owner, left
// running, and says what it ended; "" when nothing can be known (another
// boot, where nothing survived, or no call ID).
func endLeftovers(owner, self runstate.Identity, call string, logger *slog.Logger) string {
	if owner.BootID != self.BootID || call == "" {
		return ""
	}
	lo, err := exec.EndLeftovers(exec.GatewayProcess{PID: owner.PID, StartTime: owner.StartTime}, call)
	if err != nil {
		logger.Warn("interrupted call: cannot look for the processes it left running", "call", call, "err", err)
		return "not looked for: " + err.Error()
	}
	if len(lo.PIDs) > 0 {
		logger.Warn("interrupted call: ended the processes it left running", "call", call, "pids", lo.PIDs, "cgroups", lo.Cgroups)
	}
	return lo.String()
}

// parseIdentity reads "PID/STARTTIME/BOOTID".
func parseIdentity(s string) (runstate.Identity, bool) {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 {
		return runstate.Identity{}, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return runstate.Identity{}, false
	}
	return runstate.Identity{PID: pid, StartTime: start, BootID: parts[2]}, true
}

// gatewayAlive reports whether the gateway process id may still be running: it
// is this process, or a process of this boot with its PID and start time.
func gatewayAlive(id, self runstate.Identity) bool {
	if id.BootID != self.BootID {
		return false // an earlier boot: gone
	}
	if id.PID == self.PID && id.StartTime == self.StartTime {
		return true
	}
	now, err := runstate.Of(id.PID)
	return err == nil && now.StartTime == id.StartTime
}
