// Package proctest helps tests check that processes are gone.
package proctest

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	var pids []int
	forEachCmdline(func(pid int, args []string) {
		for _, a := range args {
			if a == arg {
				pids = append(pids, pid)
				return
			}
		}
	})
	return pids
}

// WaitWithArg waits until exactly n live processes carry arg (see
// WithArg), and fails the test if that is still not so after timeout: a
// process a test started may not have replaced its forked copy of the
// parent yet, and one it stopped may not have ended yet.
func WaitWithArg(t testing.TB, arg string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for got := len(WithArg(arg)); got != n; got = len(WithArg(arg)) {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes with argument %q after %v, want %d", got, arg, timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
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

// Markers hands out the unique arguments one test binary gives the
// processes it starts ("sleep 1000.<pid><n>"), and finds what is left of
// them when the tests are over. The PID has seven digits (Linux's largest
// pid_max), so one binary's markers are never a prefix of another's.
type Markers struct {
	prefix string
	n      atomic.Int64

	mu    sync.Mutex
	taken map[string]string // marker → the test function that took it
}

// NewMarkers returns the markers of this test binary.
func NewMarkers() *Markers {
	return &Markers{prefix: fmt.Sprintf("1000.%07d", os.Getpid())}
}

// Next returns a new marker: a valid `sleep` duration of about 17 minutes.
func (m *Markers) Next() string {
	mk := m.prefix + strconv.FormatInt(m.n.Add(1), 10)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.taken == nil {
		m.taken = map[string]string{}
	}
	m.taken[mk] = callingTest()
	return mk
}

// callingTest names the Test function on the caller's stack, or "?".
func callingTest() string {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		name := f.Function[strings.LastIndexByte(f.Function, '/')+1:]
		if _, fn, ok := strings.Cut(name, "."); ok && strings.HasPrefix(fn, "Test") {
			return fn
		}
		if !more {
			return "?"
		}
	}
}

// describe says which test took the marker pid carries, and its arguments.
func (m *Markers) describe(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range args {
		// A marker as it is, or with a digit appended ("sleep " + mk + "0").
		for _, mk := range []string{a, a[:max(len(a)-1, 0)]} {
			if test, ok := m.taken[mk]; ok {
				return fmt.Sprintf("PID %d %q, marker taken by %s", pid, args, test)
			}
		}
	}
	return fmt.Sprintf("PID %d %q", pid, args)
}

// Left returns the live processes carrying any marker of this binary.
func (m *Markers) Left() []int {
	var pids []int
	forEachCmdline(func(pid int, args []string) {
		for _, a := range args {
			if strings.HasPrefix(a, m.prefix) {
				pids = append(pids, pid)
				return
			}
		}
	})
	return pids
}

// Main wraps a test binary's testing.M (or goleak's wrapper of it): after
// the tests, every process that carries one of the binary's markers must
// be gone within grace. Any left are ended by PID and the binary fails,
// naming them: every process a test starts ends with it.
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(markers.Main(m, 5*time.Second)) }
func (m *Markers) Main(tm interface{ Run() int }, grace time.Duration) interface{ Run() int } {
	return markersMain{tm: tm, m: m, grace: grace}
}

type markersMain struct {
	tm    interface{ Run() int }
	m     *Markers
	grace time.Duration
}

func (r markersMain) Run() int {
	code := r.tm.Run()
	deadline := time.Now().Add(r.grace)
	left := r.m.Left()
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		left = r.m.Left()
	}
	if len(left) == 0 {
		return code
	}
	fmt.Fprintf(os.Stderr, "FAIL: %d processes a test started outlived the tests %s after they ended (ended now):\n", len(left), r.grace)
	for _, pid := range left {
		fmt.Fprintf(os.Stderr, "\t%s\n", r.m.describe(pid))
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return 1
}

// End ends, by PID, the live processes one of whose arguments is exactly
// arg: for a test that started them and knows they escape what it tests.
func End(arg string) {
	for _, pid := range WithArg(arg) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// forEachCmdline calls f with each live process's arguments (zombies,
// whose command line is empty, are left out).
func forEachCmdline(f func(pid int, args []string)) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		f(pid, strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"))
	}
}
