package exec

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExited blocks until the process pid has exited, without reaping it,
// so that its pid cannot be reused before the caller stops signalling it.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}
