package exec

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// attach prepares c to start in a new call cgroup, if l uses them. call,
// if not empty, is the call's ID (see WithCall), which names the cgroup.
func (l *Local) attach(c *osexec.Cmd, call string) *callCgroup {
	if l.LeaveDescendants {
		return nil
	}
	base, err := l.cgroupBase()
	if err != nil {
		return nil
	}
	cg, err := newCallCgroup(base, call)
	if err != nil {
		l.disableCgroups(err)
		return nil
	}
	c.SysProcAttr.UseCgroupFD = true
	c.SysProcAttr.CgroupFD = cg.fd
	return cg
}

// cgroupBase finds the cgroup v2 directory of this process and creates
// the directory for its call cgroups beneath it, rigout.<pid>.<start> (the
// process's start time in clock ticks since boot, so that a later process
// with the same PID is told apart), shared by every Local of the process.
// Call cgroups are named call-<call ID>.<random> (call-<random> without a
// call ID). Empty left-overs of gateways that are gone are removed on the
// way.
func cgroupBase() (string, error) {
	parent, err := cgroupParent()
	if err != nil {
		return "", err
	}
	sweepCgroups(parent)
	start, ok := procStart(os.Getpid())
	if !ok {
		return "", errors.New("cannot read this process's start time")
	}
	base := filepath.Join(parent, baseName(GatewayProcess{PID: os.Getpid(), StartTime: start}))
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("create %s: %w", base, err)
	}
	return base, nil
}

// cgroupParent is the cgroup v2 directory of this process, where the
// bases of the call cgroups are.
func cgroupParent() (string, error) {
	mnt, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	own, err := ownCgroup()
	if err != nil {
		return "", err
	}
	return filepath.Join(mnt, own), nil
}

// baseName is the name of gateway g's directory of call cgroups.
func baseName(g GatewayProcess) string {
	return fmt.Sprintf("rigout.%d.%d", g.PID, g.StartTime)
}

// sweepCgroups removes the empty call cgroups and bases that gateways no
// longer running left in parent. A cgroup that still holds a process
// cannot be removed and stays (EndLeftovers ends those of the calls a
// ledger names).
func sweepCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "rigout.")
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, startStr, _ := strings.Cut(rest, ".")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 {
			continue // not ours to judge
		}
		start, err := strconv.ParseUint(startStr, 10, 64)
		if err != nil { // rigout.<pid>, of an older build: gone when no such PID
			if syscall.Kill(pid, 0) != syscall.ESRCH {
				continue
			}
		} else if !gatewayGone(GatewayProcess{PID: pid, StartTime: start}) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		calls, _ := os.ReadDir(dir)
		for _, c := range calls {
			if c.IsDir() {
				_ = os.Remove(filepath.Join(dir, c.Name()))
			}
		}
		_ = os.Remove(dir)
	}
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) >= 5 && len(qf) >= 1 && qf[0] == "cgroup2" && pf[3] == "/" {
			return unescapeMount(pf[4]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroup returns this process's cgroup v2 path ("0::/path").
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("not in a cgroup v2 hierarchy")
}

// callCgroup is one call's cgroup: every process the command starts is
// in it, whatever it does with sessions and process groups.
type callCgroup struct {
	dir string
	fd  int
}

// newCallCgroup creates a cgroup for one command under base, named for
// call when it is not empty.
func newCallCgroup(base, call string) (*callCgroup, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "call-" + hex.EncodeToString(b[:])
	if call != "" {
		name = "call-" + call + "." + hex.EncodeToString(b[:])
	}
	dir := filepath.Join(base, name)
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrNotExist) {
		// The base was swept away (by hand, or by a gateway that
		// reused this process id): make it again.
		if err = os.Mkdir(base, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			err = os.Mkdir(dir, 0o755)
		}
	}
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return &callCgroup{dir: dir, fd: fd}, nil
}

