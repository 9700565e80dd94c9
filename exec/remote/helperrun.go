package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	"github.com/rigout/rigout/exec"
)

// helperMode returns the mode in force for s's host: HelperOff for an
// HelperAuto host when the Router ships no helper. A HelperRequire host
// stays HelperRequire, and is then refused: requiring the helper never
// quietly means plain SSH.
func (s *SSH) helperMode() HelperMode {
	mode := s.ep.Helper
	if mode == "" {
		mode = HelperAuto
	}
	if mode == HelperAuto && !shipsHelper(s.r.cfg.Helper) {
		return HelperOff
	}
	return mode
}

// helper returns the running helper of a pooled connection for s, and the
// connection, whose slot the caller releases. Under HelperRequire, a
// helper that cannot run is an error wrapping ErrHelperRequired.
func (s *SSH) helper(ctx context.Context) (*helperClient, *conn, error) {
	c, err := s.r.pool.acquire(ctx, s.ep.poolKey(s.principal), func(dctx context.Context) (*conn, error) {
		return s.r.dialEndpoint(dctx, s.ep, s.principal)
	})
	if err != nil {
		return nil, nil, err
	}
	h, err := c.helper.get(ctx, s.r, c, s.ep.Name)
	if err != nil {
		c.release()
		if cause := c.lost(); cause != nil {
			return nil, nil, &DisconnectError{Host: s.ep.Name, Err: cause}
		}
		return nil, nil, err
	}
	return h, c, nil
}

// HelperInfo starts (or finds) the helper for s's host and returns what it
// reported. It is a *HelperError when the helper cannot run there, and
// ErrHelperRequired's sibling: an error saying the Router ships none when
// RouterConfig.Helper is nil or the host's mode is off.
func (s *SSH) HelperInfo(ctx context.Context) (exec.HelperInfo, error) {
	if s.helperMode() == HelperOff {
		return exec.HelperInfo{}, &HelperError{Host: s.ep.Name, Reason: "off for this host"}
	}
	h, c, err := s.helper(ctx)
	if err != nil {
		return exec.HelperInfo{}, err
	}
	c.release()
	return h.info, nil
}

// helperPrincipal is the principal a command through the helper runs for.
func (s *SSH) helperPrincipal(ctx context.Context) exec.Principal {
	if s.r.cfg.Helper != nil && s.r.cfg.Helper.Principal != nil {
		return s.r.cfg.Helper.Principal(ctx)
	}
	return exec.Principal{Name: s.principal}
}

