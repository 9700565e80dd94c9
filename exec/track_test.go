//go:build linux

package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/proctest"
)

// TestNoProcessOutlivesItsCall counts survivors of the usual escapes, by
// a unique argument of their sleep, right after Run returns: none may be
// left, sandbox or not, with a normal return or a timeout.
func TestNoProcessOutlivesItsCall(t *testing.T) {
	tests := []struct {
		name    string
		shell   string // SLEEP is replaced by a sleep with a unique argument
		timeout bool
		want    int // processes the call left behind (Result.Orphans)
		// extra: intermediate processes that may not have exited yet when
		// the call ends, on a busy machine, and are then counted too
		extra  int
		cgroup bool // escapes TrackMarker, as documented
	}{
		{name: "background", shell: "SLEEP &", want: 1},
		{name: "setsid", shell: "setsid SLEEP &", want: 1},
		{name: "double fork", shell: "(setsid sh -c 'SLEEP &' &)", want: 1, extra: 1},
		{name: "nohup", shell: "nohup SLEEP >/dev/null 2>&1 &", want: 1},
		{name: "disown", shell: "SLEEP & disown", want: 1},
		{name: "closed pipes", shell: "setsid SLEEP </dev/null >/dev/null 2>&1 &", want: 1},
		{name: "cleared environment", shell: "env -i setsid SLEEP </dev/null >/dev/null 2>&1 &", want: 1, cgroup: true},
		{name: "all of them", shell: "SLEEP & setsid SLEEP & (setsid sh -c 'SLEEP &' &); nohup SLEEP >/dev/null 2>&1 & SLEEP & disown", want: 5, extra: 1},
		{name: "timed out", shell: "SLEEP & setsid SLEEP & (setsid sh -c 'SLEEP &' &); nohup SLEEP >/dev/null 2>&1 & SLEEP & disown; SLEEP", timeout: true},
		{name: "timed out, ignoring SIGTERM", shell: "trap '' TERM; setsid sh -c 'trap \"\" TERM; SLEEP' & SLEEP", timeout: true},
	}
	for _, mode := range []exec.TrackMode{exec.TrackCgroup, exec.TrackMarker} {
		for _, sandboxed := range []bool{false, true} {
			for _, tt := range tests {
				t.Run(fmt.Sprintf("%s/%s/sandbox=%v", tt.name, mode, sandboxed), func(t *testing.T) {
					if tt.cgroup && mode != exec.TrackCgroup {
						t.Skip("escapes marker tracking, as TrackMarker documents")
					}
					testEscape(t, mode, sandboxed, tt.shell, tt.timeout, tt.want, tt.want+tt.extra)
				})
			}
		}
	}
}

func testEscape(t *testing.T, mode exec.TrackMode, sandboxed bool, shell string, timeout bool, want, most int) {
	l := &exec.Local{Grace: 100 * time.Millisecond, Drain: 50 * time.Millisecond}
	if mode == exec.TrackMarker {
		exec.UseMarkerTracking(l)
	}
	if st := l.Tracking(); st.Mode != mode {
		skipOrFail(t, "no cgroup v2 per call: "+st.String())
	}
	if sandboxed {
		sb, _ := hiddenSandbox(t)
		l.Sandbox = sb
	}
	marker := fmt.Sprintf("1000.%d", rand.IntN(1e9))
	t.Cleanup(func() { killMarked(marker) })
	cmd := exec.Command{Shell: replaceSleep(shell, marker)}
	if timeout {
		cmd.Timeout = 300 * time.Millisecond
	}
	res, err := l.Run(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if left := proctest.WithArg(marker); len(left) > 0 {
		t.Errorf("%d processes outlived the call: %v", len(left), left)
	}
	if res.TimedOut != timeout || res.Sandboxed != sandboxed {
		t.Errorf("result %+v", res)
	}
	if !timeout && (res.Orphans < want || res.Orphans > most) {
		t.Errorf("Orphans = %d, want %d (at most %d)", res.Orphans, want, most)
	}
}

func replaceSleep(shell, marker string) string {
	out := ""
	for i := 0; i < len(shell); i++ {
		if len(shell)-i >= 5 && shell[i:i+5] == "SLEEP" {
			out += "sleep " + marker
			i += 4
			continue
		}
		out += shell[i : i+1]
	}
	return out
}

// killMarked ends, by PID, whatever a failed test left running.
func killMarked(marker string) {
	for _, pid := range proctest.WithArg(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestLeaveDescendants(t *testing.T) {
	l := &exec.Local{LeaveDescendants: true, Drain: 50 * time.Millisecond}
	if st := l.Tracking(); st.Mode != exec.TrackOff {
		t.Fatalf("Tracking = %v", st)
	}
	marker := fmt.Sprintf("1000.%d", rand.IntN(1e9))
	t.Cleanup(func() { killMarked(marker) })
	if _, err := l.Run(context.Background(), exec.Command{Shell: "setsid sleep " + marker + " </dev/null >/dev/null 2>&1 &"}); err != nil {
		t.Fatal(err)
	}
	// The shell may return before the background child has exec'd: give
	// it a moment to show its argv.
	var left []int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if left = proctest.WithArg(marker); len(left) == 1 {
			break
		}
	}
	if len(left) != 1 {
		t.Errorf("with LeaveDescendants the background sleep should survive: %v", left)
	}
}

func TestTrackingCgroupRemoved(t *testing.T) {
	l := &exec.Local{}
	st := l.Tracking()
	if st.Mode != exec.TrackCgroup {
		skipOrFail(t, "no cgroup v2 per call: "+st.String())
	}
	for range 5 {
		if _, err := l.Run(context.Background(), exec.Command{Shell: "sleep 10 & true"}); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(st.Where)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			t.Errorf("call cgroup %s left behind", e.Name())
		}
	}
}
