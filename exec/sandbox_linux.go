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
			return 0, errors.New("disabled at boot: Landlock is not in the kernel's lsm= list")
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
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
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
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
			// Gone since it was listed, or out of the gateway's reach:
			// nothing to grant, the entry keeps its parent's rights.
			return nil
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
	ln, err := s.launcher()
	if err != nil {
		return false, err
	}
	// The command stops at its exec (ptrace), before running a single
	// instruction, until the thread that started it is gone.
	c.SysProcAttr.Ptrace = true
	ln.cmd <- c
	r, err := ln.wait()
	if r.err != nil {
		if c.Process != nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		return false, r.err
	}
	if err != nil {
		_ = c.Process.Kill()
		_ = c.Wait()
		return false, err
	}
	if err := c.Process.Signal(unix.SIGCONT); err != nil {
		_ = c.Wait()
		return false, fmt.Errorf("exec: sandbox: continue the command: %w", err)
	}
	// Confine the thread for the next command while this one runs.
	go s.prepare()
	return true, nil
}

// launcher returns a confined thread for one command built from the
// current ruleset: the one prepared in advance, or a new one. A ruleset
// that was never built (its first build failed) is built now, and the
// command fails if that fails again.
func (s *Sandbox) launcher() (*launcher, error) {
	if err := s.rlockFresh(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	// A prepared thread is confined by the current ruleset: a rebuild
	// or Close, which hold mu, dismiss it.
	s.launchMu.Lock()
	ln := s.next
	s.next = nil
	s.launchMu.Unlock()
	if ln != nil {
		return ln, nil
	}
	return newLauncher(s.rs.fd)
}

// rlockFresh waits for the first ruleset, rebuilds it if a directory it
// enumerated changed, and returns with s.mu held for reading; on an error,
// with nothing held.
func (s *Sandbox) rlockFresh() error {
	s.waitReady() // the first ruleset, built in the background
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrSandboxClosed
	}
	if s.plan.fresh() {
		return nil
	}
	s.mu.RUnlock()
	s.mu.Lock()
	if !s.closed && !s.plan.fresh() {
		if err := s.rebuildLocked(); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Unlock()
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrSandboxClosed
	}
	return nil
}

// prepare confines a thread for the next command, unless one is ready or
// being prepared.
func (s *Sandbox) prepare() {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.launchMu.Lock()
	if s.closed || s.next != nil || s.preparing {
		s.launchMu.Unlock()
		return
	}
	s.preparing = true
	s.launchMu.Unlock()
	ln, err := newLauncher(s.rs.fd)
	s.launchMu.Lock()
	defer s.launchMu.Unlock()
	s.preparing = false
	if err == nil {
		s.next = ln
	}
}

// dismissLocked ends the prepared thread, if any; s.mu is held for
// writing. With wait, it returns once the thread is gone.
func (s *Sandbox) dismissLocked(wait bool) {
	s.launchMu.Lock()
	ln := s.next
	s.next = nil
	s.launchMu.Unlock()
	if ln != nil {
		ln.dismiss(wait)
	}
}

// launchTimeout bounds the wait for a launch thread to end.
const launchTimeout = 2 * time.Second

// launcher is a goroutine locked to a thread of its own, confined by a
// new Landlock domain (see restrictAndStart), that starts one command or
// none and then ends with its thread.
//
// A thread may be confined before its command is known, because nothing
// but that command can ever reach it: its domain is new, made by an
// unconfined thread, so it is nested in no other domain, and Landlock
// lets a process signal (ABI 6) or ptrace only tasks in its own domain or
// in domains nested in it. Commands already running are each in a domain
// of their own and cannot signal or trace the waiting thread; the one
// command started from it is held at its exec until the thread is gone.
type launcher struct {
	// ready receives the outcome of confining the thread.
	ready chan error
	// cmd receives the command to start; closing it ends the thread.
	cmd chan *osexec.Cmd
	// pidfd receives, first thing, a pidfd for the launch thread
	// (pidfd_open PIDFD_THREAD, Linux 6.9), or -1 on older kernels.
	pidfd chan int
	// done receives the outcome just before the thread ends. It and
	// the others are buffered: a send from the thread never has to wake
	// the gateway as the thread ends, which would cost the Go scheduler
	// another thread to run the woken goroutine on.
	done chan launched
}

// newLauncher starts a launcher confined by the ruleset rsfd and waits
// until it is.
func newLauncher(rsfd int) (*launcher, error) {
	ln := &launcher{
		ready: make(chan error, 1),
		cmd:   make(chan *osexec.Cmd),
		pidfd: make(chan int, 1),
		done:  make(chan launched, 1),
	}
	go ln.run(rsfd)
	if err := <-ln.ready; err != nil {
		// The thread has ended or is ending, and holds no command.
		if fd := <-ln.pidfd; fd >= 0 {
			_ = unix.Close(fd)
		}
		return nil, err
	}
	return ln, nil
}

