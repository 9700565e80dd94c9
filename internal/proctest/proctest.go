// Package proctest helps tests check that processes are gone.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// GroupAlive reports whether any live process belongs to process group
// pgid. Zombies — dead processes not yet reaped by their new parent — do
// not count: they run nothing and hold nothing but a PID.
func GroupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces; the
		// fields after it are: state ppid pgrp ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			return true
		}
	}
	return false
}

// WaitGroupGone fails the test if process group pgid still has a live
// process after timeout.
func WaitGroupGone(t testing.TB, pgid int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for GroupAlive(pgid) {
		if time.Now().After(deadline) {
			t.Fatalf("a process of group %d is still running", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WithArg returns the live processes one of whose arguments is exactly
// arg. Tests give their processes a unique argument ("sleep 1000.4711")
// and count survivors with it. Zombies do not count.
func WithArg(arg string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie (which has no command line)
		}
		for a := range strings.SplitSeq(strings.TrimSuffix(string(b), "\x00"), "\x00") {
			if a == arg {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// UsedUIDs returns the real user ids of every process.
func UsedUIDs() map[int]bool {
	used := map[int]bool{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return used
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				for _, f := range strings.Fields(rest) {
					if n, err := strconv.Atoi(f); err == nil {
						used[n] = true
					}
				}
			}
		}
	}
	return used
}

// FreeUID returns a user id in [lo, hi) that no process uses, or -1.
func FreeUID(lo, hi int) int {
	used := UsedUIDs()
	for uid := lo; uid < hi; uid++ {
		if !used[uid] {
			return uid
		}
	}
	return -1
}
