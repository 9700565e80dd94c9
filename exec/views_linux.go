package exec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// viewSet keeps one spawner per principal view of a Sandbox.
type viewSet struct {
	cfg ViewConfig
	exe string // the program, started again as each spawner; set by probe

	// probed is closed once the probe has run; err then says why views are
	// unavailable, if they are.
	probed chan struct{}
	err    error
	// limit, once probed, says what views do not give on this kernel.
	limit string

	// mu protects the following.
	mu       sync.Mutex
	spawners map[string]*spawner
	closed   bool
}

// spawnerStartTimeout bounds a spawner's start and the building of its view.
const spawnerStartTimeout = 30 * time.Second

func newViewSet(cfg ViewConfig) *viewSet {
	c := cfg
	c.Writable = cleanPaths(cfg.Writable)
	c.ReadOnly = cleanPaths(cfg.ReadOnly)
	c.Hidden = cleanPaths(cfg.Hidden)
	c.HideSockets = cleanPaths(cfg.HideSockets)
	if c.MaxPrincipals <= 0 {
		c.MaxPrincipals = 64
	}
	v := &viewSet{cfg: c, probed: make(chan struct{}), spawners: map[string]*spawner{}}
	// The gateway writes each spawner's ID maps into /proc/PID, which a
	// non-dumpable process cannot do without privileges: a gateway that
	// made itself non-dumpable (rigout does at start) becomes dumpable
	// again while views work, since no command can see it from a view.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	go func() {
		defer close(v.probed)
		if v.err = v.probe(); v.err != nil {
			// Commands fall back to the Landlock sandbox, which needs the
			// gateway non-dumpable (see Sandbox). In a view the gateway's
			// /proc files are out of sight, and a dumpable gateway is what
			// lets it write its spawners' ID maps.
			_ = protectProcess()
		}
	}()
	return v
}

// probe starts a spawner for a read-only principal and ends it: views are
// available when that works.
func (v *viewSet) probe() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("no program to start as the spawner: %w", err)
	}
	if strings.HasPrefix(exe, "/memfd:") {
		// A helper running from its sealed memfd (ExecSealedHelper): the
		// memfd has no path, but the kernel's link to it does.
		exe = "/proc/self/exe"
	}
	v.exe = exe
	sp, err := v.start(Principal{Name: "probe", ReadOnly: true})
	if err != nil {
		return err
	}
	v.limit = sp.limit
	sp.close()
	return nil
}

// limits returns, once probed, what views do not give on this kernel.
func (v *viewSet) limits() string {
	<-v.probed
	return v.limit
}

// available waits for the probe and returns why views are unavailable.
func (v *viewSet) available() error {
	<-v.probed
	return v.err
}

// spec is the view of p.
func (v *viewSet) spec(p Principal) viewSpec {
	s := viewSpec{
		ReadOnly:    v.cfg.ReadOnly,
		Hidden:      v.cfg.Hidden,
		HideSockets: v.cfg.HideSockets,
		ShowSockets: cleanPaths(p.Sockets),
		Offline:     p.Offline,
		SharedProc:  v.cfg.sharedProc,
	}
	switch {
	case p.ReadOnly:
		s.Visible = v.cfg.Writable
	case len(p.Roots) > 0:
		s.Visible = v.cfg.Writable
		s.Writable = cleanPaths(p.Roots)
	default:
		s.Writable = v.cfg.Writable
	}
	return s
}

// spawnerFor returns the running spawner of p's view, starting one if
// needed.
func (v *viewSet) spawnerFor(p Principal) (*spawner, error) {
	key := p.key()
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil, ErrSandboxClosed
	}
	if sp := v.spawners[key]; sp != nil && sp.alive() {
		sp.touch()
		v.mu.Unlock()
		return sp, nil
	}
	v.mu.Unlock()
	sp, err := v.start(p)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		sp.close()
		return nil, ErrSandboxClosed
	}
	if old := v.spawners[key]; old != nil && old.alive() {
		sp.close() // another call started one first
		old.touch()
		return old, nil
	}
	v.spawners[key] = sp
	v.evictLocked()
	return sp, nil
}

// evictLocked ends the longest idle spawners beyond MaxPrincipals, among
// those running no command.
func (v *viewSet) evictLocked() {
	for len(v.spawners) > v.cfg.MaxPrincipals {
		var oldest *spawner
		var oldestKey string
		for k, sp := range v.spawners {
			if sp.running() == 0 && (oldest == nil || sp.idleSince().Before(oldest.idleSince())) {
				oldest, oldestKey = sp, k
			}
		}
		if oldest == nil {
			return
		}
		delete(v.spawners, oldestKey)
		go oldest.close()
	}
}

