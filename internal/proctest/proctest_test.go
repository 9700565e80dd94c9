package proctest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

type runFunc func() int

func (f runFunc) Run() int { return f() }

// TestMarkersMainFailsOnSurvivors: a process carrying a marker that is
// still running after the tests fails the binary, names the test that took
// its marker, and is ended; a binary that leaves nothing keeps its code.
func TestMarkersMainFailsOnSurvivors(t *testing.T) {
	m := NewMarkers()
	if code := m.Main(runFunc(func() int { return 3 }), time.Second).Run(); code != 3 {
		t.Fatalf("nothing left: code %d, want the tests' own 3", code)
	}

	mk := m.Next()
	if !strings.HasPrefix(mk, m.prefix) || len(m.prefix) != len("1000.")+7 {
		t.Fatalf("marker %q, prefix %q", mk, m.prefix)
	}
	cmd := exec.Command("sleep", mk)
	if err := cmd.Start(); err != nil {
		t.Skipf("SKIP: no sleep: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if left := m.Left(); !slices.Contains(left, cmd.Process.Pid) {
		t.Fatalf("Left() = %v, want %d", left, cmd.Process.Pid)
	}
	if got := m.describe(cmd.Process.Pid); !strings.Contains(got, "taken by TestMarkersMainFailsOnSurvivors") {
		t.Errorf("describe: %s", got)
	}
	if code := m.Main(runFunc(func() int { return 0 }), 100*time.Millisecond).Run(); code != 1 {
		t.Errorf("a survivor: code %d, want 1", code)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("Main did not end the survivor")
	}
	if left := m.Left(); len(left) != 0 {
		t.Errorf("left after Main: %v", left)
	}
}
