package exec

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// defaultHelperReadMax bounds a read through the helper when the request
// gives no Max.
const defaultHelperReadMax = 32 << 20

// helperResolve is how every name beneath a root is resolved: by the
// kernel, in the system call that uses it, never above the root — an
// absolute symbolic link, or ".." (through a link or not) that would
// leave it, fails the call — and never through /proc's magic links.
// Symbolic links that stay beneath the root are followed, as os.Root
// follows them locally: the escape is closed by RESOLVE_BENEATH, which,
// unlike a check before the use, no concurrent swap can get around.
const helperResolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// helperFilesSupport says how file operations resolve names on this
// kernel: "openat2", or why they cannot.
func helperFilesSupport() string {
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "unavailable (" + err.Error() + ")"
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, ".", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: helperResolve})
	if err != nil {
		return "unavailable (openat2: " + err.Error() + ", Linux 5.6 or later needed)"
	}
	unix.Close(fd)
	return "openat2 beneath the root"
}

// helperRel returns name relative to root: name is absolute beneath root,
// or relative. "." is the root itself.
func helperRel(root, name string) (string, error) {
	if !filepath.IsAbs(root) {
		return "", errors.New("root is not an absolute path")
	}
	root = filepath.Clean(root)
	if filepath.IsAbs(name) {
		name = filepath.Clean(name)
		if !under(root, name) {
			return "", errors.New("path is not beneath the root")
		}
		name = strings.TrimPrefix(strings.TrimPrefix(name, root), "/")
		if name == "" {
			name = "."
		}
		return name, nil
	}
	name = filepath.Clean(name)
	if name == ".." || strings.HasPrefix(name, "../") {
		return "", errors.New("path is not beneath the root")
	}
	return name, nil
}

// helperFiles holds the root's descriptor for one operation.
type helperFiles struct {
	root int
}

func (h *helperFiles) open(rel string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat2(h.root, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(perm), Resolve: helperResolve})
		if err == unix.EINTR || err == unix.EAGAIN {
			// EAGAIN: a concurrent rename elsewhere; try again.
			continue
		}
		return fd, err
	}
}

// parent opens rel's directory beneath the root and returns it with the
// last component, which must be a plain name.
func (h *helperFiles) parent(rel string) (int, string, error) {
	dir, base := filepath.Split(rel)
	if base == "" || base == "." || base == ".." {
		return -1, "", unix.EINVAL
	}
	if dir == "" {
		dir = "."
	}
	fd, err := h.open(filepath.Clean(dir), unix.O_PATH|unix.O_DIRECTORY, 0)
	return fd, base, err
}

