package exec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Files returns the file operations of ctx's principal's view, starting
// its spawner if needed. It fails with [ErrNoViews] when s has no views or
// they are unavailable: the caller then works on the gateway's own view of
// the machine, and says so.
func (s *Sandbox) Files(ctx context.Context) (*ViewFiles, error) {
	if s == nil || s.views == nil {
		return nil, ErrNoViews
	}
	if err := s.views.available(); err != nil {
		return nil, ErrNoViews
	}
	sp, err := s.views.spawnerFor(s.views.principal(ctx))
	if err != nil {
		return nil, err
	}
	return &ViewFiles{sp: sp, s: s}, nil
}

// do sends op to the spawner with the current ruleset and waits for its
// reply and the descriptor it returns, if any.
func (v *ViewFiles) do(op fileOp) (fileReply, *os.File, error) {
	var rep fileReply
	m := spawnMsg{Op: "file", File: &op}
	var pass []*os.File
	if v.s.abi > 0 {
		fd, err := v.s.rulesetDup()
		if err != nil {
			return rep, nil, err
		}
		rf := os.NewFile(uintptr(fd), "ruleset")
		defer rf.Close()
		pass = append(pass, rf)
		m.Rule, m.Access = true, handledAccess(v.s.abi)
	}
	_, r, err := v.sp.request(m, nil, pass...)
	if err != nil {
		return rep, nil, err
	}
	if r.msg.FileReply == nil {
		closeFiles(r.files)
		if r.msg.Err != "" {
			return rep, nil, errors.New(r.msg.Err)
		}
		return rep, nil, fmt.Errorf("exec: sandbox view: unexpected %q", r.msg.Op)
	}
	var f *os.File
	if len(r.files) > 0 {
		f = r.files[0]
		closeFiles(r.files[1:])
	}
	return *r.msg.FileReply, f, nil
}

// simple runs an operation that returns nothing but an error.
func (v *ViewFiles) simple(op fileOp) error {
	rep, f, err := v.do(op)
	if f != nil {
		f.Close()
	}
	if err != nil {
		return err
	}
	return replyErr(op.Op, op.Name, rep)
}

// OpenFile opens name in the view, as os.OpenFile (or, with root, as
// os.Root.OpenFile beneath root) would there.
func (v *ViewFiles) OpenFile(root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	rep, f, err := v.do(fileOp{Op: "open", Root: root, Name: name, Flag: flag, Perm: uint32(perm)})
	if err != nil {
		return nil, err
	}
	if err := replyErr("open", name, rep); err != nil {
		if f != nil {
			f.Close()
		}
		return nil, err
	}
	if f == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("exec: sandbox view: no descriptor")}
	}
	// Named after the file, for error messages: a duplicate, since f
	// owns its descriptor (and closes it when collected).
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	f.Close()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// Stat is os.Stat in the view (with root, os.Root.Stat).
func (v *ViewFiles) Stat(root, name string) (fs.FileInfo, error) { return v.stat("stat", root, name) }

// Lstat is os.Lstat in the view (with root, os.Root.Lstat).
func (v *ViewFiles) Lstat(root, name string) (fs.FileInfo, error) { return v.stat("lstat", root, name) }

func (v *ViewFiles) stat(op, root, name string) (fs.FileInfo, error) {
	rep, f, err := v.do(fileOp{Op: op, Root: root, Name: name})
	if f != nil {
		f.Close()
	}
	if err != nil {
		return nil, err
	}
	if err := replyErr(op, name, rep); err != nil {
		return nil, err
	}
	if len(rep.Infos) != 1 {
		return nil, &fs.PathError{Op: op, Path: name, Err: errors.New("exec: sandbox view: no file information")}
	}
	return newViewFileInfo(rep.Infos[0]), nil
}

// ReadDir lists a directory in the view, unsorted.
func (v *ViewFiles) ReadDir(root, name string) ([]fs.FileInfo, error) {
	rep, f, err := v.do(fileOp{Op: "readdir", Root: root, Name: name})
	if f != nil {
		f.Close()
	}
	if err != nil {
		return nil, err
	}
	if err := replyErr("readdir", name, rep); err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, len(rep.Infos))
	for i, s := range rep.Infos {
		out[i] = newViewFileInfo(s)
	}
	return out, nil
}

// Mkdir is os.Mkdir in the view (with root, os.Root.Mkdir).
func (v *ViewFiles) Mkdir(root, name string, perm fs.FileMode) error {
	return v.simple(fileOp{Op: "mkdir", Root: root, Name: name, Perm: uint32(perm)})
}

// Remove is os.Remove in the view (with root, os.Root.Remove).
func (v *ViewFiles) Remove(root, name string) error {
	return v.simple(fileOp{Op: "remove", Root: root, Name: name})
}

