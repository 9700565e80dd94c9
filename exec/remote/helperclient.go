package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
)

// Exit statuses of the helper's start line (helperStartLine).
const (
	helperExitMissing  = 85 // no helper file at the cached path
	helperExitMismatch = 86 // the file's SHA-256 is not the expected one
)

// helperHelloTimeout bounds the wait for a started helper's hello (the
// host's sandbox is built before it).
const helperHelloTimeout = 30 * time.Second

// helperClient is one running helper on a pooled connection: requests are
// multiplexed on its session by ID.
type helperClient struct {
	sess *ssh.Session
	in   io.WriteCloser
	info exec.HelperInfo

	// wmu serializes writes to in.
	wmu sync.Mutex

	// mu protects the following.
	mu      sync.Mutex
	next    uint64
	pending map[uint64]*pendingCall
	err     error // why the helper ended; set once dead is closed

	dead chan struct{}
}

// readLoop delivers replies until the helper's output ends.
func (h *helperClient) readLoop(out io.Reader) {
	var err error
	for {
		var rep exec.HelperReply
		if err = exec.ReadHelperFrame(out, &rep); err != nil {
			break
		}
		h.mu.Lock()
		pc := h.pending[rep.ID]
		if !rep.More {
			delete(h.pending, rep.ID)
		}
		h.mu.Unlock()
		if pc != nil {
			// A slow consumer of streamed output holds up this helper's
			// other replies (they share its one channel), until it gives up.
			select {
			case pc.ch <- rep:
			case <-pc.gone:
			}
		}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the helper ended")
	}
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	close(h.dead)
}

func (h *helperClient) alive() bool {
	select {
	case <-h.dead:
		return false
	default:
		return true
	}
}

// call sends req and waits for its reply (see await).
func (h *helperClient) call(ctx context.Context, req exec.HelperRequest, linger time.Duration) (exec.HelperReply, error) {
	id, pc, err := h.begin(req)
	if err != nil {
		return exec.HelperReply{}, err
	}
	return h.await(ctx, id, pc, linger, nil)
}

// pendingCall is a request awaiting replies.
type pendingCall struct {
	ch   chan exec.HelperReply
	gone chan struct{} // closed when the caller stops waiting
	once sync.Once
}

// begin sends req under a new ID and returns the ID and its pending call.
func (h *helperClient) begin(req exec.HelperRequest) (uint64, *pendingCall, error) {
	pc := &pendingCall{ch: make(chan exec.HelperReply, 16), gone: make(chan struct{})}
	h.mu.Lock()
	h.next++
	req.ID = h.next
	if h.pending == nil {
		h.pending = map[uint64]*pendingCall{}
	}
	h.pending[req.ID] = pc
	h.mu.Unlock()
	if err := h.send(req); err != nil {
		h.forget(req.ID, pc)
		return 0, nil, fmt.Errorf("exec: helper request: %w", err)
	}
	return req.ID, pc, nil
}

func (h *helperClient) forget(id uint64, pc *pendingCall) {
	h.mu.Lock()
	delete(h.pending, id)
	h.mu.Unlock()
	pc.once.Do(func() { close(pc.gone) })
}

// await waits for the last reply to request id, passing the ones before
// it (More set) to more. If ctx ends first: a run is cancelled on the host
// and its last reply (the Result of a cancelled command) is still awaited,
// for at most linger; anything else is abandoned (linger 0).
func (h *helperClient) await(ctx context.Context, id uint64, pc *pendingCall, linger time.Duration, more func(exec.HelperReply)) (exec.HelperReply, error) {
	done := ctx.Done()
	var expire <-chan time.Time
	for {
		select {
		case rep := <-pc.ch:
			if rep.More {
				if more != nil {
					more(rep)
				}
				continue
			}
			return rep, nil
		case <-h.dead:
			h.forget(id, pc)
			return exec.HelperReply{}, fmt.Errorf("exec: helper: %w", h.err)
		case <-done:
			if linger <= 0 {
				h.forget(id, pc)
				return exec.HelperReply{}, ctx.Err()
			}
			_ = h.send(exec.HelperRequest{ID: id, Op: "cancel"})
			done = nil
			t := time.NewTimer(linger)
			defer t.Stop()
			expire = t.C
		case <-expire:
			h.forget(id, pc)
			return exec.HelperReply{}, ctx.Err()
		}
	}
}

func (h *helperClient) send(req exec.HelperRequest) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return exec.WriteHelperFrame(h.in, req)
}

func (h *helperClient) close() {
	h.in.Close()
	h.sess.Close()
}

