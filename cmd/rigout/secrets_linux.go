package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// undumpable marks the process not dumpable, so that other processes of
// the same user cannot read its memory or environment through /proc.
func undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	return nil
}

// secretsMemFile returns a descriptor on an anonymous memory file that an
// exec'd image inherits (no close-on-exec).
func secretsMemFile() (int, error) {
	fd, err := unix.MemfdCreate("rigout-secrets", 0)
	if err != nil {
		return -1, fmt.Errorf("memfd: %w", err)
	}
	return fd, nil
}
