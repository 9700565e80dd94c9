package exec

import (
	"fmt"
	"syscall"
	"time"
)

// TrackMode says how Local makes sure that no process outlives its call.
type TrackMode string

// The tracking modes.
const (
	// TrackCgroup puts each call in a cgroup v2 of its own, created with
	// the process (clone3 CLONE_INTO_CGROUP), and kills the cgroup when
	// the call ends: every descendant ends, setsid and double-forked
	// daemons included. A command running as root can still leave its
	// cgroup by writing to a cgroup.procs file, unless the cgroup mount
	// is in SandboxConfig.ReadOnly.
	TrackCgroup TrackMode = "cgroup"
	// TrackMarker is the fallback when no cgroup can be created: the
	// call's command gets a unique RIGOUT_CALL_ID in its environment, which
	// its descendants inherit, and when the call ends Local kills the
	// call's process group and every process started since the call that
	// carries the marker (found in /proc/<pid>/environ). setsid and
	// double-forked daemons are caught. What escapes: a descendant that
	// clears or rewrites its environment (env -i, exec -c) and leaves the
	// process group, and one whose environment the gateway cannot read
	// (another user's, or non-dumpable after a setuid exec, which the
	// sandbox's no_new_privs prevents).
	TrackMarker TrackMode = "marker"
	// TrackOff leaves descendants running after the call returns, as
	// Local.LeaveDescendants asks. A timeout still ends the process group.
	TrackOff TrackMode = "off"
)

// TrackingStatus says how a Local tracks its commands' descendants.
type TrackingStatus struct {
	// Mode is the mechanism in use.
	Mode TrackMode
	// Where names the cgroup directory that holds the call cgroups, in
	// TrackCgroup mode.
	Where string
	// Reason says why no cgroup is used, in TrackMarker mode.
	Reason string
}

// String returns a one-line summary for health reports.
func (s TrackingStatus) String() string {
	switch s.Mode {
	case TrackCgroup:
		return "every descendant ends with its call (cgroup v2 per call under " + s.Where + ")"
	case TrackMarker:
		return "descendants end with their call when they keep its process group or its environment marker; one that clears its environment and calls setsid survives (" + s.Reason + ")"
	}
	return "descendants may outlive their call (LeaveDescendants)"
}

// Tracking reports how l makes sure no process outlives its call. The
// first call may create l's cgroup directory.
func (l *Local) Tracking() TrackingStatus {
	if l.LeaveDescendants {
		return TrackingStatus{Mode: TrackOff}
	}
	base, err := l.cgroupBase()
	if err != nil {
		return TrackingStatus{Mode: TrackMarker, Reason: err.Error()}
	}
	return TrackingStatus{Mode: TrackCgroup, Where: base}
}

// cgroupBase returns the directory for l's call cgroups, creating it on
// first use, or why there is none.
func (l *Local) cgroupBase() (string, error) {
	l.trackOnce.Do(func() {
		base, err := cgroupBase()
		l.trackMu.Lock()
		l.cgBase, l.cgErr = base, err
		if err != nil {
			l.cgErr = fmt.Errorf("no cgroup v2 for calls: %w", err)
		}
		l.trackMu.Unlock()
	})
	l.trackMu.Lock()
	defer l.trackMu.Unlock()
	return l.cgBase, l.cgErr
}

// disableCgroups records that call cgroups cannot be used after all.
func (l *Local) disableCgroups(err error) {
	l.trackMu.Lock()
	defer l.trackMu.Unlock()
	if l.cgErr == nil {
		l.cgErr = fmt.Errorf("cannot start a process in a call cgroup: %w", err)
	}
}

// callMarkerEnv names the environment variable that marks a call's
// processes when it has no cgroup.
const callMarkerEnv = "RIGOUT_CALL_ID"

// tracker ends a call's processes: its cgroup if it has one, else its
// process group and the processes carrying its marker.
type tracker struct {
	cg     *callCgroup
	pgid   int
	marker string // callMarkerEnv=value, when there is no cgroup
	since  uint64 // the leader's start time, in clock ticks since boot
	// view: the leader is the first process of its own PID namespace,
	// whose end ends every process of the call.
	view bool
}

// signal sends sig to the call's process group and, with a cgroup, to
// every process in it.
func (t *tracker) signal(sig syscall.Signal) {
	if t.view && terminates(sig) && !catches(t.pgid, sig) {
		// The leader is the first process of its PID namespace, which
		// the kernel spares every signal it has no handler for: do what
		// the signal would have done to any other process. First, so that
		// the leader cannot go on running (a shell's next command) once
		// the signal has ended its children; its end ends them anyway.
		_ = syscall.Kill(t.pgid, syscall.SIGKILL)
	}
	_ = syscall.Kill(-t.pgid, sig)
	switch {
	case t.cg != nil && sig == syscall.SIGKILL:
		t.cg.kill(0)
	case t.cg != nil:
		t.cg.signal(sig)
	case t.marker != "":
		pids, _ := callProcs(t.marker, t.pgid, t.since)
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// end kills whatever of the call still runs once its leader has been
// reaped, and reports how many processes that was (with a cgroup; 0
// without, where they are not counted).
func (t *tracker) end(leave bool) int {
	if t.view {
		return 0
	}
	if t.cg == nil {
		if leave {
			return 0
		}
		if t.marker == "" {
			_ = syscall.Kill(-t.pgid, syscall.SIGKILL)
			return 0
		}
		// Scan before killing the group, to count its members too, and
		// kill until a scan finds none: a process may fork between the
		// scan and its SIGKILL, and a killed one shows until it has
		// exited, which on a busy machine takes more than a few rounds.
		// A process in the middle of an exec shows no environment for a
		// moment, so the scan runs at least three times, a millisecond
		// apart, and again while one is unsure; bounded by markerEndWait.
		seen := map[int]bool{}
		deadline := time.Now().Add(markerEndWait)
		for round := 0; ; round++ {
			pids, unsure := callProcs(t.marker, t.pgid, t.since)
			for _, pid := range pids {
				seen[pid] = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			_ = syscall.Kill(-t.pgid, syscall.SIGKILL)
			if len(pids) == 0 && !unsure && round >= 2 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		return len(seen)
	}
	n := len(t.cg.pids())
	if n == 0 && t.cg.close() == nil {
		return 0 // empty: removed at once
	}
	t.cg.kill(5 * time.Second)
	_ = t.cg.closeWhenEmpty(2 * time.Second)
	return n
}

// markerEndWait bounds how long the end of a call tracked by marker waits
// for the processes it killed to be gone.
const markerEndWait = 2 * time.Second

// terminates reports whether sig's default action ends a process.
func terminates(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGABRT:
		return true
	}
	return false
}
