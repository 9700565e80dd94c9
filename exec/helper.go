package exec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// HelperVersion is the version of the helper protocol and program. A
// host's cached helper is named by its SHA-256, so a new build is uploaded
// whatever this says; the helper reports it in its hello.
const HelperVersion = "1"

// HelperInfo is what a helper reports about itself when it starts.
type HelperInfo struct {
	// Version is the helper's HelperVersion.
	Version string `json:"version"`
	// SHA256 is the hash of the helper file that was verified and started.
	SHA256 string `json:"sha256,omitempty"`
	// Runs says where the running code comes from: "sealed memfd" (read
	// once from the verified file into a memfd, sealed, hashed again and
	// executed from it: see ExecSealedHelper), or why it runs from the
	// cached file itself.
	Runs string `json:"runs,omitempty"`
	// Commands says how commands are confined on the host: "view"
	// (per-principal namespaces beneath Landlock and seccomp), "landlock",
	// or "none".
	Commands string `json:"commands"`
	// Sandbox is the host sandbox's status line (SandboxStatus.String).
	Sandbox string `json:"sandbox"`
	// Files says how file operations resolve names: "in the principal's
	// view, beneath the root" (where Commands is "view"), "openat2 beneath
	// the root" (RESOLVE_BENEATH, with the login's powers), or why they
	// cannot.
	Files string `json:"files"`
	// Uploaded is set when this start followed an upload, and Upload says
	// how many bytes took how long.
	Uploaded bool   `json:"uploaded,omitempty"`
	Upload   string `json:"upload,omitempty"`
	// Tampered is set when a cached helper's bytes did not match its hash:
	// it was never run, and was replaced.
	Tampered bool `json:"tampered,omitempty"`
}

// String returns the summary used in route lines.
func (i HelperInfo) String() string {
	return fmt.Sprintf("rigout-helper %s (commands: %s; files: %s)", i.Version, i.Commands, i.Files)
}

// ErrHelperSealMismatch means a helper's own bytes, once sealed in memory,
// did not hash to the value the start line verified, or the running
// program is not the sealed memfd it should be: the helper does not serve,
// and exits as a start line whose hash does not match does.
var ErrHelperSealMismatch = errors.New("exec: the helper's sealed bytes do not match its hash")

// maxHelperFrame bounds one frame of the helper protocol.
const maxHelperFrame = 64 << 20

// HelperRequest is one request to a helper. ID pairs it with its reply.
type HelperRequest struct {
	ID     uint64      `json:"id"`
	Op     string      `json:"op"` // "run", "stdin", "cancel", "signal", "file"
	Run    *HelperRun  `json:"run,omitempty"`
	File   *HelperFile `json:"file,omitempty"`
	Signal int         `json:"signal,omitempty"` // signal: the signal number
	Data   []byte      `json:"data,omitempty"`   // stdin: the next bytes
	EOF    bool        `json:"eof,omitempty"`    // stdin: the input ends
}

// HelperRun is a command for the helper to run.
type HelperRun struct {
	Shell   string            `json:"shell,omitempty"`
	Argv    []string          `json:"argv,omitempty"`
	Dir     string            `json:"dir,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Secrets map[string]string `json:"secrets,omitempty"`
	// StdinFollows says the standard input comes in "stdin" requests, as
	// the caller's reader yields it; otherwise the command reads nothing.
	StdinFollows bool          `json:"stdin_follows,omitempty"`
	Timeout      time.Duration `json:"timeout,omitempty"`
	MaxOutput    int           `json:"max_output,omitempty"`
	Principal    Principal     `json:"principal"`
	// Stream asks for the output as it comes, in replies with More set.
	Stream bool `json:"stream,omitempty"`
	// PTY, if set, runs the command on a pseudo-terminal of this size in
	// the principal's view (Local.StartPTY): its output is streamed as
	// Stdout, "stdin" requests type into it, a SIGHUP "signal" hangs it
	// up, and "cancel" closes it. Env's TERM names the terminal type.
	PTY *PTYSize `json:"pty,omitempty"`
}

// HelperFile is a file operation beneath Root. Name and Name2 are
// absolute paths beneath Root, or relative to it.
type HelperFile struct {
	Op     string `json:"op"` // read, write, stat, lstat, readdir, mkdir, remove, rename, chmod, chown, chtimes, readlink
	Root   string `json:"root"`
	Name   string `json:"name"`
	Name2  string `json:"name2,omitempty"`
	Data   []byte `json:"data,omitempty"`
	Offset int64  `json:"offset,omitempty"` // read and write: where
	Perm   uint32 `json:"perm,omitempty"`
	Max    int64  `json:"max,omitempty"`  // read: at most this many bytes
	Flag   int    `json:"flag,omitempty"` // write: os.O_CREATE, os.O_EXCL, os.O_TRUNC
	UID    int    `json:"uid,omitempty"`
	GID    int    `json:"gid,omitempty"`
	Atime  int64  `json:"atime,omitempty"` // chtimes: Unix nanoseconds
	Mtime  int64  `json:"mtime,omitempty"`
	// Principal, if set, is who the operation is for: where the host
	// gives views, it runs inside that principal's view (ViewFiles), so
	// hidden paths inside the root are out of its reach as they are out
	// of the principal's commands'.
	Principal *Principal `json:"principal,omitempty"`
}

// HelperReply is a helper's answer. The first frame a helper writes is a
// reply with ID 0 and Hello set. A run's replies before its last have More
// set: one with Pid once started, then its output when streamed.
type HelperReply struct {
	ID     uint64           `json:"id"`
	More   bool             `json:"more,omitempty"`
	Pid    int              `json:"pid,omitempty"`
	Out    *HelperOut       `json:"out,omitempty"`
	Hello  *HelperInfo      `json:"hello,omitempty"`
	Err    string           `json:"err,omitempty"`
	Errno  int              `json:"errno,omitempty"`
	Result *Result          `json:"result,omitempty"`
	Infos  []HelperFileStat `json:"infos,omitempty"`
	Data   []byte           `json:"data,omitempty"`
	Link   string           `json:"link,omitempty"`
}

// WriteHelperFrame writes v as one frame: a 4-byte big-endian length and JSON.
func WriteHelperFrame(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > maxHelperFrame {
		return fmt.Errorf("exec: helper frame of %d bytes exceeds %d", len(b), maxHelperFrame)
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err = w.Write(buf)
	return err
}

// ReadHelperFrame reads one frame into v.
func ReadHelperFrame(r io.Reader, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxHelperFrame {
		return fmt.Errorf("exec: helper frame of %d bytes exceeds %d", size, maxHelperFrame)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("exec: short helper frame: %w", err)
	}
	return json.Unmarshal(b, v)
}

// HelperOut is a chunk of a streamed run's output.
type HelperOut struct {
	Stream Stream `json:"stream"`
	Data   []byte `json:"data"`
}