// dismiss ends a launcher that got no command; with wait, it returns once
// its thread is gone.
func (ln *launcher) dismiss(wait bool) {
	close(ln.cmd)
	fd := <-ln.pidfd
	if fd < 0 {
		return
	}
	f := os.NewFile(uintptr(fd), "launch thread")
	if wait {
		_ = waitReadable(f, launchTimeout)
	}
	_ = f.Close()
}

// launched is what restrictAndStart reports: the confined thread's id.
type launched struct {
	tid int
	err error
}

// wait waits until the launch thread is gone and returns its outcome;
// the error says why the thread may still exist. With a pidfd, the
// goroutine sleeps in the runtime's poller until the thread has exited,
// and neither polls nor holds a thread in a blocking system call.
func (ln *launcher) wait() (launched, error) {
	if fd := <-ln.pidfd; fd >= 0 {
		f := os.NewFile(uintptr(fd), "launch thread")
		err := waitReadable(f, launchTimeout)
		_ = f.Close()
		if err != nil {
			return <-ln.done, fmt.Errorf("exec: sandbox: wait for the launch thread: %w", err)
		}
	}
	r := <-ln.done
	if r.err != nil {
		return r, nil
	}
	// A thread's pidfd turns readable as it exits, a moment before it
	// can no longer be found: wait for that too.
	return r, waitThreadGone(r.tid)
}

// waitReadable waits until f, a non-blocking descriptor the runtime
// polls, is readable, for at most timeout.
func waitReadable(f *os.File, timeout time.Duration) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	if err := f.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		if err != nil && !errors.Is(err, unix.EINTR) {
			perr = err
			return true
		}
		return n > 0
	})
	if err != nil {
		return err
	}
	return perr
}

// run locks its goroutine to a thread, confines that thread, and starts
// the command it is given from it. The thread is never unlocked: when the
// goroutine returns, the runtime ends the thread with its Landlock
// domain.
//
// While the thread lives, the command shares its domain and could signal
// it (a signal to any thread can end the gateway). So the command is
// traced: it stops right after exec, the thread detaches it into a
// SIGSTOP and exits, and start sends SIGCONT only once the thread is
// gone.
func (ln *launcher) run(rsfd int) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The main thread cannot be thrown away (the runtime parks it
		// for good), and /proc/<pid> and signals to the process are
		// checked against it: it must never carry a domain. Hold it
		// until another thread has taken over, so that the new
		// goroutine cannot land on it, and confine that thread instead.
		taken := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(taken)
			ln.run(rsfd)
		}()
		<-taken
		runtime.UnlockOSThread()
		return
	}
	// From here on this thread ends when the goroutine returns.
	pidfd, err := unix.PidfdOpen(unix.Gettid(), unix.PIDFD_THREAD|unix.PIDFD_NONBLOCK)
	if err != nil {
		pidfd = -1 // before Linux 6.9: the gateway polls instead
	}
	ln.pidfd <- pidfd
	fail := func(what string, err error) error { return fmt.Errorf("exec: sandbox: %s: %w", what, err) }
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		ln.ready <- fail("no_new_privs", err)
		return
	}
	if err := dropPtraceCap(); err != nil {
		ln.ready <- fail("drop CAP_SYS_PTRACE", err)
		return
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rsfd), 0, 0); errno != 0 {
		ln.ready <- fail("landlock_restrict_self", errno)
		return
	}
	ln.ready <- nil
	c, ok := <-ln.cmd
	if !ok {
		return // dismissed
	}
	if err := c.Start(); err != nil {
		ln.done <- launched{err: err}
		return
	}
	pid := c.Process.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
		ln.done <- launched{err: fail("wait for the exec stop", err)}
		return
	}
	if !ws.Stopped() {
		ln.done <- launched{err: fail("exec stop", fmt.Errorf("command ended before it ran (status %#x)", uint32(ws)))}
		return
	}
	// Detach into a group stop: the command stays stopped after the
	// tracer is gone.
	if _, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(unix.SIGSTOP), 0, 0); errno != 0 {
		ln.done <- launched{err: fail("detach", errno)}
		return
	}
	ln.done <- launched{tid: unix.Gettid()}
}

// waitThreadGone waits until the thread tid of this process no longer
// exists (it can then no longer be signalled) or has been reused by a
// thread without no_new_privs. It is called once the thread is exiting,
// which takes microseconds more: it yields the CPU while it waits, then
// sleeps.
func waitThreadGone(tid int) error {
	pid := unix.Getpid()
	start := time.Now()
	for i := 0; ; i++ {
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
			if time.Since(start) > launchTimeout {
				return errors.New("exec: sandbox: the launch thread did not exit")
			}
		}
		if i < 100 {
			// The exiting thread may need this CPU.
			_, _, _ = unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		} else {
			time.Sleep(50 * time.Microsecond)
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

// noInheritedDescriptors marks every descriptor above standard error
// close-on-exec: descriptors the gateway inherited from whatever started
// it (a shell, a supervisor) never reach a command. The gateway's own are
// close-on-exec already, and files passed on purpose (os/exec's ExtraFiles)
// are duplicated into place in the child, which clears the flag.
func noInheritedDescriptors() { _ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) }
