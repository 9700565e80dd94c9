package main

import (
	"fmt"
	"os"
	osexec "os/exec"
	"slices"
	"strconv"
	"testing"
)

// TestDescendants finds a grandchild (sleep under sh) of this process, and
// nothing of it once it has exited.
func TestDescendants(t *testing.T) {
	sh, err := osexec.LookPath("sh")
	if err != nil {
		t.Skip("SKIPPING: no sh on PATH")
	}
	cmd := osexec.Command(sh, "-c", "sleep 30 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		t.Fatal(err)
	}
	got := descendants(os.Getpid())
	if !slices.Contains(got, cmd.Process.Pid) || !slices.Contains(got, pid) {
		t.Errorf("descendants = %v, want the shell %d and its sleep %d", got, cmd.Process.Pid, pid)
	}
	if err := osexec.Command("kill", "-TERM", strconv.Itoa(pid)).Run(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := descendants(os.Getpid()); slices.Contains(got, pid) || slices.Contains(got, cmd.Process.Pid) {
		t.Errorf("after exit, descendants = %v still lists %d or %d", got, cmd.Process.Pid, pid)
	}
}