// startViaHelper starts cmd through the host's helper. used is false when
// the helper is off or, under HelperAuto, could not run: why then says why
// (empty when off), and the caller takes the plain SSH path. On an error,
// res is the Result to report with it.
func (s *SSH) startViaHelper(ctx context.Context, cmd exec.Command) (p *SSHProcess, res exec.Result, used bool, why string, err error) {
	mode := s.helperMode()
	if mode == HelperOff {
		return nil, res, false, "", nil
	}
	res = exec.Result{Route: s.ep.Route(), ExitCode: -1, Unsandboxed: "remote host: the far side runs no sandbox"}
	if err := cmd.Validate(); err != nil {
		return nil, res, true, "", err
	}
	if s.r.cfg.Check != nil {
		if err := s.r.cfg.Check(ctx, s.ep.Name, cmd); err != nil {
			return nil, res, true, "", err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, res, true, "", fmt.Errorf("exec: not started: %w", err)
	}
	run := &exec.HelperRun{Shell: cmd.Shell, Argv: cmd.Argv, Dir: cmd.Dir, Env: cmd.Env, Secrets: cmd.Secrets,
		Timeout: cmd.Timeout, MaxOutput: cmd.MaxOutput, Principal: s.helperPrincipal(ctx), Stream: cmd.OnOutput != nil}
	run.StdinFollows = cmd.Stdin != nil
	// The host enforces the Timeout; this bound is for a host that does not
	// answer.
	cctx, cancel := context.WithCancel(ctx)
	if cmd.Timeout > 0 {
		cancel()
		cctx, cancel = context.WithTimeout(ctx, cmd.Timeout+s.r.cfg.Grace+s.r.cfg.Drain+5*time.Second)
	}
	h, c, err := s.helper(cctx)
	if err != nil {
		cancel()
		var he *HelperError
		if !errors.As(err, &he) {
			return nil, res, true, "", err
		}
		if mode == HelperRequire {
			return nil, res, true, "", fmt.Errorf("%w: %w", ErrHelperRequired, err)
		}
		return nil, res, false, he.Reason, nil
	}
	res.Route = s.ep.Route() + " via " + h.info.String()
	res.Sandboxed = h.info.Commands != "none"
	res.Unsandboxed = ""
	if !res.Sandboxed {
		res.Unsandboxed = "remote host: the rigout helper runs there, with no sandbox (" + h.info.Sandbox + ")"
	}
	// Connected to the helper (which overlapped whatever Hold waits for).
	if err := cmd.Proceed(); err != nil {
		cancel()
		return nil, res, true, "", err
	}
	id, pc, err := h.begin(exec.HelperRequest{Op: "run", Run: run})
	if err != nil {
		cancel()
		c.release()
		return nil, res, true, "", err
	}
	p = &SSHProcess{s: s, c: c, start: res, done: make(chan struct{}),
		helper: &helperProc{h: h, id: id, cancel: cancel}}
	if cmd.Stdin != nil {
		// Not tracked by the pool: a Read on the caller's reader cannot be
		// interrupted. It ends when the reader ends or the helper does.
		go pumpStdin(h, id, cmd.Stdin, p.done)
	}
	out := newHelperStreams(&cmd)
	s.r.pool.goTracked(func() {
		defer close(p.done)
		defer cancel()
		defer c.release()
		rep, err := h.await(cctx, id, pc, s.r.cfg.Grace+s.r.cfg.Drain+2*time.Second, func(r exec.HelperReply) {
			if r.Pid != 0 {
				p.helper.pid.Store(int64(r.Pid))
			}
			if r.Out != nil {
				out.write(r.Out)
			}
		})
		out.close()
		p.res, p.err = p.start, nil
		if err != nil {
			p.err = err
			if cause := c.lost(); cause != nil {
				p.err = &DisconnectError{Host: s.ep.Name, Err: cause}
			}
			return
		}
		if rep.Result != nil {
			p.res = *rep.Result
			p.res.Route, p.res.Sandboxed, p.res.Unsandboxed = res.Route, res.Sandboxed && rep.Result.Sandboxed, rep.Result.Unsandboxed
		}
		if rep.Err != "" && cctx.Err() == nil {
			p.err = fmt.Errorf("exec: on %s through the rigout helper: %s", s.ep.Name, rep.Err)
			return
		}
		if cctx.Err() != nil {
			// Stopped (by ctx, a SIGKILL or the bound), possibly before
			// it started on the host: a Result, as Wait promises.
			p.res.Canceled = true
		}
		scrubOutput(&cmd, &p.res)
	})
	return p, res, true, "", nil
}

// pumpStdin sends what in yields to run id's standard input on the host,
// then its end.
func pumpStdin(h *helperClient, id uint64, in io.Reader, done <-chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			select {
			case <-done:
				return
			default:
			}
			if h.send(exec.HelperRequest{ID: id, Op: "stdin", Data: buf[:n]}) != nil {
				return
			}
		}
		if err != nil {
			_ = h.send(exec.HelperRequest{ID: id, Op: "stdin", EOF: true})
			return
		}
	}
}

// helperProc is what an SSHProcess started through the helper keeps.
type helperProc struct {
	h      *helperClient
	id     uint64
	cancel context.CancelFunc
	pid    atomic.Int64 // the command's process group on the host, once reported
}

// helperStreams passes streamed output through cmd's Scrub to its
// OnOutput, as a local or plain SSH run does.
type helperStreams struct {
	w [3]io.WriteCloser // by Stream
}