// close ends every spawner, and with them every command in a view.
func (v *viewSet) close() {
	v.mu.Lock()
	v.closed = true
	sps := v.spawners
	v.spawners = nil
	v.mu.Unlock()
	for _, sp := range sps {
		sp.close()
	}
}

// start starts a spawner for p and waits until its view is built.
func (v *viewSet) start(p Principal) (*spawner, error) {
	spec := v.spec(p)
	tmp := filepath.Join(v.cfg.TmpDir, p.key())
	if err := os.MkdirAll(v.cfg.TmpDir, 0o700); err != nil {
		return nil, fmt.Errorf("exec: sandbox view: %w", err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("exec: sandbox view: private /tmp: %w", err)
	}
	// Sticky and open to all, as /tmp is: TmpDir, owner-only, keeps
	// others out.
	if err := os.Chmod(tmp, 0o1777|os.ModeSticky); err != nil {
		return nil, fmt.Errorf("exec: sandbox view: private /tmp: %w", err)
	}
	spec.Tmp = tmp
	mnt, err := os.MkdirTemp(v.cfg.TmpDir, ".root-")
	if err != nil {
		return nil, fmt.Errorf("exec: sandbox view: %w", err)
	}
	spec.Mount = mnt

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		os.Remove(mnt)
		return nil, fmt.Errorf("exec: sandbox view: socketpair: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "spawner")
	var stderr bytes.Buffer
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC)
	if p.Offline {
		flags |= unix.CLONE_NEWNET
	}
	c := &osexec.Cmd{
		Path:       v.exe,
		Args:       []string{spawnerArg0},
		Env:        []string{spawnerEnv + "=1", "PATH=/usr/bin:/bin"},
		ExtraFiles: []*os.File{theirs},
		Stderr:     &limitedBuffer{b: &stderr, max: 4096},
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:                 flags,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
			GidMappingsEnableSetgroups: false,
			Pdeathsig:                  syscall.SIGKILL,
			Setsid:                     true,
		},
	}
	if err := c.Start(); err != nil {
		theirs.Close()
		unix.Close(fds[0])
		os.Remove(mnt)
		return nil, fmt.Errorf("exec: sandbox view: start the spawner: %w", err)
	}
	theirs.Close()
	sp := &spawner{
		cmd: c, sock: fds[0], mnt: mnt,
		pending:  map[uint64]chan reply{},
		children: map[uint64]*nsChild{},
		done:     make(chan struct{}),
		last:     time.Now(),
	}
	ready := make(chan error, 1)
	setup := make(chan reply, 1)
	sp.pending[0] = setup
	go sp.read()
	go func() {
		r := <-setup
		switch {
		case r.err != nil:
			ready <- r.err
		case r.msg.Op == "ready":
			sp.limit = r.msg.Err
			ready <- nil
		case r.msg.Op == "error":
			ready <- errors.New(r.msg.Err)
		default:
			ready <- fmt.Errorf("unexpected %q", r.msg.Op)
		}
	}()
	if err := sendMsg(sp.sock, spawnMsg{Op: "setup", View: &spec}); err != nil {
		sp.close()
		return nil, fmt.Errorf("exec: sandbox view: %w", err)
	}
	select {
	case err := <-ready:
		if err != nil {
			sp.close()
			if s := strings.TrimSpace(stderr.String()); s != "" && !strings.Contains(err.Error(), s) {
				err = fmt.Errorf("%w (%s)", err, s)
			}
			return nil, fmt.Errorf("exec: %w", err)
		}
	case <-time.After(spawnerStartTimeout):
		sp.close()
		return nil, errors.New("exec: sandbox view: the spawner did not answer")
	}
	return sp, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// reply is a spawner's answer to one request.
type reply struct {
	msg   spawnMsg
	files []*os.File
	err   error
}

// spawner is the gateway's side of one principal's spawner.
type spawner struct {
	// limit says what its view does not give on this kernel (the ready
	// message's Err); set before the spawner is used.
	limit string
	cmd   *osexec.Cmd
	sock  int
	mnt   string
	// wmu serializes writes to sock.
	wmu sync.Mutex

	done chan struct{} // closed when the spawner is gone

	// mu protects the following.
	mu       sync.Mutex
	nextID   uint64
	pending  map[uint64]chan reply
	children map[uint64]*nsChild
	dead     error
	last     time.Time
	closing  bool
}

func (sp *spawner) alive() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.dead == nil && !sp.closing
}

func (sp *spawner) touch() {
	sp.mu.Lock()
	sp.last = time.Now()
	sp.mu.Unlock()
}

func (sp *spawner) running() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.children)
}

func (sp *spawner) idleSince() time.Time {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.last
}

