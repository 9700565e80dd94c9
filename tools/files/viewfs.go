package files

import (
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/rigout/rigout/exec"
)

// viewFS is this machine as the calling principal's view shows it: every
// operation runs in its sandbox spawner (exec.ViewFiles), beneath the
// token's roots through os.Root when it has any.
type viewFS struct {
	vf    *exec.ViewFiles
	roots []string
}

// at returns the root holding name, "" without roots.
func (v *viewFS) at(name string) (string, error) {
	if len(v.roots) == 0 {
		return "", nil
	}
	root, ok := rootOf(v.roots, name)
	if !ok {
		return "", &fs.PathError{Op: "open", Path: name, Err: errOutsideRoot}
	}
	return root, nil
}

func (v *viewFS) Open(name string) (openFile, error) {
	return v.openFile(name, os.O_RDONLY, 0)
}

func (v *viewFS) Create(name string, perm fs.FileMode) (openFile, error) {
	return v.openFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
}

func (v *viewFS) openFile(name string, flag int, perm fs.FileMode) (openFile, error) {
	root, err := v.at(name)
	if err != nil {
		return nil, err
	}
	f, err := v.vf.OpenFile(root, name, flag, perm)
	if err != nil {
		return nil, escapes(name, err)
	}
	return f, nil
}

func (v *viewFS) Stat(name string) (fs.FileInfo, error) {
	root, err := v.at(name)
	if err != nil {
		return nil, err
	}
	fi, err := v.vf.Stat(root, name)
	return fi, escapes(name, err)
}

func (v *viewFS) Lstat(name string) (fs.FileInfo, error) {
	root, err := v.at(name)
	if err != nil {
		return nil, err
	}
	fi, err := v.vf.Lstat(root, name)
	return fi, escapes(name, err)
}

func (v *viewFS) ReadDir(name string) ([]fs.FileInfo, error) {
	root, err := v.at(name)
	if err != nil {
		return nil, err
	}
	fis, err := v.vf.ReadDir(root, name)
	return fis, escapes(name, err)
}

func (v *viewFS) Mkdir(name string, perm fs.FileMode) error {
	root, err := v.at(name)
	if err != nil {
		return err
	}
	return escapes(name, v.vf.Mkdir(root, name, perm))
}

func (v *viewFS) Remove(name string) error {
	root, err := v.at(name)
	if err != nil {
		return err
	}
	return escapes(name, v.vf.Remove(root, name))
}

func (v *viewFS) Rename(oldname, newname string) error {
	root, err := v.at(oldname)
	if err != nil {
		return err
	}
	if r2, err := v.at(newname); err != nil {
		return err
	} else if r2 != root {
		return fmt.Errorf("%s and %s are in different file roots: copy, then delete", oldname, newname)
	}
	if root != "" && (oldname == root || newname == root) {
		return fmt.Errorf("a file root itself cannot be renamed or replaced")
	}
	return escapes(oldname, v.vf.Rename(root, oldname, newname))
}

func (v *viewFS) Chmod(name string, mode fs.FileMode) error {
	root, err := v.at(name)
	if err != nil {
		return err
	}
	return escapes(name, v.vf.Chmod(root, name, mode))
}

func (v *viewFS) Chown(name string, uid, gid int) error {
	root, err := v.at(name)
	if err != nil {
		return err
	}
	return escapes(name, v.vf.Chown(root, name, uid, gid))
}

func (v *viewFS) Chtimes(name string, atime, mtime time.Time) error {
	root, err := v.at(name)
	if err != nil {
		return err
	}
	return escapes(name, v.vf.Chtimes(root, name, atime, mtime))
}

func (v *viewFS) Readlink(name string) (string, error) {
	root, err := v.at(name)
	if err != nil {
		return "", err
	}
	link, err := v.vf.Readlink(root, name)
	return link, escapes(name, err)
}

func (v *viewFS) Route() string {
	if len(v.roots) > 0 {
		return "local (view, os.Root)"
	}
	return "local (view)"
}

func (v *viewFS) Close() error { return nil }
