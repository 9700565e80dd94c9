//go:build linux

package exec_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/proctest"
	"github.com/rigout/rigout/internal/runstate"
)

// TestWithCall: a call ID of letters, digits, '-' and '_' (at most 64)
// reaches CallFrom; anything else is ignored, so that it can never name a
// path or an environment entry of another shape.
func TestWithCall(t *testing.T) {
	for _, c := range []struct {
		id   string
		want string
	}{
		{"9e0460a9ad02298a", "9e0460a9ad02298a"},
		{"call_1-B", "call_1-B"},
		{"", ""},
		{"../x", ""},
		{"a.b", ""},
		{"a=b", ""},
		{"a\x00b", ""},
		{strings.Repeat("a", 65), ""},
	} {
		if got := exec.CallFrom(exec.WithCall(context.Background(), c.id)); got != c.want {
			t.Errorf("WithCall(%q): CallFrom = %q, want %q", c.id, got, c.want)
		}
	}
}

// TestEndLeftoversRefuses: nothing is ended for a gateway that is this
// process or still runs, nor for a call ID WithCall would not accept.
func TestEndLeftoversRefuses(t *testing.T) {
	self, err := runstate.Self()
	if err != nil {
		t.Skip("SKIP: no /proc:", err)
	}
	live := osexec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })
	liveID, err := runstate.Of(live.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		g    exec.GatewayProcess
		call string
		want error
	}{
		{"this process", exec.GatewayProcess{PID: self.PID, StartTime: self.StartTime}, "abc", exec.ErrGatewayAlive},
		{"this PID, another start time", exec.GatewayProcess{PID: self.PID, StartTime: self.StartTime + 1}, "abc", exec.ErrGatewayAlive},
		{"a live process", exec.GatewayProcess{PID: liveID.PID, StartTime: liveID.StartTime}, "abc", exec.ErrGatewayAlive},
		{"empty call ID", exec.GatewayProcess{PID: liveID.PID, StartTime: liveID.StartTime + 1}, "", exec.ErrBadCallID},
		{"a path as call ID", exec.GatewayProcess{PID: liveID.PID, StartTime: liveID.StartTime + 1}, "../../x", exec.ErrBadCallID},
	} {
		t.Run(c.name, func(t *testing.T) {
			lo, err := exec.EndLeftovers(c.g, c.call)
			if !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if len(lo.PIDs) > 0 {
				t.Errorf("ended %v", lo.PIDs)
			}
		})
	}
	if err := live.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the live process was ended: %v", err)
	}
}

// TestEndLeftoversByMarker: of processes started after a gateway that is
// gone (a process that ran and exited stands for it), exactly those
// carrying the call's marker are ended: not another call's, not a call
// whose ID extends this one's, not an unmarked process.
func TestEndLeftoversByMarker(t *testing.T) {
	gone := osexec.Command("true")
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	gw, err := runstate.Of(gone.Process.Pid)
	if err != nil {
		t.Skip("SKIP: cannot read the start time of a process:", err)
	}
	_ = gone.Wait()

	tag := fmt.Sprintf("%d.%06d", 3000+rand.IntN(600), rand.IntN(1e6))
	start := func(arg string, env ...string) int {
		c := osexec.Command("sleep", arg)
		c.Env = append(os.Environ(), env...)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as a daemon would
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		go c.Wait()
		t.Cleanup(func() { _ = c.Process.Kill() })
		return c.Process.Pid
	}
	const call = "c0ffee01"
	marked := start(tag+"1", "RIGOUT_CALL_ID="+call+".0123456789ab")
	others := []int{
		start(tag+"2", "RIGOUT_CALL_ID=c0ffee02.0123456789ab"),
		start(tag+"3", "RIGOUT_CALL_ID="+call+"9.0123456789ab"),
		start(tag + "4"),
	}
	for len(proctest.WithArg(tag+"4")) == 0 {
		time.Sleep(5 * time.Millisecond) // started: its environment is readable
	}

	lo, err := exec.EndLeftovers(exec.GatewayProcess{PID: gw.PID, StartTime: gw.StartTime}, call)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lo.PIDs, []int{marked}) {
		t.Errorf("ended %v, want exactly the marked sleep %d (others %v)", lo.PIDs, marked, others)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(proctest.WithArg(tag+"1")) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(proctest.WithArg(tag + "1")); n > 0 {
		t.Error("the marked sleep still runs")
	}
	for i := 2; i <= 4; i++ {
		if len(proctest.WithArg(fmt.Sprint(tag, i))) == 0 {
			t.Errorf("sleep %d, not the call's, was ended", i)
		}
	}
	if !strings.HasPrefix(lo.String(), "ended 1 process(es)") {
		t.Errorf("String() = %q", lo.String())
	}
}
