package exec

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrNoViews means a Sandbox cannot run anything in a per-principal view:
// it has none, or they are unavailable on this machine
// (SandboxStatus.ViewsReason says why).
var ErrNoViews = errNoViews

// ViewFiles performs file operations inside one principal's view of the
// machine, on a thread of its spawner confined as its commands are (no
// capabilities, no_new_privs, the Landlock ruleset), so that the kernel
// judges a file tool's delete exactly as it judges `rm` run by the same
// principal: read-only trees, hidden files and the principal's roots hold
// for both. Get one with [Sandbox.Files]. Names are absolute paths. With
// Root set, a name is resolved beneath that directory (os.Root): symbolic
// links cannot lead out of it.
//
// Open returns a descriptor opened in the view; reads and writes through
// it then happen in the gateway, as they would on any descriptor passed
// to it. A ViewFiles is safe for concurrent use.
type ViewFiles struct {
	sp *spawner
	s  *Sandbox
}

// fileOp is one file operation's request and reply.
type fileOp struct {
	Op    string `json:"op"`
	Root  string `json:"root,omitempty"`
	Name  string `json:"name"`
	Name2 string `json:"name2,omitempty"`
	Flag  int    `json:"flag,omitempty"`
	Perm  uint32 `json:"perm,omitempty"`
	UID   int    `json:"uid,omitempty"`
	GID   int    `json:"gid,omitempty"`
	Atime int64  `json:"atime,omitempty"`
	Mtime int64  `json:"mtime,omitempty"`
}

// fileReply is what a file operation returns.
type fileReply struct {
	Err   string           `json:"err,omitempty"`
	Errno int              `json:"errno,omitempty"`
	Infos []HelperFileStat `json:"infos,omitempty"`
	Link  string           `json:"link,omitempty"`
}

// HelperFileStat is an fs.FileInfo on the wire.
type HelperFileStat struct {
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	Mode  uint32 `json:"mode"` // fs.FileMode
	MTime int64  `json:"mtime"`
	UID   int    `json:"uid"`
	GID   int    `json:"gid"`
	Ino   uint64 `json:"ino,omitempty"`
}

// viewFileInfo is a HelperFileStat as an fs.FileInfo whose Sys is a
// *syscall.Stat_t with the owner, inode and link count.
type viewFileInfo struct {
	s  HelperFileStat
	st syscall.Stat_t
}

func newViewFileInfo(s HelperFileStat) *viewFileInfo {
	// The gateway's user is root in the view.
	if s.UID == 0 {
		s.UID = os.Geteuid()
	}
	if s.GID == 0 {
		s.GID = os.Getegid()
	}
	fi := &viewFileInfo{s: s}
	fi.st.Uid, fi.st.Gid = uint32(s.UID), uint32(s.GID)
	fi.st.Ino = s.Ino
	fi.st.Size = s.Size
	return fi
}

func (fi *viewFileInfo) Name() string       { return fi.s.Name }
func (fi *viewFileInfo) Size() int64        { return fi.s.Size }
func (fi *viewFileInfo) Mode() fs.FileMode  { return fs.FileMode(fi.s.Mode) }
func (fi *viewFileInfo) ModTime() time.Time { return time.Unix(0, fi.s.MTime) }
func (fi *viewFileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *viewFileInfo) Sys() any           { return &fi.st }

// FileInfo is s as an fs.FileInfo whose Sys is a *syscall.Stat_t with
// the owner and inode, owners as the helper's host numbers them.
func (s HelperFileStat) FileInfo() fs.FileInfo {
	fi := &viewFileInfo{s: s}
	fi.st.Uid, fi.st.Gid = uint32(s.UID), uint32(s.GID)
	fi.st.Ino = s.Ino
	fi.st.Size = s.Size
	return fi
}

// FileError is the error of a file operation's reply (nil if none): a
// *fs.PathError for op and name wrapping the host's errno where there
// was one, so that errors.Is(err, fs.ErrNotExist) and the like work as
// with package os.
func (r *HelperReply) FileError(op, name string) error {
	return replyErr(op, name, fileReply{Err: r.Err, Errno: r.Errno})
}

// replyErr turns a reply's error back into an error: a *fs.PathError
// wrapping the errno where there was one, so that errors.Is(err,
// fs.ErrNotExist) and the like work as with package os.
func replyErr(op, name string, r fileReply) error {
	if r.Err == "" {
		return nil
	}
	if r.Errno != 0 {
		return &fs.PathError{Op: op, Path: name, Err: &viewErrno{errno: syscall.Errno(r.Errno), msg: r.Err}}
	}
	return &fs.PathError{Op: op, Path: name, Err: errors.New(r.Err)}
}

// viewErrno is an errno with the spawner's full message (os.Root's own
// wording included).
type viewErrno struct {
	errno syscall.Errno
	msg   string
}

// Error is the spawner's message, less the "op path: " it begins with when
// it ends in the errno's own words: the *fs.PathError around e names the
// operation and the path already, as the gateway sees the path.
func (e *viewErrno) Error() string {
	if plain := e.errno.Error(); strings.HasSuffix(e.msg, ": "+plain) {
		return plain
	}
	return e.msg
}
func (e *viewErrno) Unwrap() error { return e.errno }