// helperSlot is a pooled connection's helper, started on first use. A
// failure is kept for the connection's life, so that a host that cannot
// run the helper costs one attempt per connection, not one per call.
type helperSlot struct {
	// mu protects the following.
	mu     sync.Mutex
	client *helperClient
	err    error
}

// get returns the connection's running helper, starting it (and uploading
// it first if needed) when there is none.
func (s *helperSlot) get(ctx context.Context, r *Router, c *conn, host string) (*helperClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	if s.client != nil && s.client.alive() {
		return s.client, nil
	}
	h, err := startHelper(ctx, r.cfg.Helper, c, host)
	if err != nil {
		if ctx.Err() == nil {
			s.err = err
		}
		return nil, err
	}
	s.client = h
	return h, nil
}

func (s *helperSlot) close() {
	s.mu.Lock()
	h := s.client
	s.client = nil
	s.mu.Unlock()
	if h != nil {
		h.close()
	}
}

// helperArch maps `uname -m` to GOARCH.
func helperArch(machine string) (string, bool) {
	switch machine {
	case "x86_64", "amd64":
		return "amd64", true
	case "aarch64", "arm64":
		return "arm64", true
	case "armv7l", "armv6l":
		return "arm", true
	case "i686", "i386":
		return "386", true
	case "riscv64", "ppc64le", "s390x":
		return machine, true
	}
	return "", false
}

// helperCacheDir returns cfg's cache directory relative to the home.
func helperCacheDir(cfg *HelperConfig) string {
	if cfg.CacheDir != "" {
		return strings.Trim(path.Clean(cfg.CacheDir), "/")
	}
	return ".cache/rigout"
}

// HelperStartLine returns the remote command line that starts the helper
// whose SHA-256 is sum from cacheDir (relative to $HOME): it exits 85 when
// the file is missing, 86 when its bytes do not hash to sum — without
// running it — and otherwise execs it. The file is opened once, on
// descriptor 3, and both hashed and executed (/proc/self/fd/3) through
// that descriptor, so a file renamed over it in between is neither: what
// runs is the inode that was hashed. The helper then re-executes itself
// from a sealed memfd of its own bytes, hashed again (ExecSealedHelper).
// hidden are passed as -hide flags.
func HelperStartLine(sum, cacheDir string, hidden []string) (string, error) {
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return "", fmt.Errorf("exec: helper hash %q is not a lowercase SHA-256", sum)
	}
	qd, err := exec.QuotePOSIX(cacheDir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `d="$HOME"/%s && f="$d"/helper-%s && { [ -f "$f" ] || exit %d; } && `, qd, sum, helperExitMissing)
	fmt.Fprintf(&b, `exec 3<"$f" && h=$(sha256sum <&3) && [ "${h%%%% *}" = %s ] || exit %d; `, sum, helperExitMismatch)
	fmt.Fprintf(&b, `exec /proc/self/fd/3 serve -cache "$d" -sha256 %s -exe-fd 3`, sum)
	for _, h := range hidden {
		q, err := exec.QuotePOSIX(h)
		if err != nil {
			return "", err
		}
		b.WriteString(" -hide " + q)
	}
	return b.String(), nil
}

// startHelper starts the helper on c, uploading it when the host has no
// verified copy, and waits for its hello.
func startHelper(ctx context.Context, cfg *HelperConfig, c *conn, host string) (*helperClient, error) {
	fail := func(reason string, err error) (*helperClient, error) {
		return nil, &HelperError{Host: host, Reason: reason, Err: err}
	}
	if !shipsHelper(cfg) {
		return fail(noHelperReason(cfg), nil)
	}
	out, err := runOn(ctx, c, `uname -sm && printf '%s\n' "$HOME"`)
	if err != nil {
		return fail("uname", err)
	}
	uname, home, _ := strings.Cut(out, "\n")
	home = strings.TrimSuffix(home, "\n")
	f := strings.Fields(uname)
	if len(f) != 2 || f[0] != "Linux" {
		return fail(fmt.Sprintf("not a Linux host (uname -sm: %q)", strings.TrimSpace(uname)), nil)
	}
	if !path.IsAbs(home) {
		return fail(fmt.Sprintf("the login has no absolute $HOME (%q)", home), nil)
	}
	arch, ok := helperArch(f[1])
	if !ok {
		return fail("unknown architecture "+f[1], nil)
	}
	bin := cfg.Binaries["linux/"+arch]
	if len(bin) == 0 {
		return fail("no helper binary configured for linux/"+arch, nil)
	}
	h := sha256.Sum256(bin)
	sum := hex.EncodeToString(h[:])
	dir := helperCacheDir(cfg)
	line, err := HelperStartLine(sum, dir, cfg.Hidden)
	if err != nil {
		return fail("start line", err)
	}
	var tampered, uploaded bool
	var upload string
	for attempt := 0; ; attempt++ {
		hc, code, err := launchHelper(ctx, c, line)
		if err == nil {
			hc.info.Tampered, hc.info.Uploaded, hc.info.Upload = tampered, uploaded, upload
			return hc, nil
		}
		switch {
		case code == helperExitMissing && attempt == 0:
		case code == helperExitMismatch && attempt == 0:
			tampered = true
		case code == helperExitMismatch:
			return fail("the helper's hash did not match after a fresh upload: it was not run", err)
		case code == 126 || code == 127:
			return fail("the helper could not be executed (a noexec home? no /proc?)", err)
		default:
			return fail("start", err)
		}
		t0 := time.Now()
		if err := uploadHelper(ctx, c, path.Join(home, dir), sum, bin); err != nil {
			return fail("upload", err)
		}
		uploaded = true
		upload = fmt.Sprintf("%d bytes in %v", len(bin), time.Since(t0).Round(time.Millisecond))
	}
}

