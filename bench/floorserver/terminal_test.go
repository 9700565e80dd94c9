package main

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
)

// TestTerminals opens a shell on a pseudo-terminal, finds it running, and
// closes it: its process is gone afterwards, and closing it again fails.
func TestTerminals(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIPPING: no bash on PATH")
	}
	ts := &terminals{open: map[string]*terminal{}}
	t.Cleanup(ts.closeAll)
	res := ts.create(bash)
	if res.IsError {
		t.Fatalf("create: %v", res.Content)
	}
	id, _ := res.Structured["session_id"].(string)
	pid, _ := res.Structured["pid"].(int)
	if id == "" || pid <= 0 {
		t.Fatalf("create returned %+v", res.Structured)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the shell %d does not run: %v", pid, err)
	}
	if res := ts.close(id); res.IsError {
		t.Fatalf("close: %v", res.Content)
	}
	// Waited for, so reaped: the PID names no process of ours any more.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after close, kill -0 %d = %v, want ESRCH", pid, err)
	}
	if res := ts.close(id); !res.IsError {
		t.Errorf("closing %s twice succeeded", id)
	}
}