// helperFileOp performs f beneath its root. Every name is resolved by the
// kernel in one step (openat2 with RESOLVE_BENEATH, see helperResolve),
// and operations on a last component (mkdir, unlink, rename, lstat) work
// on a descriptor of its directory so opened: there is no check followed
// by a use that a concurrent rename or symbolic link could redirect.
func helperFileOp(f *HelperFile) (rep HelperReply) {
	fail := helperFail
	rel, err := helperRel(f.Root, f.Name)
	if err != nil {
		return HelperReply{Err: err.Error(), Errno: int(unix.EXDEV)}
	}
	rootfd, err := unix.Open(filepath.Clean(f.Root), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(rootfd)
	h := &helperFiles{root: rootfd}

	switch f.Op {
	case "read":
		fd, err := h.open(rel, unix.O_RDONLY, 0)
		if err != nil {
			return fail(err)
		}
		file := os.NewFile(uintptr(fd), rel)
		defer file.Close()
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fail(err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fail(unix.EISDIR)
		}
		max := f.Max
		if max <= 0 {
			max = defaultHelperReadMax
		}
		data, err := io.ReadAll(io.LimitReader(io.NewSectionReader(file, f.Offset, max), max))
		if err != nil {
			return fail(err)
		}
		return HelperReply{Data: data, Infos: []HelperFileStat{statToFile(filepath.Base(rel), &st)}}
	case "write":
		flags := unix.O_WRONLY
		for _, m := range [][2]int{{os.O_CREATE, unix.O_CREAT}, {os.O_EXCL, unix.O_EXCL}, {os.O_TRUNC, unix.O_TRUNC}} {
			if f.Flag&m[0] != 0 {
				flags |= m[1]
			}
		}
		var perm uint32 // openat2 takes a mode only with O_CREAT
		if flags&unix.O_CREAT != 0 {
			perm = f.Perm
			if perm == 0 {
				perm = 0o644
			}
		}
		fd, err := h.open(rel, flags, perm)
		if err != nil {
			return fail(err)
		}
		if err := writeClose(os.NewFile(uintptr(fd), rel), f.Data, f.Offset); err != nil {
			return fail(err)
		}
		return HelperReply{}
	case "stat":
		fd, err := h.open(rel, unix.O_PATH, 0)
		if err != nil {
			return fail(err)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fail(err)
		}
		return HelperReply{Infos: []HelperFileStat{statToFile(filepath.Base(rel), &st)}}
	case "lstat":
		if rel == "." {
			var st unix.Stat_t
			if err := unix.Fstat(rootfd, &st); err != nil {
				return fail(err)
			}
			return HelperReply{Infos: []HelperFileStat{statToFile(filepath.Base(f.Root), &st)}}
		}
		pfd, base, err := h.parent(rel)
		if err != nil {
			return fail(err)
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return fail(err)
		}
		return HelperReply{Infos: []HelperFileStat{statToFile(base, &st)}}
	case "readdir":
		fd, err := h.open(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return fail(err)
		}
		dir := os.NewFile(uintptr(fd), rel)
		defer dir.Close()
		names, err := dir.Readdirnames(-1)
		if err != nil {
			return fail(err)
		}
		infos := make([]HelperFileStat, 0, len(names))
		for _, n := range names {
			var st unix.Stat_t
			if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue // gone meanwhile
			}
			infos = append(infos, statToFile(n, &st))
		}
		return HelperReply{Infos: infos}
	case "mkdir", "remove":
		pfd, base, err := h.parent(rel)
		if err != nil {
			return fail(err)
		}
		defer unix.Close(pfd)
		if f.Op == "mkdir" {
			perm := f.Perm
			if perm == 0 {
				perm = 0o755
			}
			err = unix.Mkdirat(pfd, base, perm)
		} else {
			err = unix.Unlinkat(pfd, base, 0)
			if err == unix.EISDIR || err == unix.EPERM {
				err = unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR)
			}
		}
		if err != nil {
			return fail(err)
		}
		return HelperReply{}
	case "rename":
		rel2, err := helperRel(f.Root, f.Name2)
		if err != nil {
			return HelperReply{Err: err.Error(), Errno: int(unix.EXDEV)}
		}
		p1, b1, err := h.parent(rel)
		if err != nil {
			return fail(err)
		}
		defer unix.Close(p1)
		p2, b2, err := h.parent(rel2)
		if err != nil {
			return fail(err)
		}
		defer unix.Close(p2)
		if err := unix.Renameat(p1, b1, p2, b2); err != nil {
			return fail(err)
		}
		return HelperReply{}
	case "chmod", "chown", "chtimes":
		// The file is opened O_PATH beneath the root; the change is made
		// through that descriptor.
		fd, err := h.open(rel, unix.O_PATH, 0)
		if err != nil {
			return fail(err)
		}
		defer unix.Close(fd)
		self := "/proc/self/fd/" + strconv.Itoa(fd)
		switch f.Op {
		case "chmod":
			err = unix.Fchmodat(unix.AT_FDCWD, self, f.Perm&0o7777, 0)
		case "chown":
			err = unix.Fchownat(fd, "", f.UID, f.GID, unix.AT_EMPTY_PATH)
		default:
			ts := []unix.Timespec{unix.NsecToTimespec(f.Atime), unix.NsecToTimespec(f.Mtime)}
			err = unix.UtimesNanoAt(unix.AT_FDCWD, self, ts, 0)
		}
		if err != nil {
			return fail(err)
		}
		return HelperReply{}
	case "readlink":
		pfd, base, err := h.parent(rel)
		if err != nil {
			return fail(err)
		}
		defer unix.Close(pfd)
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(pfd, base, buf)
		if err != nil {
			return fail(err)
		}
		return HelperReply{Link: string(buf[:n])}
	}
	return HelperReply{Err: "unknown file operation " + f.Op}
}

// statToFile turns a stat into its wire form.
func statToFile(name string, st *unix.Stat_t) HelperFileStat {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return HelperFileStat{Name: name, Size: st.Size, Mode: uint32(mode), MTime: st.Mtim.Nano(),
		UID: int(st.Uid), GID: int(st.Gid), Ino: st.Ino}
}

