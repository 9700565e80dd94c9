package runstate

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Of returns the identity of the live process pid. A process that does not
// exist (or is a zombie) is an error wrapping fs.ErrNotExist.
func Of(pid int) (Identity, error) {
	if pid <= 0 {
		return Identity{}, fmt.Errorf("runstate: PID %d: %w", pid, fs.ErrNotExist)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Identity{}, fmt.Errorf("runstate: PID %d: %w", pid, err)
	}
	state, start, err := parseStat(string(b))
	if err != nil {
		return Identity{}, fmt.Errorf("runstate: PID %d: %w", pid, err)
	}
	if state == "Z" || state == "X" {
		return Identity{}, fmt.Errorf("runstate: PID %d has exited: %w", pid, fs.ErrNotExist)
	}
	return Identity{PID: pid, StartTime: start, BootID: bootID()}, nil
}

func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}
