package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pkg/sftp"

	"github.com/rigout/rigout/exec/remote"
)

// maxLinks bounds the symbolic links followed resolving one path, as
// the kernel's ELOOP limit.
const maxLinks = 40

// sftpFS is an SSH host through SFTP on the pooled connection. With
// roots, every name is resolved on the server one component at a time
// (Lstat, and ReadLink for each symbolic link) and refused when any
// step leaves a root; the request then names the resolved path, which
// holds no symbolic link.
type sftpFS struct {
	c     *sftp.Client
	lease *remote.SFTPLease
	route string
	roots []string          // nil: unconfined
	real  map[string]string // root → its real path on the server
}

func newSFTPFS(l *remote.SFTPLease, roots []string) *sftpFS {
	return &sftpFS{c: l.Client, lease: l, route: l.Route + " sftp", roots: roots, real: map[string]string{}}
}

// realRoot returns root's real path on the server.
func (s *sftpFS) realRoot(root string) (string, error) {
	if r, ok := s.real[root]; ok {
		return r, nil
	}
	r, err := s.c.RealPath(root)
	if err != nil {
		return "", fmt.Errorf("file root %s on the host: %w", root, err)
	}
	if _, err := s.c.Stat(r); err != nil {
		return "", fmt.Errorf("file root %s on the host: %w", root, err)
	}
	r = path.Clean(r)
	s.real[root] = r
	return r, nil
}

// inRoots returns the real root that holds the real path p.
func (s *sftpFS) inRoots(p string) (string, bool) {
	best, ok := "", false
	for _, root := range s.roots {
		r, err := s.realRoot(root)
		if err != nil {
			continue
		}
		if within(p, r) && len(r) >= len(best) {
			best, ok = r, true
		}
	}
	return best, ok
}

// resolve maps name to the path to send: itself when unconfined; else
// name with every symbolic link resolved on the server, each step inside
// a root. With follow false the last component is not followed (Lstat,
// Remove, Rename act on a link itself). A path whose tail does not exist
// keeps its tail as written (it is below a resolved directory).
func (s *sftpFS) resolve(name string, follow bool) (string, error) {
	if s.roots == nil {
		return name, nil
	}
	root, ok := rootOf(s.roots, name)
	if !ok {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: errOutsideRoot}
	}
	cur, err := s.realRoot(root)
	if err != nil {
		return "", err
	}
	comps := splitPath(relTo(name, root))
	links := 0
	for i := 0; i < len(comps); i++ {
		c := comps[i]
		if c == ".." {
			cur = path.Dir(cur)
			if _, ok := s.inRoots(cur); !ok {
				return "", &fs.PathError{Op: "resolve", Path: name, Err: errOutsideRoot}
			}
			continue
		}
		next := path.Join(cur, c)
		if i == len(comps)-1 && !follow {
			return next, nil
		}
		fi, err := s.c.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return path.Join(append([]string{next}, comps[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: name, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := s.c.ReadLink(next)
		if err != nil {
			return "", err
		}
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		target = path.Clean(target)
		r, ok := s.inRoots(target)
		if !ok {
			return "", &fs.PathError{Op: "resolve", Path: name,
				Err: fmt.Errorf("%w: the symbolic link %s leads to %s", errOutsideRoot, next, target)}
		}
		comps = append(splitPath(relTo(target, r)), comps[i+1:]...)
		cur, i = r, -1
	}
	return cur, nil
}

func splitPath(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

func (s *sftpFS) Open(name string) (openFile, error) {
	p, err := s.resolve(name, true)
	if err != nil {
		return nil, err
	}
	return s.c.Open(p)
}

func (s *sftpFS) Create(name string, perm fs.FileMode) (openFile, error) {
	p, err := s.resolve(name, false)
	if err != nil {
		return nil, err
	}
	f, err := s.c.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		_ = s.c.Remove(p)
		return nil, err
	}
	return sftpFile{f, s.c}, nil
}

// sftpFile makes Sync optional: servers without fsync@openssh.com still
// get their data written, only not forced to disk.
type sftpFile struct {
	*sftp.File
	c *sftp.Client
}

func (f sftpFile) Sync() error {
	if _, ok := f.c.HasExtension("fsync@openssh.com"); !ok {
		return nil
	}
	return f.File.Sync()
}

func (s *sftpFS) Stat(name string) (fs.FileInfo, error) {
	p, err := s.resolve(name, true)
	if err != nil {
		return nil, err
	}
	return s.c.Stat(p)
}

func (s *sftpFS) Lstat(name string) (fs.FileInfo, error) {
	p, err := s.resolve(name, false)
	if err != nil {
		return nil, err
	}
	return s.c.Lstat(p)
}

func (s *sftpFS) ReadDir(name string) ([]fs.FileInfo, error) {
	p, err := s.resolve(name, true)
	if err != nil {
		return nil, err
	}
	return s.c.ReadDir(p)
}

func (s *sftpFS) Mkdir(name string, perm fs.FileMode) error {
	p, err := s.resolve(name, false)
	if err != nil {
		return err
	}
	if err := s.c.Mkdir(p); err != nil {
		return err
	}
	return s.c.Chmod(p, perm)
}

func (s *sftpFS) Remove(name string) error {
	p, err := s.resolve(name, false)
	if err != nil {
		return err
	}
	if s.isRoot(p) {
		return fmt.Errorf("%s is a file root itself; it cannot be removed through the file tools", name)
	}
	fi, err := s.c.Lstat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return s.c.RemoveDirectory(p)
	}
	return s.c.Remove(p)
}

func (s *sftpFS) isRoot(p string) bool {
	for _, root := range s.roots {
		if r, err := s.realRoot(root); err == nil && r == p {
			return true
		}
	}
	return false
}

func (s *sftpFS) Rename(oldname, newname string) error {
	o, err := s.resolve(oldname, false)
	if err != nil {
		return err
	}
	n, err := s.resolve(newname, false)
	if err != nil {
		return err
	}
	if s.isRoot(o) || s.isRoot(n) {
		return fmt.Errorf("a file root itself cannot be renamed or replaced")
	}
	if _, ok := s.c.HasExtension("posix-rename@openssh.com"); ok {
		return s.c.PosixRename(o, n)
	}
	return s.c.Rename(o, n)
}

func (s *sftpFS) Chmod(name string, m fs.FileMode) error {
	p, err := s.resolve(name, true)
	if err != nil {
		return err
	}
	return s.c.Chmod(p, m)
}

func (s *sftpFS) Chown(name string, uid, gid int) error {
	p, err := s.resolve(name, true)
	if err != nil {
		return err
	}
	return s.c.Chown(p, uid, gid)
}

func (s *sftpFS) Chtimes(name string, a, m time.Time) error {
	p, err := s.resolve(name, true)
	if err != nil {
		return err
	}
	return s.c.Chtimes(p, a, m)
}

func (s *sftpFS) Readlink(name string) (string, error) {
	p, err := s.resolve(name, false)
	if err != nil {
		return "", err
	}
	return s.c.ReadLink(p)
}

func (s *sftpFS) Route() string { return s.route }

func (s *sftpFS) Close() error {
	s.lease.Release()
	return nil
}