// launchHelper runs line on c and reads the helper's hello. On failure it
// returns the remote exit status, if the line exited.
func launchHelper(ctx context.Context, c *conn, line string) (*helperClient, int, error) {
	sess, err := c.client.NewSession()
	if err != nil {
		return nil, -1, err
	}
	in, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		return nil, -1, err
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		sess.Close()
		return nil, -1, err
	}
	var stderr bytes.Buffer
	sess.Stderr = &cappedBuffer{b: &stderr, n: 4096}
	if err := sess.Start(line); err != nil {
		sess.Close()
		return nil, -1, err
	}
	hello := make(chan error, 1)
	var rep exec.HelperReply
	c.p.goTracked(func() { hello <- exec.ReadHelperFrame(out, &rep) })
	t := time.NewTimer(helperHelloTimeout)
	defer t.Stop()
	select {
	case err = <-hello:
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = errors.New("no hello from the helper")
	}
	if err == nil && rep.Hello == nil {
		err = errors.New("the helper's first frame is not a hello")
	}
	if err != nil {
		in.Close()
		sess.Close()
		code := -1
		var ee *ssh.ExitError
		if werr := sess.Wait(); errors.As(werr, &ee) {
			code = ee.ExitStatus()
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w (stderr: %s)", err, msg)
		}
		if code >= 0 {
			err = fmt.Errorf("exit status %d: %w", code, err)
		}
		return nil, code, err
	}
	hc := &helperClient{sess: sess, in: in, info: *rep.Hello, dead: make(chan struct{})}
	c.p.goTracked(func() { hc.readLoop(out) })
	return hc, 0, nil
}

// cappedBuffer keeps the first n bytes written.
type cappedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *cappedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// runOn runs line on c and returns its standard output.
func runOn(ctx context.Context, c *conn, line string) (string, error) {
	sess, err := c.client.NewSession()
	if err != nil {
		return "", err
	}
	defer sess.Close()
	stop := context.AfterFunc(ctx, func() { sess.Close() })
	defer stop()
	out, err := sess.Output(line)
	return string(out), err
}

// uploadHelper writes bin over SFTP to dir/helper-SUM (dir absolute: the
// cache directory beneath the login's $HOME): the directory made 0700, the file written under a temporary name,
// made 0500 and renamed into place over whatever was there.
func uploadHelper(ctx context.Context, c *conn, full, sum string, bin []byte) error {
	cl, err := c.sftp.get(ctx, c)
	if err != nil {
		return err
	}
	if err := cl.MkdirAll(full); err != nil {
		return fmt.Errorf("mkdir %s: %w", full, err)
	}
	if err := cl.Chmod(full, 0o700); err != nil {
		return err
	}
	final := path.Join(full, "helper-"+sum)
	tmp := path.Join(full, fmt.Sprintf(".helper-%s.%d.tmp", sum[:16], time.Now().UnixNano()))
	f, err := cl.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	if _, err := f.ReadFrom(bytes.NewReader(bin)); err != nil { // pipelined writes
		f.Close()
		_ = cl.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = cl.Remove(tmp)
		return err
	}
	if err := cl.Chmod(tmp, 0o500); err != nil {
		_ = cl.Remove(tmp)
		return err
	}
	if err := cl.PosixRename(tmp, final); err != nil {
		// No posix-rename extension: remove the old file first.
		_ = cl.Remove(final)
		if err := cl.Rename(tmp, final); err != nil {
			_ = cl.Remove(tmp)
			return err
		}
	}
	return nil
}
