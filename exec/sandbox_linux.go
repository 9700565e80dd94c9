package exec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockABI asks the kernel for its Landlock ABI version. 0 means no
// Landlock (not built in, or disabled at boot), with the reason.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		switch errno {
		case unix.ENOSYS:
			return 0, errors.New("kernel built without Landlock")
		case unix.EOPNOTSUPP:
			return 0, errors.New("Landlock disabled at boot (lsm=)")
		}
		return 0, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	return int(v), nil
}

// ruleset is a Landlock ruleset file descriptor; 0 means none.
type ruleset struct{ fd int }

func (r *ruleset) close() error {
	if r.fd <= 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = 0
	return err
}

// buildRuleset creates a ruleset handling every file system right of abi,
// scoping signals from ABI 6, and adds p's rules.
func buildRuleset(abi int, p *sandboxPlan) (ruleset, error) {
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledAccess(abi)}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL
	}
	// The kernel reads only as much of the struct as the size says; the
	// fields after Scoped are for newer kernels than ABI 6's.
	size := unsafe.Offsetof(attr.Scoped)
	if abi >= 6 {
		size += unsafe.Sizeof(attr.Scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return ruleset{}, fmt.Errorf("exec: sandbox: landlock_create_ruleset: %w", errno)
	}
	rs := ruleset{fd: int(fd)}
	for _, r := range p.rules {
		if err := addPathRule(rs.fd, r); err != nil {
			_ = rs.close()
			return ruleset{}, err
		}
	}
	return rs, nil
}

func addPathRule(rsfd int, r sandboxRule) error {
	fd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // gone since it was listed: nothing to grant
		}
		return fmt.Errorf("exec: sandbox: open %s: %w", r.path, err)
	}
	defer unix.Close(fd)
	attr := unix.LandlockPathBeneathAttr{Allowed_access: r.access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rsfd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("exec: sandbox: landlock_add_rule %s: %w", r.path, errno)
	}
	return nil
}

// start starts c inside a new Landlock domain built from s's ruleset,
// rebuilding the ruleset first if a directory it enumerated changed. See
// Sandbox for why a locked, discarded thread is enough. It reports
// enforced false with no error when the kernel has no Landlock.
func (s *Sandbox) start(c *osexec.Cmd) (enforced bool, err error) {
	if s.abi == 0 {
		return false, c.Start()
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return false, ErrSandboxClosed
	}
	if !s.plan.fresh() {
		s.mu.RUnlock()
		s.mu.Lock()
		if !s.closed && !s.plan.fresh() {
			if err := s.rebuildLocked(); err != nil {
				s.mu.Unlock()
				return false, err
			}
		}
		s.mu.Unlock()
		s.mu.RLock()
		if s.closed {
			s.mu.RUnlock()
			return false, ErrSandboxClosed
		}
	}
	defer s.mu.RUnlock()
	// The command stops at its exec (ptrace), before running a single
	// instruction, until the thread that started it is gone.
	c.SysProcAttr.Ptrace = true
	done := make(chan launched, 1)
	go restrictAndStart(s.rs.fd, c, done)
	r := <-done
	if r.err != nil {
		if c.Process != nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		return false, r.err
	}
	if err := waitThreadGone(r.tid); err != nil {
		_ = c.Process.Kill()
		_ = c.Wait()
		return false, err
	}
	if err := c.Process.Signal(unix.SIGCONT); err != nil {
		_ = c.Wait()
		return false, fmt.Errorf("exec: sandbox: continue the command: %w", err)
	}
	return true, nil
}

// launched is what restrictAndStart reports: the confined thread's id.
type launched struct {
	tid int
	err error
}

