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

func (v *ViewFiles) OpenFile(root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	return nil, ErrNoViews
}
func (v *ViewFiles) Stat(root, name string) (fs.FileInfo, error)             { return nil, ErrNoViews }
func (v *ViewFiles) Lstat(root, name string) (fs.FileInfo, error)            { return nil, ErrNoViews }
func (v *ViewFiles) ReadDir(root, name string) ([]fs.FileInfo, error)        { return nil, ErrNoViews }
func (v *ViewFiles) Mkdir(root, name string, perm fs.FileMode) error         { return ErrNoViews }
func (v *ViewFiles) Remove(root, name string) error                          { return ErrNoViews }
func (v *ViewFiles) Rename(root, oldname, newname string) error              { return ErrNoViews }
func (v *ViewFiles) Chmod(root, name string, mode fs.FileMode) error         { return ErrNoViews }
func (v *ViewFiles) Chown(root, name string, uid, gid int) error             { return ErrNoViews }
func (v *ViewFiles) Chtimes(root, name string, atime, mtime time.Time) error { return ErrNoViews }
func (v *ViewFiles) Readlink(root, name string) (string, error)              { return "", ErrNoViews }

type spawner struct{}
