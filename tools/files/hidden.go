package files

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"time"
)

// errHidden means a path leads into a directory the gateway keeps to
// itself, such as its state directory.
var errHidden = errors.New("files: the gateway's own files are not reachable through the file tools")

// hiddenFS refuses names on this machine whose real path lies in one of
// hidden (real paths themselves). Symbolic links are resolved before the
// check; a link swapped between the check and the use by another process
// of this machine is beyond it (the kernel sandbox hides the state
// directory from commands; the file tools run in the gateway itself).
type hiddenFS struct {
	fileSystem
	hidden []string
}

// realPath resolves the symbolic links of p's longest existing prefix.
func realPath(p string) string {
	rest := ""
	for q := p; ; q = path.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return path.Join(filepath.ToSlash(r), rest)
		}
		if q == "/" || q == "." {
			return p
		}
		rest = path.Join(path.Base(q), rest)
	}
}

func (h *hiddenFS) check(names ...string) error {
	for _, n := range names {
		r := realPath(n)
		for _, d := range h.hidden {
			if within(r, d) || within(n, d) {
				return &fs.PathError{Op: "open", Path: n, Err: errHidden}
			}
		}
	}
	return nil
}

func (h *hiddenFS) Open(name string) (openFile, error) {
	if err := h.check(name); err != nil {
		return nil, err
	}
	return h.fileSystem.Open(name)
}

func (h *hiddenFS) Create(name string, perm fs.FileMode) (openFile, error) {
	if err := h.check(name); err != nil {
		return nil, err
	}
	return h.fileSystem.Create(name, perm)
}

func (h *hiddenFS) Stat(name string) (fs.FileInfo, error) {
	if err := h.check(name); err != nil {
		return nil, err
	}
	return h.fileSystem.Stat(name)
}

func (h *hiddenFS) Lstat(name string) (fs.FileInfo, error) {
	if err := h.check(name); err != nil {
		return nil, err
	}
	return h.fileSystem.Lstat(name)
}

func (h *hiddenFS) ReadDir(name string) ([]fs.FileInfo, error) {
	if err := h.check(name); err != nil {
		return nil, err
	}
	return h.fileSystem.ReadDir(name)
}

func (h *hiddenFS) Mkdir(name string, perm fs.FileMode) error {
	if err := h.check(name); err != nil {
		return err
	}
	return h.fileSystem.Mkdir(name, perm)
}

func (h *hiddenFS) Remove(name string) error {
	if err := h.check(name); err != nil {
		return err
	}
	return h.fileSystem.Remove(name)
}

func (h *hiddenFS) Rename(oldname, newname string) error {
	if err := h.check(oldname, newname); err != nil {
		return err
	}
	return h.fileSystem.Rename(oldname, newname)
}

func (h *hiddenFS) Chmod(name string, m fs.FileMode) error {
	if err := h.check(name); err != nil {
		return err
	}
	return h.fileSystem.Chmod(name, m)
}

func (h *hiddenFS) Chown(name string, uid, gid int) error {
	if err := h.check(name); err != nil {
		return err
	}
	return h.fileSystem.Chown(name, uid, gid)
}

func (h *hiddenFS) Chtimes(name string, a, m time.Time) error {
	if err := h.check(name); err != nil {
		return err
	}
	return h.fileSystem.Chtimes(name, a, m)
}

func (h *hiddenFS) Readlink(name string) (string, error) {
	if err := h.check(name); err != nil {
		return "", err
	}
	return h.fileSystem.Readlink(name)
}
