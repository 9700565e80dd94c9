package exec

import (
	"errors"
	"fmt"
	osexec "os/exec"
	"runtime"
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
	fd := s.rs.fd
	done := make(chan error, 1)
	go func() {
		// This thread is never unlocked: when the goroutine returns, the
		// runtime ends the thread with its Landlock domain.
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- fmt.Errorf("exec: sandbox: no_new_privs: %w", err)
			return
		}
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); errno != 0 {
			done <- fmt.Errorf("exec: sandbox: landlock_restrict_self: %w", errno)
			return
		}
		done <- startCmd(c)
	}()
	if err := <-done; err != nil {
		return false, err
	}
	return true, nil
}

// startCmd wraps Start so that a start error can be told from a sandbox one.
func startCmd(c *osexec.Cmd) error {
	if err := c.Start(); err != nil {
		return &startError{err}
	}
	return nil
}

type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }
