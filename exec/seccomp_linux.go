package exec

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompArch is the audit architecture of the running program, and 0 on
// architectures the filter does not know (it is then not installed, and
// SandboxStatus says so).
func seccompArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// deniedSyscalls are what a command never needs and a sandbox escape
// often does: mounting and the new mount API, namespaces, BPF, perf
// events, keyrings, userfaultfd, kernel modules and kexec, file handles
// (open_by_handle_at reaches files outside the view), swap, reboot,
// accounting, quotas and the kernel log. They fail with EPERM.
func deniedSyscalls() []uintptr {
	return []uintptr{
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
		unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
		unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_MOUNT_SETATTR,
		unix.SYS_UNSHARE, unix.SYS_SETNS,
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
		unix.SYS_USERFAULTFD,
		unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
		unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
		unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
		unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_ACCT,
		unix.SYS_QUOTACTL, unix.SYS_SYSLOG,
	}
}

// namespaceFlags are the clone flags that make a namespace a command could
// gain capabilities in (a user namespace) or use them in. CLONE_NEWPID is
// left out: the spawner's own clone of each command uses it, and without
// capabilities a command cannot.
const namespaceFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// seccompFilter returns the classic BPF program of the commands' filter:
// another architecture than the program's (32-bit x86 on amd64, say) is
// refused whole, as are x32 system calls; deniedSyscalls fail with EPERM;
// clone with a namespace flag fails with EPERM; clone3 fails with ENOSYS
// (its flags lie in memory the filter cannot read, and libc then falls
// back to clone). Nil when the architecture is unknown.
func seccompFilter() []unix.SockFilter {
	arch := seccompArch()
	if arch == 0 {
		return nil
	}
	const (
		ldW   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		nrOff = 0
		arOff = 4
		a0Off = 16 // args[0], low 32 bits on little-endian machines
	)
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	enosys := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	var p []unix.SockFilter
	p = append(p,
		stmt(ldW, arOff),
		jump(jeq, arch, 1, 0),
		stmt(ret, eperm),
		stmt(ldW, nrOff),
	)
	if runtime.GOARCH == "amd64" {
		p = append(p, jump(jge, 0x40000000, 0, 1), stmt(ret, eperm)) // x32
	}
	for _, nr := range deniedSyscalls() {
		p = append(p, jump(jeq, uint32(nr), 0, 1), stmt(ret, eperm))
	}
	p = append(p,
		jump(jeq, uint32(unix.SYS_CLONE3), 0, 1), stmt(ret, enosys),
		jump(jeq, uint32(unix.SYS_CLONE), 0, 3),
		stmt(ldW, a0Off),
		jump(jset, namespaceFlags, 0, 1),
		stmt(ret, eperm),
		stmt(ret, allow),
	)
	return p
}

// installSeccomp installs filter on the calling thread only (no TSYNC):
// the thread must already have no_new_privs.
func installSeccomp(filter []unix.SockFilter) error {
	if len(filter) == 0 {
		return nil
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return errno
	}
	return nil
}
