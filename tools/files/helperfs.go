package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
)

// helperChunk is the most one helper request reads or writes.
const helperChunk = 4 << 20

// helperFS is an SSH host, for a principal with roots, through rigout's
// helper on the host (remote.HelperFiles): each name is resolved by the
// host's kernel beneath its root with openat2, in the system call that
// uses it (RESOLVE_BENEATH: links that stay beneath the root are followed,
// as os.Root follows them locally; one that leads out fails the call).
// There is no check followed by a use for a swapped link to redirect, as
// there is over SFTP. The SFTP lease beside it serves only
// /etc/passwd lookups and holds the connection.
type helperFS struct {
	// ctx is the file call's: fileSystem's methods take none, and a
	// helperFS lives for one call.
	ctx   context.Context
	hf    *remote.HelperFiles
	roots []string
	route string
	sftp  *sftpFS
}

func newHelperFS(ctx context.Context, hf *remote.HelperFiles, info exec.HelperInfo, l *remote.SFTPLease, roots []string) *helperFS {
	return &helperFS{ctx: ctx, hf: hf, roots: roots, route: l.Route + " via " + info.String(), sftp: newSFTPFS(l, roots)}
}

// root returns the root holding name.
func (h *helperFS) root(op, name string) (string, error) {
	root, ok := rootOf(h.roots, name)
	if !ok {
		return "", &fs.PathError{Op: op, Path: name, Err: errOutsideRoot}
	}
	return root, nil
}

func (h *helperFS) Open(name string) (openFile, error) {
	root, err := h.root("open", name)
	if err != nil {
		return nil, err
	}
	fi, err := h.hf.Stat(h.ctx, root, name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a directory")}
	}
	return &helperFile{h: h, root: root, name: name}, nil
}

func (h *helperFS) Create(name string, perm fs.FileMode) (openFile, error) {
	root, err := h.root("create", name)
	if err != nil {
		return nil, err
	}
	if err := h.hf.WriteAt(h.ctx, root, name, nil, 0, os.O_CREATE|os.O_EXCL, perm); err != nil {
		return nil, err
	}
	// The helper's umask applied; set the mode asked for.
	if err := h.hf.Chmod(h.ctx, root, name, perm); err != nil {
		_ = h.hf.Remove(h.ctx, root, name)
		return nil, err
	}
	return &helperFile{h: h, root: root, name: name}, nil
}

func (h *helperFS) Stat(name string) (fs.FileInfo, error) {
	root, err := h.root("stat", name)
	if err != nil {
		return nil, err
	}
	return h.hf.Stat(h.ctx, root, name)
}

func (h *helperFS) Lstat(name string) (fs.FileInfo, error) {
	root, err := h.root("lstat", name)
	if err != nil {
		return nil, err
	}
	return h.hf.Lstat(h.ctx, root, name)
}

func (h *helperFS) ReadDir(name string) ([]fs.FileInfo, error) {
	root, err := h.root("readdir", name)
	if err != nil {
		return nil, err
	}
	return h.hf.ReadDir(h.ctx, root, name)
}

func (h *helperFS) Mkdir(name string, perm fs.FileMode) error {
	root, err := h.root("mkdir", name)
	if err != nil {
		return err
	}
	if err := h.hf.Mkdir(h.ctx, root, name, perm); err != nil {
		return err
	}
	return h.hf.Chmod(h.ctx, root, name, perm)
}

func (h *helperFS) Remove(name string) error {
	root, err := h.root("remove", name)
	if err != nil {
		return err
	}
	if name == root {
		return fmt.Errorf("%s is a file root itself; it cannot be removed through the file tools", name)
	}
	return h.hf.Remove(h.ctx, root, name)
}

func (h *helperFS) Rename(oldname, newname string) error {
	ro, err := h.root("rename", oldname)
	if err != nil {
		return err
	}
	rn, err := h.root("rename", newname)
	if err != nil {
		return err
	}
	if oldname == ro || newname == rn {
		return fmt.Errorf("a file root itself cannot be renamed or replaced")
	}
	if ro != rn {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fmt.Errorf("%s and %s lie in different file roots: through the rigout helper a rename stays within one root", oldname, newname)}
	}
	return h.hf.Rename(h.ctx, ro, oldname, newname)
}

func (h *helperFS) Chmod(name string, m fs.FileMode) error {
	root, err := h.root("chmod", name)
	if err != nil {
		return err
	}
	return h.hf.Chmod(h.ctx, root, name, m)
}

func (h *helperFS) Chown(name string, uid, gid int) error {
	root, err := h.root("chown", name)
	if err != nil {
		return err
	}
	return h.hf.Chown(h.ctx, root, name, uid, gid)
}

func (h *helperFS) Chtimes(name string, a, m time.Time) error {
	root, err := h.root("chtimes", name)
	if err != nil {
		return err
	}
	return h.hf.Chtimes(h.ctx, root, name, a, m)
}

func (h *helperFS) Readlink(name string) (string, error) {
	root, err := h.root("readlink", name)
	if err != nil {
		return "", err
	}
	return h.hf.Readlink(h.ctx, root, name)
}

func (h *helperFS) Route() string { return h.route }

func (h *helperFS) Close() error { return h.sftp.Close() }

// helperFile is an open file through the helper: each read and write is
// one request naming the file, resolved again beneath its root.
type helperFile struct {
	h          *helperFS
	root, name string
	off        int64
}

func (f *helperFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		want := min(len(p)-n, helperChunk)
		b, err := f.h.hf.ReadAt(f.h.ctx, f.root, f.name, off+int64(n), want)
		n += copy(p[n:], b)
		if err != nil {
			return n, err
		}
		if len(b) < want {
			return n, io.EOF
		}
	}
	return n, nil
}

func (f *helperFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := f.ReadAt(p[:min(len(p), helperChunk)], f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *helperFile) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		chunk := p[n:min(len(p), n+helperChunk)]
		if err := f.h.hf.WriteAt(f.h.ctx, f.root, f.name, chunk, f.off, 0, 0); err != nil {
			return n, err
		}
		n += len(chunk)
		f.off += int64(len(chunk))
	}
	return n, nil
}

func (f *helperFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		fi, err := f.Stat()
		if err != nil {
			return 0, err
		}
		offset += fi.Size()
	default:
		return 0, fmt.Errorf("seek: bad whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("seek: negative position")
	}
	f.off = offset
	return offset, nil
}

func (f *helperFile) Stat() (fs.FileInfo, error) { return f.h.hf.Stat(f.h.ctx, f.root, f.name) }

// Sync does nothing: the helper writes through the host's page cache, and
// its protocol has no fsync yet.
func (f *helperFile) Sync() error { return nil }

func (f *helperFile) Close() error { return nil }

// sftpOf returns the SFTP side of an SSH host's fileSystem.
func sftpOf(fsys fileSystem) (*sftpFS, bool) {
	switch f := fsys.(type) {
	case *sftpFS:
		return f, true
	case *helperFS:
		return f.sftp, true
	}
	return nil, false
}