// onOutput is an io.Writer that calls OnOutput for one stream.
type onOutput struct {
	f func(exec.Stream, []byte)
	s exec.Stream
}

func (o onOutput) Write(p []byte) (int, error) { o.f(o.s, p); return len(p), nil }
func (o onOutput) Close() error                { return nil }

func newHelperStreams(cmd *exec.Command) *helperStreams {
	hs := &helperStreams{}
	if cmd.OnOutput == nil {
		return hs
	}
	for _, st := range []exec.Stream{exec.Stdout, exec.Stderr} {
		var w io.WriteCloser = onOutput{cmd.OnOutput, st}
		if cmd.Scrub != nil {
			w = cmd.Scrub(w)
		}
		hs.w[st] = w
	}
	return hs
}

func (hs *helperStreams) write(o *exec.HelperOut) {
	if o.Stream == exec.Stdout || o.Stream == exec.Stderr {
		if w := hs.w[o.Stream]; w != nil {
			_, _ = w.Write(o.Data)
		}
	}
}

func (hs *helperStreams) close() {
	for _, w := range hs.w {
		if w != nil {
			_ = w.Close()
		}
	}
}

// scrubOutput passes the captured output, which the host returned whole,
// through cmd's Scrub.
func scrubOutput(cmd *exec.Command, res *exec.Result) {
	if cmd.Scrub == nil {
		return
	}
	for _, o := range []*exec.Output{&res.Stdout, &res.Stderr} {
		if len(o.Data) == 0 {
			continue
		}
		var b bytes.Buffer
		w := cmd.Scrub(&b)
		_, _ = w.Write(o.Data)
		_ = w.Close()
		o.Data = b.Bytes()
	}
}

// HelperFiles performs file operations on one SSH host through its rigout
// helper: every name is resolved on the host beneath the operation's root
// with openat2 (RESOLVE_BENEATH) in the same system
// call that uses it, so a symbolic link swapped in meanwhile cannot lead
// the operation out of the root, which plain SFTP cannot promise. Names
// are absolute paths beneath root, or relative to it. Errors are
// *fs.PathError wrapping the host's errno where there is one. Get one
// with [SSH.Files]. A HelperFiles is safe for concurrent use.
type HelperFiles struct {
	s *SSH
}

// Files returns the file operations of s's host through its helper. Each
// operation fails with a *HelperError when the helper cannot run there.
func (s *SSH) Files() *HelperFiles { return &HelperFiles{s: s} }

func (f *HelperFiles) do(ctx context.Context, op *exec.HelperFile) (exec.HelperReply, error) {
	if f.s.helperMode() == HelperOff {
		return exec.HelperReply{}, &HelperError{Host: f.s.ep.Name, Reason: "off for this host"}
	}
	h, c, err := f.s.helper(ctx)
	if err != nil {
		return exec.HelperReply{}, err
	}
	defer c.release()
	p := f.s.helperPrincipal(ctx)
	op.Principal = &p
	rep, err := h.call(ctx, exec.HelperRequest{Op: "file", File: op}, 0)
	if err != nil {
		return rep, err
	}
	return rep, rep.FileError(op.Op, op.Name)
}

// ReadFile returns the contents of the regular file name beneath root, at
// most max bytes (if max <= 0, 32 MiB).
func (f *HelperFiles) ReadFile(ctx context.Context, root, name string, max int64) ([]byte, error) {
	rep, err := f.do(ctx, &exec.HelperFile{Op: "read", Root: root, Name: name, Max: max})
	return rep.Data, err
}

// ReadAt reads at most n bytes of the regular file name beneath root from
// offset off; fewer at the end of the file.
func (f *HelperFiles) ReadAt(ctx context.Context, root, name string, off int64, n int) ([]byte, error) {
	rep, err := f.do(ctx, &exec.HelperFile{Op: "read", Root: root, Name: name, Offset: off, Max: int64(max(n, 1))})
	if n == 0 {
		return nil, err
	}
	return rep.Data, err
}

