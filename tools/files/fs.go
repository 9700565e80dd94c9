package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/sftp"
)

// errOutsideRoot means a path, once its symbolic links were followed,
// would leave the token's file roots.
var errOutsideRoot = errors.New("files: outside the file roots")

// fileSystem is one place files live: this machine (through package os, confined
// by os.Root when the token has roots) or an SSH host (through SFTP,
// confined by resolving every component on the server). Every name is an
// absolute slash-separated path. A fileSystem is used by one call at a time.
type fileSystem interface {
	// Open opens a file for reading.
	Open(name string) (openFile, error)
	// Create creates a new file for writing; it fails if name exists.
	Create(name string, perm fs.FileMode) (openFile, error)
	// Stat and Lstat are as in package os.
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	// ReadDir lists a directory, unsorted.
	ReadDir(name string) ([]fs.FileInfo, error)
	// Mkdir creates one directory.
	Mkdir(name string, perm fs.FileMode) error
	// Remove removes a file, a symbolic link or an empty directory.
	Remove(name string) error
	// Rename renames oldname to newname, replacing newname atomically.
	Rename(oldname, newname string) error
	// Chmod and Chown change a file's mode and owner.
	Chmod(name string, mode fs.FileMode) error
	Chown(name string, uid, gid int) error
	// Chtimes sets a file's access and modification times.
	Chtimes(name string, atime, mtime time.Time) error
	// Readlink returns a symbolic link's target.
	Readlink(name string) (string, error)
	// Route says where the files are: "local", "local (os.Root)",
	// "ssh(web1 → …) sftp".
	Route() string
	// Close releases what the file system holds (root handles, the SFTP lease).
	Close() error
}

// openFile is an open file of a fileSystem.
type openFile interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Seeker
	io.Closer
	Stat() (fs.FileInfo, error)
	// Sync flushes the file to stable storage (fsync; over SFTP the
	// fsync@openssh.com extension, where the server has it).
	Sync() error
}

// owner returns a file's uid and gid, or -1 when unknown.
func owner(fi fs.FileInfo) (uid, gid int) {
	switch s := fi.Sys().(type) {
	case *syscall.Stat_t:
		return int(s.Uid), int(s.Gid)
	case *sftp.FileStat:
		return int(s.UID), int(s.GID)
	}
	return -1, -1
}

// within reports whether p is r or below it, on a separator boundary.
func within(p, r string) bool {
	return p == r || r == "/" || strings.HasPrefix(p, r+"/")
}

// rootOf returns the longest of roots that contains p lexically.
func rootOf(roots []string, p string) (string, bool) {
	best, ok := "", false
	for _, r := range roots {
		if within(p, r) && len(r) >= len(best) {
			best, ok = r, true
		}
	}
	return best, ok
}

// relTo returns p relative to root r ("." for r itself).
func relTo(p, r string) string {
	if p == r {
		return "."
	}
	if r == "/" {
		return strings.TrimPrefix(p, "/")
	}
	return strings.TrimPrefix(p, r+"/")
}

// osFS is this machine without confinement.
type osFS struct{}

func (osFS) Open(name string) (openFile, error) { return os.Open(name) }
func (osFS) Create(name string, perm fs.FileMode) (openFile, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
}
func (osFS) Stat(name string) (fs.FileInfo, error)  { return os.Stat(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) ReadDir(name string) ([]fs.FileInfo, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdir(-1)
}
func (osFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }
func (osFS) Remove(name string) error                  { return os.Remove(name) }
func (osFS) Rename(o, n string) error                  { return os.Rename(o, n) }
func (osFS) Chmod(name string, m fs.FileMode) error    { return os.Chmod(name, m) }
func (osFS) Chown(name string, uid, gid int) error     { return os.Chown(name, uid, gid) }
func (osFS) Readlink(name string) (string, error)      { return os.Readlink(name) }
func (osFS) Chtimes(name string, a, m time.Time) error { return os.Chtimes(name, a, m) }
func (osFS) Route() string                             { return "local" }
func (osFS) Close() error                              { return nil }

// rootFS is this machine confined to roots through os.Root: the kernel
// resolves each name beneath the root's directory handle, so a symbolic
// link (or a directory swapped for one) cannot lead out of it.
type rootFS struct {
	roots []string
	open  map[string]*os.Root
}

func newRootFS(roots []string) *rootFS {
	return &rootFS{roots: roots, open: map[string]*os.Root{}}
}

// at returns the root holding name and name relative to it.
func (r *rootFS) at(name string) (*os.Root, string, error) {
	root, ok := rootOf(r.roots, name)
	if !ok {
		return nil, "", &fs.PathError{Op: "open", Path: name, Err: errOutsideRoot}
	}
	h := r.open[root]
	if h == nil {
		var err error
		if h, err = os.OpenRoot(root); err != nil {
			return nil, "", fmt.Errorf("file root %s: %w", root, err)
		}
		r.open[root] = h
	}
	return h, relTo(name, root), nil
}

// escapes turns os.Root's escape error into errOutsideRoot.
func escapes(name string, err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return &fs.PathError{Op: "resolve", Path: name, Err: errOutsideRoot}
	}
	return err
}

