package exec

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// leftoverKillWait bounds how long EndLeftovers waits for a call cgroup
// to empty.
const leftoverKillWait = 2 * time.Second

// EndLeftovers ends the processes that call, run by gateway g, left
// running when g died: in cgroup mode the call cgroups named for the call
// under g's directory of call cgroups (rigout.<pid>.<start>, beside this
// process's own, which is where a restarted gateway finds them), in marker
// mode every process started after g that carries the call's
// RIGOUT_CALL_ID marker. It ends nothing of a gateway that is this process
// or still runs ([ErrGatewayAlive]), never this process, and nothing
// outside those cgroups but the marked processes. Only calls whose
// commands were started with [WithCall] can be found.
//
// A gateway that ran commands in per-principal views needs none of this:
// the kernel ends a view's processes with the view.
func EndLeftovers(g GatewayProcess, call string) (Leftover, error) {
	if err := checkLeftoverArgs(g, call); err != nil {
		return Leftover{}, err
	}
	if !gatewayGone(g) {
		return Leftover{}, ErrGatewayAlive
	}
	var out Leftover
	if parent, err := cgroupParent(); err == nil {
		dirs, _ := filepath.Glob(filepath.Join(parent, baseName(g), "call-"+call+".*"))
		for _, dir := range dirs {
			cg := &callCgroup{dir: dir, fd: -1}
			pids := cg.pids()
			cg.kill(leftoverKillWait)
			if cg.populated() {
				continue // could not empty it: leave it, not claimed as ended
			}
			_ = cg.closeWhenEmpty(leftoverKillWait)
			out.Cgroups = append(out.Cgroups, dir)
			out.PIDs = append(out.PIDs, pids...)
		}
	}
	// Marker mode, or a command that left its cgroup: a few rounds, for
	// processes forked while the previous round killed.
	marker := []byte(callMarkerEnv + "=" + call + ".")
	for range 5 {
		pids := markedProcs(marker, g.StartTime)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil && !slices.Contains(out.PIDs, pid) {
				out.PIDs = append(out.PIDs, pid)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	slices.Sort(out.PIDs)
	return out, nil
}

// gatewayGone reports whether gateway g provably no longer runs: no
// process has its PID, or the one that has it started at another time.
// This process is never gone.
func gatewayGone(g GatewayProcess) bool {
	if g.PID == os.Getpid() {
		return false
	}
	st, ok := procStat(g.PID)
	if !ok {
		return syscall.Kill(g.PID, 0) == syscall.ESRCH || !procExists(g.PID)
	}
	return st.start != g.StartTime
}

// procExists reports whether /proc lists pid (a zombie included).
func procExists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// markedProcs returns the live processes, other than this one and kernel
// threads, started at or after since, whose environment has an entry
// starting with prefix.
func markedProcs(prefix []byte, since uint64) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	inner := append([]byte{0}, prefix...)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, ok := procStat(pid)
		if !ok || st.start < since || st.kernel {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		if bytes.HasPrefix(env, prefix) || bytes.Contains(env, inner) {
			pids = append(pids, pid)
		}
	}
	return pids
}