// read dispatches the spawner's messages until the socket closes, then
// fails what still waits: commands of a spawner that died were killed
// with it.
func (sp *spawner) read() {
	var err error
	for {
		var m spawnMsg
		var files []*os.File
		m, files, err = recvMsg(sp.sock)
		if err != nil {
			break
		}
		sp.mu.Lock()
		switch m.Op {
		case "exit":
			if c := sp.children[m.ID]; c != nil {
				delete(sp.children, m.ID)
				c.exit <- m.Status
			}
			sp.last = time.Now()
			closeFiles(files)
		default:
			if ch := sp.pending[m.ID]; ch != nil {
				delete(sp.pending, m.ID)
				ch <- reply{msg: m, files: files}
			} else {
				closeFiles(files)
			}
		}
		sp.mu.Unlock()
	}
	sp.mu.Lock()
	sp.dead = fmt.Errorf("exec: sandbox view: the spawner ended: %w", err)
	for id, ch := range sp.pending {
		ch <- reply{err: sp.dead}
		delete(sp.pending, id)
	}
	killed := uint32(syscall.SIGKILL)
	for id, c := range sp.children {
		c.exit <- killed
		delete(sp.children, id)
	}
	sp.mu.Unlock()
	_ = sp.cmd.Wait()
	unix.Close(sp.sock)
	os.Remove(sp.mnt)
	close(sp.done)
}

// close ends the spawner and, with it, every command it started.
func (sp *spawner) close() {
	sp.mu.Lock()
	sp.closing = true
	sp.mu.Unlock()
	_ = unix.Shutdown(sp.sock, unix.SHUT_RDWR)
	if sp.cmd.Process != nil {
		_ = sp.cmd.Process.Kill()
	}
	<-sp.done
}

// spawnRequest is one command to start in a view.
type spawnRequest struct {
	path string
	argv []string
	env  []string
	dir  string
	// tty, if set, is the command's terminal; else stdin, stdout and
	// stderr are its streams (files passed as they are, other readers and
	// writers through pipes).
	tty            *os.File
	pty            *PTYSize // open a terminal of this size in the view instead of tty
	stdin          io.Reader
	stdout, stderr io.Writer
	ruleset        int    // a Landlock ruleset descriptor spawn closes, or -1
	access         uint64 // the ruleset's handled file system access
	// hold, if set, is called with the command stopped at its exec; it
	// runs only if hold returns nil (see Command.Hold).
	hold func() error
}

// nsChild is a command a spawner started: not the gateway's child, so its
// exit comes over the socket.
type nsChild struct {
	master  *os.File       // with spawnRequest.pty: the terminal's master
	pid     int            // in the gateway's PID namespace
	exit    chan uint32    // the wait status, once
	copies  sync.WaitGroup // the output and input copies
	readers []*os.File     // the pipes' read ends, closed after the drain
	status  syscall.WaitStatus
}

// spawn starts r in the view and returns at once.
func (sp *spawner) spawn(r spawnRequest) (*nsChild, error) {
	c := &nsChild{exit: make(chan uint32, 1)}
	var pass, closeAfter []*os.File
	var rule *os.File
	if r.ruleset >= 0 {
		rule = os.NewFile(uintptr(r.ruleset), "ruleset") // the request's own descriptor
		closeAfter = append(closeAfter, rule)
	}
	fail := func(err error) (*nsChild, error) {
		closeFiles(closeAfter)
		closeFiles(c.readers)
		return nil, err
	}
	switch {
	case r.pty != nil:
	case r.tty != nil:
		pass = []*os.File{r.tty, r.tty, r.tty}
	default:
		in, err := c.input(r.stdin, &closeAfter)
		if err != nil {
			return fail(err)
		}
		out, err := c.output(r.stdout, &closeAfter)
		if err != nil {
			return fail(err)
		}
		errw, err := c.output(r.stderr, &closeAfter)
		if err != nil {
			return fail(err)
		}
		pass = []*os.File{in, out, errw}
	}
	m := spawnMsg{Op: "spawn", Path: r.path, Argv: r.argv, Env: r.env, Dir: r.dir, TTY: r.tty != nil, PTY: r.pty, Hold: r.hold != nil}
	if rule != nil {
		m.Rule, m.Access = true, r.access
		pass = append(pass, rule)
	}
	id, rep, err := sp.request(m, c, pass...)
	closeFiles(closeAfter) // the spawner and the command have their own copies
	closeAfter = nil
	if err != nil {
		return fail(err)
	}
	m.ID = id
	forget := func() { sp.forget(id) }
	if rep.msg.Op == "held" {
		// Prepared and stopped at its exec: release it, or not.
		closeFiles(rep.files)
		holdErr := r.hold()
		why := ""
		if holdErr != nil {
			why = holdErr.Error()
		}
		if rep, err = sp.followUp(id, spawnMsg{Op: "release", Err: why}); err != nil {
			return fail(err)
		}
		if holdErr != nil {
			closeFiles(rep.files)
			forget()
			return fail(holdErr)
		}
	}
	if rep.msg.Op != "started" || len(rep.files) == 0 {
		closeFiles(rep.files)
		forget()
		if rep.msg.Err != "" {
			return fail(errors.New(rep.msg.Err))
		}
		return fail(fmt.Errorf("exec: sandbox view: unexpected %q", rep.msg.Op))
	}
	pid, err := pidfdPid(rep.files[0])
	if r.pty != nil && err == nil {
		if len(rep.files) < 2 {
			err = errors.New("exec: sandbox view: no terminal came back")
		} else {
			c.master, rep.files[1] = rep.files[1], nil
		}
	}
	closeFiles(rep.files)
	// The spawner reaps the command only after this: until then the pidfd
	// names it, exited or not.
	sp.wmu.Lock()
	ackErr := sendMsg(sp.sock, spawnMsg{Op: "ack", ID: m.ID})
	sp.wmu.Unlock()
	if err == nil {
		err = ackErr
	}
	if err != nil {
		// Started, but cannot be named: end it through its view.
		sp.close()
		return fail(err)
	}
	c.pid = pid
	return c, nil
}

