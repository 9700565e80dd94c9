//go:build !linux

package exec

import (
	"context"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// ServeSandboxSpawner returns at once: views are Linux only.
func ServeSandboxSpawner() {}

type viewSet struct{}

func newViewSet(ViewConfig) *viewSet { return nil }

func (v *viewSet) available() error { return errNoViews }
func (v *viewSet) limits() string   { return "" }

func (v *viewSet) close() {}

type spawnRequest struct {
	path           string
	argv, env      []string
	dir            string
	tty            *os.File
	pty            *PTYSize
	stdin          io.Reader
	stdout, stderr io.Writer
	ruleset        int
	hold           func() error
}

type nsChild struct {
	pid    int
	master *os.File
}

func (c *nsChild) wait(time.Duration) syscall.WaitStatus { return 0 }

func (s *Sandbox) spawnInView(context.Context, spawnRequest) (*nsChild, error) {
	return nil, errNoViews
}

// Files fails with ErrNoViews: views are Linux only.
func (s *Sandbox) Files(context.Context) (*ViewFiles, error) { return nil, ErrNoViews }

// OpenFile fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) OpenFile(root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	return nil, ErrNoViews
}

// Stat fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Stat(root, name string) (fs.FileInfo, error) { return nil, ErrNoViews }

// Lstat fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Lstat(root, name string) (fs.FileInfo, error) { return nil, ErrNoViews }

// ReadDir fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) ReadDir(root, name string) ([]fs.FileInfo, error) { return nil, ErrNoViews }

// Mkdir fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Mkdir(root, name string, perm fs.FileMode) error { return ErrNoViews }

// Remove fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Remove(root, name string) error { return ErrNoViews }

// Rename fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Rename(root, oldname, newname string) error { return ErrNoViews }

// Chmod fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Chmod(root, name string, mode fs.FileMode) error { return ErrNoViews }

// Chown fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Chown(root, name string, uid, gid int) error { return ErrNoViews }

// Chtimes fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Chtimes(root, name string, atime, mtime time.Time) error { return ErrNoViews }

// Readlink fails with ErrNoViews: views are Linux only.
func (v *ViewFiles) Readlink(root, name string) (string, error) { return "", ErrNoViews }

type spawner struct{}