// restrictAndStart locks its goroutine to a thread, confines that thread
// and starts c from it. The thread is never unlocked: when the goroutine
// returns, the runtime ends the thread with its Landlock domain.
//
// While the thread lives, the command shares its domain and could signal
// it (a signal to any thread can end the gateway). So c is traced: it
// stops right after exec, the thread detaches it into a SIGSTOP and
// exits, and start sends SIGCONT only once the thread is gone.
func restrictAndStart(rsfd int, c *osexec.Cmd, done chan<- launched) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The main thread cannot be thrown away (the runtime parks it
		// for good), and /proc/<pid> and signals to the process are
		// checked against it: it must never carry a domain. Hold it, so
		// that another goroutine cannot run on it, and confine another
		// thread instead.
		inner := make(chan launched, 1)
		go restrictAndStart(rsfd, c, inner)
		r := <-inner
		runtime.UnlockOSThread()
		done <- r
		return
	}
	fail := func(what string, err error) { done <- launched{err: fmt.Errorf("exec: sandbox: %s: %w", what, err)} }
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("no_new_privs", err)
		return
	}
	if err := dropPtraceCap(); err != nil {
		fail("drop CAP_SYS_PTRACE", err)
		return
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rsfd), 0, 0); errno != 0 {
		fail("landlock_restrict_self", errno)
		return
	}
	if err := c.Start(); err != nil {
		done <- launched{err: err}
		return
	}
	pid := c.Process.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
		fail("wait for the exec stop", err)
		return
	}
	if !ws.Stopped() {
		fail("exec stop", fmt.Errorf("command ended before it ran (status %#x)", uint32(ws)))
		return
	}
	// Detach into a group stop: the command stays stopped after the
	// tracer is gone.
	if _, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(unix.SIGSTOP), 0, 0); errno != 0 {
		fail("detach", errno)
		return
	}
	done <- launched{tid: unix.Gettid()}
}

// waitThreadGone waits until the thread tid of this process no longer
// exists (it can then no longer be signalled) or has been reused by a
// thread without no_new_privs.
func waitThreadGone(tid int) error {
	pid := unix.Getpid()
	start := time.Now()
	for delay := time.Duration(0); ; delay = min(2*delay+5*time.Microsecond, time.Millisecond) {
		err := unix.Tgkill(pid, tid, 0)
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("exec: sandbox: wait for the launch thread: %w", err)
		}
		if time.Since(start) > 5*time.Millisecond {
			b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
			if err == nil && !bytes.Contains(b, []byte("NoNewPrivs:\t1")) {
				return nil // the id was reused by a clean thread
			}
			if time.Since(start) > 2*time.Second {
				return errors.New("exec: sandbox: the launch thread did not exit")
			}
		}
		if delay == 0 {
			runtime.Gosched()
		} else {
			time.Sleep(delay)
		}
	}
}

// dropPtraceCap removes CAP_SYS_PTRACE from this thread's bounding,
// effective, permitted and inheritable sets, so that a command running as
// root cannot get past the gateway being non-dumpable (see protectProcess).
// Only the calling thread changes: capset acts on one thread.
func dropPtraceCap() error {
	if in, _ := unix.PrctlRetInt(unix.PR_CAPBSET_READ, unix.CAP_SYS_PTRACE, 0, 0, 0); in == 1 {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_PTRACE, 0, 0, 0); err != nil && !errors.Is(err, unix.EPERM) {
			return err
		}
		// EPERM: no CAP_SETPCAP, so not root either; exec under
		// no_new_privs cannot grant the capability.
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	const bit = uint32(1) << unix.CAP_SYS_PTRACE
	if (data[0].Effective|data[0].Permitted|data[0].Inheritable)&bit == 0 {
		return nil
	}
	data[0].Effective &^= bit
	data[0].Permitted &^= bit
	data[0].Inheritable &^= bit
	return unix.Capset(&hdr, &data[0])
}

// protectProcess makes the gateway process non-dumpable. Landlock denies
// ptrace and /proc/<pid>/mem, cwd and root of processes outside the
// domain, but on kernels seen here (6.18) not /proc/<pid>/environ and
// maps; a non-dumpable process's /proc files belong to root and need
// CAP_SYS_PTRACE, which sandboxed commands do not have.
func protectProcess() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