// input returns the descriptor to pass as the command's standard input.
func (c *nsChild) input(r io.Reader, closeAfter *[]*os.File) (*os.File, error) {
	if f, ok := r.(*os.File); ok {
		return f, nil
	}
	if r == nil {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		*closeAfter = append(*closeAfter, f)
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	*closeAfter = append(*closeAfter, pr)
	c.copies.Go(func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	})
	return pr, nil
}

// output returns the descriptor to pass for an output stream copied to w.
func (c *nsChild) output(w io.Writer, closeAfter *[]*os.File) (*os.File, error) {
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	if w == nil {
		w = io.Discard
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	*closeAfter = append(*closeAfter, pw)
	c.readers = append(c.readers, pr)
	c.copies.Go(func() { _, _ = io.Copy(w, pr) })
	return pw, nil
}

// wait waits for the command to exit, then up to drain for its output.
func (c *nsChild) wait(drain time.Duration) syscall.WaitStatus {
	c.status = syscall.WaitStatus(<-c.exit)
	done := make(chan struct{})
	go func() { c.copies.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drain):
		closeFiles(c.readers)
		<-done
	}
	closeFiles(c.readers)
	return c.status
}

// pidfdPid returns the process ID, in this process's PID namespace, of the
// process a pidfd refers to.
func pidfdPid(f *os.File) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", f.Fd()))
	if err != nil {
		return 0, fmt.Errorf("exec: sandbox view: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pid:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || pid <= 0 {
				return 0, fmt.Errorf("exec: sandbox view: pidfd names no process (%q)", v)
			}
			return pid, nil
		}
	}
	return 0, errors.New("exec: sandbox view: no Pid in the pidfd's fdinfo")
}

// principal returns who ctx's command runs for.
func (v *viewSet) principal(ctx context.Context) Principal {
	if v.cfg.Principal == nil {
		return Principal{}
	}
	return v.cfg.Principal(ctx)
}

// spawnInView starts r in the view of ctx's principal, confined by the
// current Landlock ruleset. It fails with errNoViews when s has no views
// or they are unavailable, and the caller falls back to the Landlock
// sandbox alone; any other error means the command did not start.
func (s *Sandbox) spawnInView(ctx context.Context, r spawnRequest) (*nsChild, error) {
	if s == nil || s.views == nil {
		return nil, errNoViews
	}
	if err := s.views.available(); err != nil {
		return nil, errNoViews
	}
	r.ruleset = -1
	if s.abi > 0 {
		fd, err := s.rulesetDup()
		if err != nil {
			return nil, err
		}
		r.ruleset, r.access = fd, handledAccess(s.abi)
	}
	sp, err := s.views.spawnerFor(s.views.principal(ctx))
	if err != nil {
		if r.ruleset >= 0 {
			unix.Close(r.ruleset)
		}
		return nil, err
	}
	return sp.spawn(r)
}

// rulesetDup returns a duplicate of the current ruleset's descriptor,
// rebuilding the ruleset first if a directory it enumerated changed.
func (s *Sandbox) rulesetDup() (int, error) {
	if err := s.rlockFresh(); err != nil {
		return -1, err
	}
	defer s.mu.RUnlock()
	if s.rs.fd <= 0 {
		return -1, fmt.Errorf("exec: sandbox: no ruleset: %v", s.buildErr)
	}
	fd, err := unix.FcntlInt(uintptr(s.rs.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("exec: sandbox: %w", err)
	}
	return fd, nil
}