// Rename is os.Rename in the view (with root, os.Root.Rename; both
// names beneath root).
func (v *ViewFiles) Rename(root, oldname, newname string) error {
	return v.simple(fileOp{Op: "rename", Root: root, Name: oldname, Name2: newname})
}

// Chmod is os.Chmod in the view (with root, os.Root.Chmod).
func (v *ViewFiles) Chmod(root, name string, mode fs.FileMode) error {
	return v.simple(fileOp{Op: "chmod", Root: root, Name: name, Perm: uint32(mode)})
}

// Chown is os.Chown in the view (with root, os.Root.Chown). The
// gateway's user and group are root in the view and are translated.
func (v *ViewFiles) Chown(root, name string, uid, gid int) error {
	// The gateway's user is root in the view.
	if uid == os.Geteuid() {
		uid = 0
	}
	if gid == os.Getegid() {
		gid = 0
	}
	return v.simple(fileOp{Op: "chown", Root: root, Name: name, UID: uid, GID: gid})
}

// Chtimes is os.Chtimes in the view (with root, os.Root.Chtimes).
func (v *ViewFiles) Chtimes(root, name string, atime, mtime time.Time) error {
	return v.simple(fileOp{Op: "chtimes", Root: root, Name: name, Atime: atime.UnixNano(), Mtime: mtime.UnixNano()})
}

// Readlink is os.Readlink in the view (with root, os.Root.Readlink).
func (v *ViewFiles) Readlink(root, name string) (string, error) {
	rep, f, err := v.do(fileOp{Op: "readlink", Root: root, Name: name})
	if f != nil {
		f.Close()
	}
	if err != nil {
		return "", err
	}
	return rep.Link, replyErr("readlink", name, rep)
}

// request sends m with files and waits for the reply to it; with child,
// the command's exit is routed to it. On an error, nothing stays
// registered.
func (sp *spawner) request(m spawnMsg, child *nsChild, files ...*os.File) (uint64, reply, error) {
	ch := make(chan reply, 1)
	sp.mu.Lock()
	if sp.dead != nil || sp.closing {
		sp.mu.Unlock()
		return 0, reply{}, errors.New("exec: sandbox view: the spawner ended")
	}
	sp.nextID++
	m.ID = sp.nextID
	sp.pending[m.ID] = ch
	if child != nil {
		sp.children[m.ID] = child
	}
	sp.last = time.Now()
	sp.mu.Unlock()
	sp.wmu.Lock()
	err := sendMsg(sp.sock, m, files...)
	sp.wmu.Unlock()
	if err != nil {
		sp.forget(m.ID)
		return 0, reply{}, fmt.Errorf("exec: sandbox view: %w", err)
	}
	r := <-ch
	if r.err != nil {
		sp.forget(m.ID)
	}
	return m.ID, r, r.err
}

// followUp sends m, a further message about request id, and waits for
// the next reply to that request.
func (sp *spawner) followUp(id uint64, m spawnMsg) (reply, error) {
	ch := make(chan reply, 1)
	sp.mu.Lock()
	if sp.dead != nil {
		err := sp.dead
		sp.mu.Unlock()
		return reply{}, err
	}
	sp.pending[id] = ch
	sp.mu.Unlock()
	m.ID = id
	sp.wmu.Lock()
	err := sendMsg(sp.sock, m)
	sp.wmu.Unlock()
	if err != nil {
		sp.forget(id)
		return reply{}, fmt.Errorf("exec: sandbox view: %w", err)
	}
	r := <-ch
	if r.err != nil {
		sp.forget(id)
	}
	return r, r.err
}

// forget drops what waits for request id.
func (sp *spawner) forget(id uint64) {
	sp.mu.Lock()
	delete(sp.pending, id)
	delete(sp.children, id)
	sp.mu.Unlock()
}

// file performs a file operation on a confined thread of the spawner and
// replies, with the opened descriptor for "open".
func (s *spawnerServer) file(m spawnMsg, files []*os.File) {
	go func() {
		defer closeFiles(files)
		rsfd := -1
		if m.Rule && len(files) > 0 {
			rsfd = int(files[0].Fd())
		}
		type result struct {
			rep fileReply
			f   *os.File
		}
		ch := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends confined
			if err := s.confineFileThread(rsfd, m.Access); err != nil {
				ch <- result{rep: fileReply{Err: err.Error()}}
				return
			}
			rep, f := doFileOp(*m.File)
			ch <- result{rep, f}
		}()
		r := <-ch
		rep := spawnMsg{Op: "file", ID: m.ID, FileReply: &r.rep}
		if r.f != nil {
			s.send(rep, r.f)
			r.f.Close()
			return
		}
		s.send(rep)
	}()
}

