// Package statedir finds and creates rigout's per-user state directory, the
// home of the audit ledger, the connection file and rigout's own known_hosts.
//
// Resolution order (Rigout's): the --state-dir flag, then RIGOUT_STATE_DIR,
// then $XDG_STATE_HOME/rigout, then ~/.local/state/rigout — except for
// root, whose default is /var/lib/rigout (a system daemon's place, and one
// the kernel sandbox can hide from commands, which it cannot do under a
// home directory) unless ~/.local/state/rigout already exists.
package statedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rigout/rigout/internal/shellquote"
)

// EnvVar names the environment variable that overrides the default.
const EnvVar = "RIGOUT_STATE_DIR"

// Resolve returns the state directory for the given flag value, reading the
// environment through getenv (os.Getenv when nil). It does not create it.
func Resolve(flagValue string, getenv func(string) string) (string, error) {
	return resolve(flagValue, getenv, os.Geteuid(), func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
}

// SystemDir is root's default state directory.
const SystemDir = "/var/lib/rigout"

func resolve(flagValue string, getenv func(string) string, euid int, exists func(string) bool) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	if v := getenv(EnvVar); v != "" {
		return filepath.Abs(v)
	}
	if v := getenv("XDG_STATE_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "rigout"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("statedir: no home directory: %w", err)
		}
		home = h
	}
	user := filepath.Join(home, ".local", "state", "rigout")
	if euid == 0 && !exists(user) {
		return SystemDir, nil
	}
	return user, nil
}

// Ensure creates dir with mode 0700 if it does not exist. An existing
// directory is never chmodded; it is an error if dir is not a directory.
// It reports whether group or others can reach an existing directory, so the
// caller can warn.
func Ensure(dir string) (groupOrOtherAccess bool, err error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("statedir: create %s: %w", dir, err)
		}
		// MkdirAll is subject to the umask; state must be owner-only.
		if err := os.Chmod(dir, 0o700); err != nil {
			return false, fmt.Errorf("statedir: chmod %s: %w", dir, err)
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("statedir: %w", err)
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("statedir: %s is not a directory", dir)
	}
	return fi.Mode().Perm()&0o077 != 0, nil
}

// Flag is " --state-dir DIR" (DIR quoted for a shell) for a command rigout
// prints for the operator to run, or "" when dir is the default one, so
// the printed command reads as the operator would type it. getenv is as
// in Resolve.
func Flag(dir string, getenv func(string) string) string {
	if def, err := Resolve("", getenv); err == nil && def == dir {
		return ""
	}
	return " --state-dir " + shellquote.Quote(dir)
}
