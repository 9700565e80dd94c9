//go:build !linux

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// undumpable does nothing outside Linux: macOS has no PR_SET_DUMPABLE,
// and reading another process's memory there (task_for_pid) already needs
// root or a debugging entitlement.
func undumpable() error { return nil }

// secretsMemFile returns a descriptor that an exec'd image inherits (no
// close-on-exec) on an owner-only temporary file, removed from its
// directory before anything is written to it: without memfd_create, the
// secrets live on an unlinked file rather than in anonymous memory.
func secretsMemFile() (int, error) {
	f, err := os.CreateTemp("", "rigout-secrets-*")
	if err != nil {
		return -1, fmt.Errorf("secrets file: %w", err)
	}
	defer f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return -1, fmt.Errorf("secrets file: %w", err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return -1, fmt.Errorf("secrets file: %w", err)
	}
	// dup(2) clears close-on-exec on the copy.
	return fd, nil
}
