package exec

import (
	"context"
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

// HelperMode says whether a host's commands and file operations go through
// the rigout helper (see HelperConfig).
type HelperMode string

// The helper modes.
const (
	// HelperAuto (also the zero value) uses the helper where it can run and
	// otherwise falls back to plain SSH and SFTP, saying so in each
	// Result's Route and Unsandboxed.
	HelperAuto HelperMode = "auto"
	// HelperRequire refuses a host's commands and file operations when the
	// helper cannot run there.
	HelperRequire HelperMode = "require"
	// HelperOff never uses the helper for the host (plain SSH and SFTP,
	// today's behaviour; the far side then runs no sandbox).
	HelperOff HelperMode = "off"
)

// Validate reports whether m is a known mode.
func (m HelperMode) Validate() error {
	switch m {
	case "", HelperAuto, HelperRequire, HelperOff:
		return nil
	}
	return fmt.Errorf("exec: helper mode %q: want auto, require or off", string(m))
}

// HelperConfig ships rigout's helper to SSH hosts (RouterConfig.Helper):
// on first use of a Linux host, the helper for its architecture is
// uploaded over SFTP into a per-user cache directory, verified by its
// SHA-256 after upload and before every start, and then runs the host's
// commands (in a per-principal view of the host, where its kernel allows)
// and file operations (openat2 with RESOLVE_BENEATH: nothing leads out of
// the root, however links are swapped). See docs/SSH_HELPER.md.
type HelperConfig struct {
	// Binaries holds the helper program per platform, keyed "linux/amd64",
	// "linux/arm64" and so on (GOOS/GOARCH). A host whose platform has no
	// entry falls back (or is refused under HelperRequire). With no
	// entries at all, no helper is shipped: HelperAuto hosts are reached by
	// plain SSH and SFTP, Describe saying so with Origin, and HelperRequire
	// hosts are refused. FindHelperBinaries reads a release's.
	Binaries map[string][]byte `json:"-"`
	// Origin says where Binaries came from ("linux/amd64 beside
	// /usr/local/bin/rigout", "ssh.helper.binaries") or, when it is empty,
	// where none was found. Describe reports it; it changes nothing else.
	Origin string
	// CacheDir is where the helper is kept on a host, relative to the
	// login's home directory. If empty, ".cache/rigout". It is made 0700;
	// the helper file is 0500 and named helper-<sha256>.
	CacheDir string
	// Hidden lists further paths on the host that commands through the
	// helper cannot read, relative to the login's home unless absolute.
	// The helper always hides ~/.ssh, ~/.gnupg, its own cache directory,
	// the agent socket ($SSH_AUTH_SOCK) and $XDG_RUNTIME_DIR.
	Hidden []string
	// Principal returns the principal a command runs for, from the call's
	// context, as ViewConfig.Principal. If nil, the principal is the one
	// the SSH runner was resolved for, with no roots scope.
	Principal func(ctx context.Context) Principal `json:"-"`
}

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

// HelperError reports that a host's helper could not be used: not Linux,
// no binary for its platform, an upload or start that failed, a hash that
// did not match after a fresh upload.
type HelperError struct {
	// Host is the host asked for.
	Host string
	// Reason says why, in words.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *HelperError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("exec: rigout helper on %s: %s: %v", e.Host, e.Reason, e.Err)
	}
	return fmt.Sprintf("exec: rigout helper on %s: %s", e.Host, e.Reason)
}

// Unwrap returns Err.
func (e *HelperError) Unwrap() error { return e.Err }

// ErrHelperRequired means a host whose mode is HelperRequire cannot run the
// helper; the *HelperError wrapping it says why.
var ErrHelperRequired = errors.New("exec: rigout helper required on this host")

// ErrHelperSealMismatch means a helper's own bytes, once sealed in memory,
// did not hash to the value the start line verified, or the running
// program is not the sealed memfd it should be: the helper does not serve,
// and exits as a start line whose hash does not match does.
var ErrHelperSealMismatch = errors.New("exec: the helper's sealed bytes do not match its hash")

// maxHelperFrame bounds one frame of the helper protocol.
const maxHelperFrame = 64 << 20

// helperRequest is one request to a helper. ID pairs it with its reply.
type helperRequest struct {
	ID     uint64      `json:"id"`
	Op     string      `json:"op"` // "run", "stdin", "cancel", "signal", "file"
	Run    *helperRun  `json:"run,omitempty"`
	File   *helperFile `json:"file,omitempty"`
	Signal int         `json:"signal,omitempty"` // signal: the signal number
	Data   []byte      `json:"data,omitempty"`   // stdin: the next bytes
	EOF    bool        `json:"eof,omitempty"`    // stdin: the input ends
}

// helperRun is a command for the helper to run.
type helperRun struct {
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

// helperFile is a file operation beneath Root. Name and Name2 are
// absolute paths beneath Root, or relative to it.
type helperFile struct {
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

// helperReply is a helper's answer. The first frame a helper writes is a
// reply with ID 0 and Hello set. A run's replies before its last have More
// set: one with Pid once started, then its output when streamed.
type helperReply struct {
	ID     uint64      `json:"id"`
	More   bool        `json:"more,omitempty"`
	Pid    int         `json:"pid,omitempty"`
	Out    *helperOut  `json:"out,omitempty"`
	Hello  *HelperInfo `json:"hello,omitempty"`
	Err    string      `json:"err,omitempty"`
	Errno  int         `json:"errno,omitempty"`
	Result *Result     `json:"result,omitempty"`
	Infos  []fileStat  `json:"infos,omitempty"`
	Data   []byte      `json:"data,omitempty"`
	Link   string      `json:"link,omitempty"`
}

// writeFrame writes v as one frame: a 4-byte big-endian length and JSON.
func writeFrame(w io.Writer, v any) error {
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

// readFrame reads one frame into v.
func readFrame(r io.Reader, v any) error {
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

// helperOut is a chunk of a streamed run's output.
type helperOut struct {
	Stream Stream `json:"stream"`
	Data   []byte `json:"data"`
}
