package runstate

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// szomb is p_stat's value for a zombie (sys/proc.h SZOMB).
const szomb = 5

// Of returns the identity of the live process pid. A process that does not
// exist (or is a zombie) is an error wrapping fs.ErrNotExist.
//
// On macOS the start time is kinfo_proc's p_starttime in microseconds
// since the epoch (sysctl kern.proc.pid), and the boot ID is
// kern.bootsessionuuid.
func Of(pid int) (Identity, error) {
	if pid <= 0 {
		return Identity{}, fmt.Errorf("runstate: PID %d: %w", pid, fs.ErrNotExist)
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		// A PID with no process answers with an empty record, which
		// x/sys reports as EIO.
		return Identity{}, fmt.Errorf("runstate: PID %d: %v: %w", pid, err, fs.ErrNotExist)
	}
	if int(kp.Proc.P_pid) != pid {
		return Identity{}, fmt.Errorf("runstate: PID %d: %w", pid, fs.ErrNotExist)
	}
	if kp.Proc.P_stat == szomb {
		return Identity{}, fmt.Errorf("runstate: PID %d has exited: %w", pid, fs.ErrNotExist)
	}
	tv := kp.Proc.P_starttime
	start := uint64(tv.Sec)*1_000_000 + uint64(tv.Usec)
	return Identity{PID: pid, StartTime: start, BootID: bootID()}, nil
}

func bootID() string {
	s, _ := unix.Sysctl("kern.bootsessionuuid")
	return s
}
