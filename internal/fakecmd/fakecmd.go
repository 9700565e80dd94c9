// Package fakecmd writes recording fakes of command-line programs for
// tests: shell scripts that append their argv to a file and run nothing,
// put first on PATH (locally, or on an SSH host through sshd's SetEnv) so
// a test sees exactly what a tool would have run, and a mistake harms
// nothing. It is for tests only.
package fakecmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dir is a directory of fakes and the record of their calls.
type Dir struct {
	// Path is the directory to put first on PATH.
	Path string
}

// New returns an empty directory of fakes.
func New(t testing.TB) *Dir {
	t.Helper()
	d := t.TempDir()
	// Readable by the unprivileged users some tests run as.
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return &Dir{Path: d}
}

// Add writes a fake named name. It records its argv (argv[0] as the bare
// name), prints "NAME 0.0-fake" for --version, prints stdout, and exits
// with code.
func (d *Dir) Add(t testing.TB, name, stdout string, code int) {
	t.Helper()
	out := filepath.Join(d.Path, name+".stdout")
	if err := os.WriteFile(out, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/sh
{ printf '%%s\0' %s "$@"; printf '\036\0'; } >> '%s'
if [ "$1" = --version ]; then echo '%s 0.0-fake'; exit 0; fi
cat '%s'
exit %d
`, name, filepath.Join(d.Path, "calls"), name, out, code)
	if err := os.WriteFile(filepath.Join(d.Path, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Remove deletes the fake named name.
func (d *Dir) Remove(t testing.TB, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(d.Path, name)); err != nil {
		t.Fatal(err)
	}
}

// Calls returns every recorded argv, oldest first.
func (d *Dir) Calls(t testing.TB) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.Path, "calls"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	var cur []string
	for _, f := range bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0}) {
		if string(f) == "\036" {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, string(f))
	}
	return out
}

// Last returns the last recorded argv that is not a --version probe,
// joined by spaces (for messages), or "".
func (d *Dir) Last(t testing.TB) []string {
	t.Helper()
	calls := d.Calls(t)
	for i := len(calls) - 1; i >= 0; i-- {
		if len(calls[i]) != 2 || calls[i][1] != "--version" {
			return calls[i]
		}
	}
	return nil
}

// Reset forgets the recorded calls.
func (d *Dir) Reset(t testing.TB) {
	t.Helper()
	if err := os.Remove(filepath.Join(d.Path, "calls")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// Join renders an argv for messages.
func Join(argv []string) string { return strings.Join(argv, " ") }

// Link puts a real program into the directory under its own name, for a
// PATH that holds only the fakes and the programs a test names.
func (d *Dir) Link(t testing.TB, name, target string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(d.Path, name)); err != nil {
		t.Fatal(err)
	}
}

// Clear removes every fake, link and recorded call.
func (d *Dir) Clear(t testing.TB) {
	t.Helper()
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(d.Path, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}