func (r *rootFS) Open(name string) (openFile, error) {
	h, rel, err := r.at(name)
	if err != nil {
		return nil, err
	}
	f, err := h.Open(rel)
	if err != nil {
		return nil, escapes(name, err)
	}
	return f, nil
}

func (r *rootFS) Create(name string, perm fs.FileMode) (openFile, error) {
	h, rel, err := r.at(name)
	if err != nil {
		return nil, err
	}
	f, err := h.OpenFile(rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, escapes(name, err)
	}
	return f, nil
}

func (r *rootFS) Stat(name string) (fs.FileInfo, error) {
	h, rel, err := r.at(name)
	if err != nil {
		return nil, err
	}
	fi, err := h.Stat(rel)
	return fi, escapes(name, err)
}

func (r *rootFS) Lstat(name string) (fs.FileInfo, error) {
	h, rel, err := r.at(name)
	if err != nil {
		return nil, err
	}
	fi, err := h.Lstat(rel)
	return fi, escapes(name, err)
}

func (r *rootFS) ReadDir(name string) ([]fs.FileInfo, error) {
	h, rel, err := r.at(name)
	if err != nil {
		return nil, err
	}
	f, err := h.Open(rel)
	if err != nil {
		return nil, escapes(name, err)
	}
	defer f.Close()
	return f.Readdir(-1)
}

func (r *rootFS) Mkdir(name string, perm fs.FileMode) error {
	h, rel, err := r.at(name)
	if err != nil {
		return err
	}
	return escapes(name, h.Mkdir(rel, perm))
}

func (r *rootFS) Remove(name string) error {
	h, rel, err := r.at(name)
	if err != nil {
		return err
	}
	if rel == "." {
		return fmt.Errorf("%s is a file root itself; it cannot be removed through the file tools", name)
	}
	return escapes(name, h.Remove(rel))
}

func (r *rootFS) Rename(oldname, newname string) error {
	h, orel, err := r.at(oldname)
	if err != nil {
		return err
	}
	h2, nrel, err := r.at(newname)
	if err != nil {
		return err
	}
	if h != h2 {
		return fmt.Errorf("%s and %s are in different file roots: copy, then delete", oldname, newname)
	}
	if orel == "." || nrel == "." {
		return fmt.Errorf("a file root itself cannot be renamed or replaced")
	}
	return escapes(oldname, h.Rename(orel, nrel))
}

func (r *rootFS) Chmod(name string, m fs.FileMode) error {
	h, rel, err := r.at(name)
	if err != nil {
		return err
	}
	return escapes(name, h.Chmod(rel, m))
}

func (r *rootFS) Chown(name string, uid, gid int) error {
	h, rel, err := r.at(name)
	if err != nil {
		return err
	}
	return escapes(name, h.Chown(rel, uid, gid))
}

func (r *rootFS) Chtimes(name string, a, m time.Time) error {
	h, rel, err := r.at(name)
	if err != nil {
		return err
	}
	return escapes(name, h.Chtimes(rel, a, m))
}

func (r *rootFS) Readlink(name string) (string, error) {
	h, rel, err := r.at(name)
	if err != nil {
		return "", err
	}
	s, err := h.Readlink(rel)
	return s, escapes(name, err)
}

func (r *rootFS) Route() string { return "local (os.Root)" }

func (r *rootFS) Close() error {
	var errs []error
	for _, h := range r.open {
		errs = append(errs, h.Close())
	}
	clear(r.open)
	return errors.Join(errs...)
}
