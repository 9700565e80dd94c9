//go:build linux

package validate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// jailEnv carries a jailSpec, as JSON, to the test binary started again
// as the jail of TestBashDifferential (see TestBashDiffJail).
const jailEnv = "RIGOUT_BASHDIFF_JAIL"

// jailSpec is what the jail sets up before it execs Argv.
type jailSpec struct {
	// Writable are the only trees anything in the jail may change
	// (Landlock): the sentinel tree and strace's output directory.
	Writable []string
	// Hide are directories covered by an empty tmpfs, in the jail's own
	// mount namespace: /run, so that no service socket (D-Bus, systemd,
	// docker) is reachable.
	Hide []string
	// Private are directories covered by an empty tmpfs that the command
	// may change: /tmp, so that nothing it does there reaches the
	// machine's /tmp.
	Private []string
	// NProc bounds the processes of the unprivileged user (fork bombs).
	NProc uint64
	// Argv and Env are what the jail runs: strace, which runs setpriv,
	// which runs bash as the unprivileged user.
	Argv []string
	Env  []string
}

// TestBashDiffJail is not a test: TestBashDifferential starts the test
// binary again, as root, inside new mount, network and PID namespaces
// (unshare), with jailEnv set, and this function then covers Hide and
// Private, bounds
// the processes, confines every write to Writable with Landlock (and, from
// ABI 6, scopes signals and abstract sockets to the jail), sets
// no_new_privs and execs Argv. Without jailEnv it does nothing.
func TestBashDiffJail(t *testing.T) {
	raw := os.Getenv(jailEnv)
	if raw == "" {
		return
	}
	var s jailSpec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		fmt.Fprintln(os.Stderr, "bashdiff jail:", err)
		os.Exit(111)
	}
	err := enterJail(s)
	fmt.Fprintln(os.Stderr, "bashdiff jail:", err)
	os.Exit(111)
}

// enterJail returns only on failure. Landlock domains and no_new_privs
// belong to the thread that asks for them, and execve keeps the calling
// thread's credentials: the thread is locked and never given back.
func enterJail(s jailSpec) error {
	runtime.LockOSThread()
	if len(s.Argv) == 0 {
		return errors.New("nothing to run")
	}
	for _, d := range s.Hide {
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=755"); err != nil {
			return fmt.Errorf("cover %s: %w", d, err)
		}
	}
	for _, d := range s.Private {
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64m,mode=1777"); err != nil {
			return fmt.Errorf("cover %s: %w", d, err)
		}
	}
	for res, v := range map[int]uint64{unix.RLIMIT_NPROC: s.NProc, unix.RLIMIT_CORE: 0, unix.RLIMIT_FSIZE: 64 << 20, unix.RLIMIT_CPU: 10} {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", res, err)
		}
	}
	abi := jailLandlockABI()
	if abi < 1 {
		return errors.New("no Landlock")
	}
	handled := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		handled |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		handled |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		handled |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	size := unsafe.Offsetof(attr.Scoped)
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		size += unsafe.Sizeof(attr.Scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	rs := int(fd)
	// Character devices a shell writes to as a matter of course.
	devWrite := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE) | handled&(unix.LANDLOCK_ACCESS_FS_TRUNCATE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	rules := map[string]uint64{"/dev/null": devWrite, "/dev/zero": devWrite, "/dev/full": devWrite, "/dev/tty": devWrite}
	for _, w := range append(s.Writable, s.Private...) {
		rules[w] = handled
	}
	for path, access := range rules {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		if access&^(devWrite) != 0 {
			// A directory rule; a file takes only file rights.
			var st unix.Stat_t
			if err := unix.Fstat(pfd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
				access &= devWrite
			}
		}
		pa := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&pa)), 0, 0, 0)
		unix.Close(pfd)
		if errno != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", path, errno)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	unix.Close(rs)
	// unshare --kill-child set the parent-death signal on the thread it
	// forked, but Go's threads start without it, and execve keeps only
	// the calling thread's: set it again, so that the PID namespace (and
	// whatever the command started) ends when unshare is killed.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("pdeathsig: %w", err)
	}
	return unix.Exec(s.Argv[0], s.Argv, s.Env)
}

// jailLandlockABI is the kernel's Landlock ABI version, 0 without it.
func jailLandlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}