// WriteFile creates or truncates name beneath root and writes data; perm
// applies to a new file (if zero, 0644). flag may add os.O_EXCL.
func (f *HelperFiles) WriteFile(ctx context.Context, root, name string, data []byte, perm fs.FileMode, flag int) error {
	return f.WriteAt(ctx, root, name, data, 0, flag|os.O_CREATE|os.O_TRUNC, perm)
}

// WriteAt writes data at offset off of name beneath root, opened with
// flag's os.O_CREATE, os.O_EXCL and os.O_TRUNC; perm applies to a new
// file (if zero, 0644).
func (f *HelperFiles) WriteAt(ctx context.Context, root, name string, data []byte, off int64, flag int, perm fs.FileMode) error {
	_, err := f.do(ctx, &exec.HelperFile{Op: "write", Root: root, Name: name, Data: data, Offset: off, Perm: uint32(perm.Perm()), Flag: flag})
	return err
}

// Chmod changes the mode of name beneath root.
func (f *HelperFiles) Chmod(ctx context.Context, root, name string, mode fs.FileMode) error {
	_, err := f.do(ctx, &exec.HelperFile{Op: "chmod", Root: root, Name: name, Perm: uint32(mode.Perm()) | unixModeBits(mode)})
	return err
}

// Chown changes the owner of name beneath root.
func (f *HelperFiles) Chown(ctx context.Context, root, name string, uid, gid int) error {
	_, err := f.do(ctx, &exec.HelperFile{Op: "chown", Root: root, Name: name, UID: uid, GID: gid})
	return err
}

// Chtimes sets the access and modification times of name beneath root.
func (f *HelperFiles) Chtimes(ctx context.Context, root, name string, atime, mtime time.Time) error {
	_, err := f.do(ctx, &exec.HelperFile{Op: "chtimes", Root: root, Name: name, Atime: atime.UnixNano(), Mtime: mtime.UnixNano()})
	return err
}

// Readlink returns the target of the symbolic link name beneath root.
func (f *HelperFiles) Readlink(ctx context.Context, root, name string) (string, error) {
	rep, err := f.do(ctx, &exec.HelperFile{Op: "readlink", Root: root, Name: name})
	return rep.Link, err
}

// unixModeBits returns the setuid, setgid and sticky bits of m as
// chmod(2) takes them.
func unixModeBits(m fs.FileMode) uint32 {
	var b uint32
	if m&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

// Stat describes name beneath root, following symbolic links that stay
// beneath it; one leading out is an error (EXDEV).
func (f *HelperFiles) Stat(ctx context.Context, root, name string) (fs.FileInfo, error) {
	return f.info(ctx, "stat", root, name)
}

// Lstat describes name beneath root without following a last component
// that is a symbolic link.
func (f *HelperFiles) Lstat(ctx context.Context, root, name string) (fs.FileInfo, error) {
	return f.info(ctx, "lstat", root, name)
}

func (f *HelperFiles) info(ctx context.Context, op, root, name string) (fs.FileInfo, error) {
	rep, err := f.do(ctx, &exec.HelperFile{Op: op, Root: root, Name: name})
	if err != nil {
		return nil, err
	}
	if len(rep.Infos) != 1 {
		return nil, &fs.PathError{Op: op, Path: name, Err: errors.New("malformed reply from the helper")}
	}
	return rep.Infos[0].FileInfo(), nil
}

// ReadDir lists the directory name beneath root, entries described
// without following symbolic links, in no particular order.
func (f *HelperFiles) ReadDir(ctx context.Context, root, name string) ([]fs.FileInfo, error) {
	rep, err := f.do(ctx, &exec.HelperFile{Op: "readdir", Root: root, Name: name})
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, len(rep.Infos))
	for i, s := range rep.Infos {
		out[i] = s.FileInfo()
	}
	return out, nil
}

// Mkdir makes the directory name beneath root (perm 0755 if zero).
func (f *HelperFiles) Mkdir(ctx context.Context, root, name string, perm fs.FileMode) error {
	_, err := f.do(ctx, &exec.HelperFile{Op: "mkdir", Root: root, Name: name, Perm: uint32(perm.Perm())})
	return err
}