// pids returns the processes in the cgroup.
func (g *callCgroup) pids() []int {
	b, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for f := range strings.FieldsSeq(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// signal sends sig to every process in the cgroup, never to the gateway
// itself (see reclaim).
func (g *callCgroup) signal(sig syscall.Signal) {
	self := os.Getpid()
	for _, pid := range g.pids() {
		if pid != self {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// reclaim moves the gateway back to the cgroup it came from when a
// command moved it into the call's cgroup (a command with write access to
// a delegated cgroup tree can): the call's end would otherwise kill the
// gateway with it. It reports whether the gateway was in the cgroup.
func (g *callCgroup) reclaim() bool {
	self := os.Getpid()
	for _, pid := range g.pids() {
		if pid == self {
			// dir is <own cgroup>/rigout.<pid>/call-…: two levels up.
			home := filepath.Dir(filepath.Dir(g.dir))
			_ = os.WriteFile(filepath.Join(home, "cgroup.procs"), []byte(strconv.Itoa(self)), 0)
			return true
		}
	}
	return false
}

// kill ends every process in the cgroup and waits, up to wait, until it
// is empty. It uses cgroup.kill (Linux 5.14), which also reaches
// processes forked while it runs, else SIGKILL to each member until none
// is left.
func (g *callCgroup) kill(wait time.Duration) {
	// cgroup.kill would end the gateway too if a command moved it here and
	// it could not be moved back: then each member but the gateway.
	// Two tries: a command may move the gateway back in between.
	stuck := g.reclaim()
	stuck = stuck && g.reclaim()
	haveKill := !stuck && os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0) == nil
	deadline := time.Now().Add(wait)
	for delay := 50 * time.Microsecond; g.populated(); delay = min(2*delay, 10*time.Millisecond) {
		if !haveKill {
			g.signal(syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(delay)
	}
}

// populated reports whether a process is still in the cgroup.
func (g *callCgroup) populated() bool {
	b, err := os.ReadFile(filepath.Join(g.dir, "cgroup.events"))
	if err != nil {
		return len(g.pids()) > 0
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// closeWhenEmpty removes the cgroup, trying again for up to wait while
// the kernel still counts a process that has just been killed (rmdir
// fails with EBUSY until its exit is complete).
func (g *callCgroup) closeWhenEmpty(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		err := g.close()
		if err == nil || !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
	}
}

// close removes the cgroup; it must be empty by then. The descriptor is
// closed once, even when removal fails and close is called again. It is
// rmdir itself: os.Remove would first try, and fail, to unlink the
// directory, a second path walk on every call.
func (g *callCgroup) close() error {
	if g.fd >= 0 {
		_ = unix.Close(g.fd)
		g.fd = -1
	}
	if err := unix.Rmdir(g.dir); err != nil {
		return &os.PathError{Op: "rmdir", Path: g.dir, Err: err}
	}
	return nil
}

// callProcs returns the live processes, other than this one, started at
// or after since (clock ticks since boot) that belong to a call: members
// of its process group pgid, or holders of marker ("NAME=value") in their
// environment. unsure is true when some such process showed no
// environment, as one does for a moment in the middle of an exec: a
// caller should look again.
func callProcs(marker string, pgid int, since uint64) (pids []int, unsure bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	want := []byte("\x00" + marker + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, ok := procStat(pid)
		if !ok || st.start < since || st.kernel {
			continue
		}
		if st.pgrp == pgid {
			pids = append(pids, pid)
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || len(env) == 0 {
			// Empty without an error: mid-exec (or a cleared environment,
			// which costs only the extra rounds).
			unsure = unsure || err == nil
			continue
		}
		env = append(append([]byte{0}, env...), 0)
		if bytes.Contains(env, want) {
			pids = append(pids, pid)
		}
	}
	return pids, unsure
}

// procInfo is what callProcs needs of a process's /proc stat line.
type procInfo struct {
	start  uint64 // clock ticks since boot
	pgrp   int
	kernel bool // a kernel thread, which has no environment
}

// procStart returns the start time of a live process (clock ticks since
// boot); ok is false for zombies and processes that are gone.
func procStart(pid int) (start uint64, ok bool) {
	st, ok := procStat(pid)
	return st.start, ok
}

// procStat reads a live process's stat line; ok is false for zombies and
// processes that are gone.
func procStat(pid int) (st procInfo, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return st, false
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime: pgrp is the 3rd field after comm, flags the
	// 7th, starttime the 20th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return st, false
	}
	const pfKthread = 0x00200000
	pgrp, err1 := strconv.Atoi(f[2])
	flags, err2 := strconv.ParseUint(f[6], 10, 64)
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return st, false
	}
	return procInfo{start: start, pgrp: pgrp, kernel: flags&pfKthread != 0}, true
}

// catches reports whether process pid has a handler for sig (SigCgt in
// its /proc status); false when that cannot be read.
func catches(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}