// confineFileThread confines the calling thread for one file operation as
// commands are confined: no capabilities at all, no_new_privs, and the
// Landlock ruleset with the view's own mounts.
func (s *spawnerServer) confineFileThread(rsfd int, access uint64) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if rsfd >= 0 {
		if err := s.addMountRules(rsfd, access); err != nil {
			return err
		}
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rsfd), 0, 0); errno != 0 {
			return fmt.Errorf("landlock_restrict_self: %w", errno)
		}
	}
	return nil
}

// doFileOp performs op: beneath op.Root through os.Root when it is set.
func doFileOp(op fileOp) (fileReply, *os.File) {
	var root *os.Root
	rel := op.Name
	if op.Root != "" {
		var err error
		if root, err = os.OpenRoot(op.Root); err != nil {
			return errReply(err), nil
		}
		defer root.Close()
		rel = relBeneath(op.Root, op.Name)
	}
	rel2 := op.Name2
	if root != nil && op.Name2 != "" {
		rel2 = relBeneath(op.Root, op.Name2)
	}
	var err error
	switch op.Op {
	case "open":
		var f *os.File
		if root != nil {
			f, err = root.OpenFile(rel, op.Flag, fs.FileMode(op.Perm))
		} else {
			f, err = os.OpenFile(rel, op.Flag, fs.FileMode(op.Perm))
		}
		if err != nil {
			return errReply(err), nil
		}
		return fileReply{}, f
	case "stat", "lstat":
		var fi fs.FileInfo
		switch {
		case root != nil && op.Op == "stat":
			fi, err = root.Stat(rel)
		case root != nil:
			fi, err = root.Lstat(rel)
		case op.Op == "stat":
			fi, err = os.Stat(rel)
		default:
			fi, err = os.Lstat(rel)
		}
		if err != nil {
			return errReply(err), nil
		}
		return fileReply{Infos: []HelperFileStat{statOf(fi)}}, nil
	case "readdir":
		var d *os.File
		if root != nil {
			d, err = root.Open(rel)
		} else {
			d, err = os.Open(rel)
		}
		if err != nil {
			return errReply(err), nil
		}
		defer d.Close()
		fis, err := d.Readdir(-1)
		if err != nil {
			return errReply(err), nil
		}
		rep := fileReply{Infos: make([]HelperFileStat, len(fis))}
		for i, fi := range fis {
			rep.Infos[i] = statOf(fi)
		}
		return rep, nil
	case "mkdir":
		if root != nil {
			err = root.Mkdir(rel, fs.FileMode(op.Perm))
		} else {
			err = os.Mkdir(rel, fs.FileMode(op.Perm))
		}
	case "remove":
		if root != nil {
			err = root.Remove(rel)
		} else {
			err = os.Remove(rel)
		}
	case "rename":
		if root != nil {
			err = root.Rename(rel, rel2)
		} else {
			err = os.Rename(rel, rel2)
		}
	case "chmod":
		if root != nil {
			err = root.Chmod(rel, fs.FileMode(op.Perm))
		} else {
			err = os.Chmod(rel, fs.FileMode(op.Perm))
		}
	case "chown":
		if root != nil {
			err = root.Chown(rel, op.UID, op.GID)
		} else {
			err = os.Chown(rel, op.UID, op.GID)
		}
	case "chtimes":
		a, m := time.Unix(0, op.Atime), time.Unix(0, op.Mtime)
		if root != nil {
			err = root.Chtimes(rel, a, m)
		} else {
			err = os.Chtimes(rel, a, m)
		}
	case "readlink":
		var link string
		if root != nil {
			link, err = root.Readlink(rel)
		} else {
			link, err = os.Readlink(rel)
		}
		if err != nil {
			return errReply(err), nil
		}
		return fileReply{Link: link}, nil
	default:
		err = fmt.Errorf("unknown file operation %q", op.Op)
	}
	if err != nil {
		return errReply(err), nil
	}
	return fileReply{}, nil
}

// relBeneath returns name relative to root ("." for root itself).
func relBeneath(root, name string) string {
	rel, err := filepath.Rel(root, name)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return name // os.Root refuses it as escaping
	}
	return rel
}

func errReply(err error) fileReply {
	r := fileReply{Err: err.Error()}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		r.Errno = int(errno)
	}
	return r
}

// statOf puts fi on the wire. Owners are as the view sees them: the
// gateway's user is root there, and is reported as the gateway's user.
func statOf(fi fs.FileInfo) HelperFileStat {
	s := HelperFileStat{Name: fi.Name(), Size: fi.Size(), Mode: uint32(fi.Mode()), MTime: fi.ModTime().UnixNano(), UID: -1, GID: -1}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.UID, s.GID, s.Ino = int(st.Uid), int(st.Gid), st.Ino
	}
	return s
}