// viewFileOp performs f inside the view of principal p (sb.Files): on a
// thread of the principal's spawner, confined as its commands are, names
// resolved beneath the root by os.Root. Hidden paths (the login's keys,
// the helper's cache, HelperConfig.Hidden) are then out of reach inside a
// root too, and a read-only principal writes nothing. The root must lie
// in one of p's Roots; a principal without Roots is scoped to this root
// for the operation (its view is that of a principal whose root it is).
func viewFileOp(ctx context.Context, sb *Sandbox, p Principal, f *HelperFile) HelperReply {
	if len(p.Roots) == 0 {
		p.Roots = []string{filepath.Clean(f.Root)}
	} else if !slices.ContainsFunc(p.Roots, func(r string) bool { return under(filepath.Clean(r), filepath.Clean(f.Root)) }) {
		return HelperReply{Err: "exec: " + f.Root + " is outside the principal's roots", Errno: int(unix.EACCES)}
	}
	ctx = context.WithValue(ctx, helperPrincipalKey{}, p)
	fail := helperFail
	rel, err := helperRel(f.Root, f.Name)
	if err != nil {
		return HelperReply{Err: err.Error(), Errno: int(unix.EXDEV)}
	}
	root := filepath.Clean(f.Root)
	name := filepath.Join(root, rel)
	vf, err := sb.Files(ctx)
	if err != nil {
		return fail(err)
	}
	infos := func(fi fs.FileInfo, err error) HelperReply {
		if err != nil {
			return fail(err)
		}
		return HelperReply{Infos: []HelperFileStat{statOf(fi)}}
	}
	switch f.Op {
	case "read":
		file, err := vf.OpenFile(root, name, os.O_RDONLY, 0)
		if err != nil {
			return fail(err)
		}
		defer file.Close()
		fi, err := file.Stat()
		if err != nil {
			return fail(err)
		}
		if !fi.Mode().IsRegular() {
			return fail(unix.EISDIR)
		}
		max := f.Max
		if max <= 0 {
			max = defaultHelperReadMax
		}
		data, err := io.ReadAll(io.LimitReader(io.NewSectionReader(file, f.Offset, max), max))
		if err != nil {
			return fail(err)
		}
		st := statOf(fi)
		st.Name = filepath.Base(rel)
		return HelperReply{Data: data, Infos: []HelperFileStat{st}}
	case "write":
		flags := os.O_WRONLY | f.Flag&(os.O_CREATE|os.O_EXCL|os.O_TRUNC)
		perm := fs.FileMode(f.Perm)
		if perm == 0 {
			perm = 0o644
		}
		file, err := vf.OpenFile(root, name, flags, perm)
		if err != nil {
			return fail(err)
		}
		if err := writeClose(file, f.Data, f.Offset); err != nil {
			return fail(err)
		}
		return HelperReply{}
	case "stat":
		return infos(vf.Stat(root, name))
	case "lstat":
		return infos(vf.Lstat(root, name))
	case "readdir":
		fis, err := vf.ReadDir(root, name)
		if err != nil {
			return fail(err)
		}
		rep := HelperReply{Infos: make([]HelperFileStat, len(fis))}
		for i, fi := range fis {
			rep.Infos[i] = statOf(fi)
		}
		return rep
	case "mkdir":
		perm := fs.FileMode(f.Perm)
		if perm == 0 {
			perm = 0o755
		}
		err = vf.Mkdir(root, name, perm)
	case "remove":
		err = vf.Remove(root, name)
	case "rename":
		rel2, err2 := helperRel(f.Root, f.Name2)
		if err2 != nil {
			return HelperReply{Err: err2.Error(), Errno: int(unix.EXDEV)}
		}
		err = vf.Rename(root, name, filepath.Join(root, rel2))
	case "chmod":
		err = vf.Chmod(root, name, fs.FileMode(f.Perm&0o7777))
	case "chown":
		err = vf.Chown(root, name, f.UID, f.GID)
	case "chtimes":
		err = vf.Chtimes(root, name, time.Unix(0, f.Atime), time.Unix(0, f.Mtime))
	case "readlink":
		link, err := vf.Readlink(root, name)
		if err != nil {
			return fail(err)
		}
		return HelperReply{Link: link}
	default:
		return HelperReply{Err: "unknown file operation " + f.Op}
	}
	if err != nil {
		return fail(err)
	}
	return HelperReply{}
}

// writeClose writes data at off in file, if there is any, and closes it:
// the first error of the two.
func writeClose(file *os.File, data []byte, off int64) error {
	var err error
	if len(data) > 0 {
		_, err = file.WriteAt(data, off)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// helperFail is the reply of a failed file operation: err's text and, when
// it wraps one, the host's errno.
func helperFail(err error) HelperReply {
	rep := HelperReply{Err: err.Error()}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		rep.Errno = int(errno)
	}
	return rep
}