// Remove removes the file or empty directory name beneath root.
func (f *HelperFiles) Remove(ctx context.Context, root, name string) error {
	_, err := f.do(ctx, &exec.HelperFile{Op: "remove", Root: root, Name: name})
	return err
}

// Rename renames oldname to newname, both beneath root.
func (f *HelperFiles) Rename(ctx context.Context, root, oldname, newname string) error {
	_, err := f.do(ctx, &exec.HelperFile{Op: "rename", Root: root, Name: oldname, Name2: newname})
	return err
}

// HelperFiles returns the file operations of host for principal through
// the host's rigout helper, and what the helper reported. It returns:
//
//   - ErrNotSSH when host leads to this machine;
//   - a nil *HelperFiles and a nil error when the Router ships no helper or
//     the host's mode is off (use plain SFTP);
//   - under HelperAuto, when the helper cannot run there, a nil
//     *HelperFiles and the *HelperError saying why (fall back to SFTP and
//     say so);
//   - under HelperRequire, then, an error wrapping ErrHelperRequired
//     (refuse);
//   - any other error (dial, host key) as is.
func (r *Router) HelperFiles(ctx context.Context, host, principal string) (*HelperFiles, exec.HelperInfo, error) {
	t, err := r.Resolve(ctx, host, principal)
	if err != nil {
		return nil, exec.HelperInfo{}, err
	}
	s, ok := t.Runner.(*SSH)
	if t.Local || !ok {
		return nil, exec.HelperInfo{}, ErrNotSSH
	}
	mode := s.helperMode()
	if mode == HelperOff {
		return nil, exec.HelperInfo{}, nil
	}
	info, err := s.HelperInfo(ctx)
	if err != nil {
		var he *HelperError
		if errors.As(err, &he) && mode == HelperRequire {
			return nil, exec.HelperInfo{}, fmt.Errorf("%w: %w", ErrHelperRequired, err)
		}
		return nil, exec.HelperInfo{}, err
	}
	return s.Files(), info, nil
}

// PolicyReadlink returns, for the command policy (validate.Options.Readlink
// and gate.Command.Readlink), a function that reads a symbolic link of s's
// host through its helper, within ctx: in the principal's view where the
// host gives views (its /proc shows the principal's own processes, hidden
// paths stay hidden), else as the login sees it. It starts the helper if
// needed. It returns nil when the helper is not in use for the host (off,
// or unavailable: the policy then judges without the host's links, as
// over plain SSH, and a HelperRequire host refuses the command anyway).
func (s *SSH) PolicyReadlink(ctx context.Context) func(name string) (string, error) {
	if s.helperMode() == HelperOff {
		return nil
	}
	if _, err := s.HelperInfo(ctx); err != nil {
		return nil
	}
	files := s.Files()
	return func(name string) (string, error) {
		rep, err := files.do(ctx, &exec.HelperFile{Op: "hostreadlink", Name: name})
		if err != nil {
			return "", err
		}
		return rep.Link, nil
	}
}

// describeHelper says, for Describe, what holds on s's host.
func (s *SSH) describeHelper(ctx context.Context) string {
	mode := s.helperMode()
	if mode == HelperOff {
		if s.ep.Helper == HelperOff {
			return "off for this host: commands run with the login's full powers and files go over plain SFTP"
		}
		return "none: " + noHelperReason(s.r.cfg.Helper) + "; commands run with the login's full powers and files go over plain SFTP"
	}
	info, err := s.HelperInfo(ctx)
	if err != nil {
		if mode == HelperRequire {
			return "required but unavailable (" + err.Error() + "): commands and file operations are refused"
		}
		return "unavailable (" + err.Error() + "): falling back to plain SSH and SFTP, the far side runs no sandbox"
	}
	d := info.String() + "; sandbox: " + info.Sandbox
	if info.Runs != "" {
		d += "; runs from: " + info.Runs
	}
	if o := s.r.cfg.Helper.Origin; o != "" {
		d += "; shipped: " + o
	}
	return d
}
