package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// The spawner is the program itself, started again by a Sandbox with
// views (see ViewConfig) in new user, mount, PID and IPC namespaces, with
// its end of a SOCK_SEQPACKET socket pair as descriptor 3. It builds the
// principal's view, then starts each command the gateway asks for and
// reports its exit. Messages are JSON, one a datagram, descriptors passed
// alongside (SCM_RIGHTS); a request too large for a datagram comes in a
// memfd instead.
const (
	spawnerArg0 = "rigout-sandbox-spawner"
	spawnerEnv  = "RIGOUT_SANDBOX_SPAWNER"
	spawnerFD   = 3
	// maxDatagram bounds a message on the socket; larger requests travel in
	// a memfd.
	maxDatagram = 48 << 10
)

// spawnMsg is every message on the socket, in either direction.
type spawnMsg struct {
	Op string `json:"op"` // setup, ready, spawn, started, exit, error
	ID uint64 `json:"id,omitempty"`

	View *viewSpec `json:"view,omitempty"` // setup

	// spawn
	Path string   `json:"path,omitempty"`
	Argv []string `json:"argv,omitempty"`
	Env  []string `json:"env,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	TTY  bool     `json:"tty,omitempty"` // the three descriptors are a terminal: a new session, its controlling terminal
	// PTY asks the spawner to open a terminal of this size in the view's
	// own devpts and start the command on it (no descriptors passed); the
	// master comes back after the pidfd.
	PTY  *PTYSize `json:"pty,omitempty"`
	Rule bool     `json:"rule,omitempty"` // a Landlock ruleset descriptor follows the three
	// Access is the ruleset's handled file system access: the spawner
	// grants all of it on the view's own mounts (/proc, /dev, /tmp), which
	// cover the directories the gateway's rules were made on.
	Access uint64 `json:"access,omitempty"`

	// started, exit, error
	Status uint32 `json:"status,omitempty"` // exit: the wait status
	Err    string `json:"err,omitempty"`
	Large  bool   `json:"large,omitempty"` // the message itself is in the first descriptor (a memfd)

	File      *fileOp    `json:"file,omitempty"`       // file: the operation
	FileReply *fileReply `json:"file_reply,omitempty"` // file: its result
}

// ServeSandboxSpawner turns this process into a sandbox spawner, and never
// returns, when a [Sandbox] with views started it as one; otherwise it
// returns at once and does nothing. Call it first thing in main, and in
// TestMain of tests whose commands run in views: without it, a Sandbox's
// views are unavailable and commands run in its Landlock sandbox alone
// (SandboxStatus says why).
func ServeSandboxSpawner() {
	if len(os.Args) == 0 || os.Args[0] != spawnerArg0 || os.Getenv(spawnerEnv) != "1" {
		return
	}
	os.Exit(serveSpawner())
}

// spawnerServer is the spawner's side of the socket.
type spawnerServer struct {
	sock   int
	filter []unix.SockFilter
	// mounts are O_PATH descriptors of the view's own mounts: Landlock
	// ignores rules on the mount points they cover, so each command's
	// ruleset gets a rule for each.
	mounts []int
	// procfd is an O_PATH descriptor of the view's /proc (the principal's
	// PID namespace), where mounters find each call's PID namespace.
	procfd int
	// threads offers the thread prepared for the next command.
	threads chan preparedThread
	// callProc: each call's PID namespace gets a /proc of its own (the
	// kernel has procfs's pidns= option); else a call sees the /proc of
	// its principal's namespace.
	callProc bool

	// amu protects acks: a command's exit is not reaped until the gateway
	// acknowledges its start (it reads the command's pid from the pidfd,
	// which names no process once reaped).
	amu  sync.Mutex
	acks map[uint64]chan struct{}
	// wmu serializes writes to sock.
	wmu sync.Mutex
}

func serveSpawner() int {
	runtime.GOMAXPROCS(2)
	s := &spawnerServer{sock: spawnerFD, filter: seccompFilter()}
	// Whatever descriptors the gateway inherited and passed on without
	// meaning to never reach a command.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	msg, files, err := s.recv()
	if err != nil || msg.Op != "setup" || msg.View == nil {
		fmt.Fprintf(os.Stderr, "rigout spawner: no setup request: %v\n", err)
		return 2
	}
	closeFiles(files)
	if err := setupView(*msg.View, &s.callProc); err != nil {
		s.send(spawnMsg{Op: "error", Err: err.Error()})
		return 1
	}
	for _, p := range []string{"/dev", "/tmp"} {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
		if err != nil {
			s.send(spawnMsg{Op: "error", Err: fmt.Sprintf("sandbox view: open %s: %v", p, err)})
			return 1
		}
		s.mounts = append(s.mounts, fd)
	}
	if s.procfd, err = unix.Open("/proc", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0); err != nil {
		s.send(spawnMsg{Op: "error", Err: fmt.Sprintf("sandbox view: open /proc: %v", err)})
		return 1
	}
	s.threads = make(chan preparedThread)
	go s.prepare()
	ready := spawnMsg{Op: "ready"}
	if !s.callProc {
		ready.Err = "each call sees its principal's processes in /proc, not only its own (the kernel has no procfs pidns= option, Linux 6.18)"
	}
	s.send(ready)
	// Building the view is the most the spawner allocates until its
	// principal's commands come: give that back while it waits.
	debug.FreeOSMemory()
	for {
		msg, files, err := s.recv()
		if err != nil {
			// The gateway is gone: as the first process of the namespace,
			// the spawner's exit ends every command.
			return 0
		}
		switch msg.Op {
		case "spawn":
			s.spawn(msg, files)
		case "file":
			if msg.File == nil {
				closeFiles(files)
				s.send(spawnMsg{Op: "error", ID: msg.ID, Err: "file: no operation"})
				continue
			}
			s.file(msg, files)
		case "ack":
			closeFiles(files)
			s.ack(msg.ID)
		default:
			closeFiles(files)
			s.send(spawnMsg{Op: "error", ID: msg.ID, Err: "unknown request " + msg.Op})
		}
	}
}

// send writes m, with files' descriptors; errors mean the gateway is gone,
// which the read loop finds out.
func (s *spawnerServer) send(m spawnMsg, files ...*os.File) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = sendMsg(s.sock, m, files...)
}

func (s *spawnerServer) recv() (spawnMsg, []*os.File, error) { return recvMsg(s.sock) }

// spawn starts one command on the thread prepared for it (see prepare),
// which confines itself with the request's Landlock ruleset, starts the
// command as the first process of the thread's PID namespace, reports it,
// waits for its end and is thrown away after. The read loop goes on at
// once: a slow start never delays the principal's next request.
func (s *spawnerServer) spawn(m spawnMsg, files []*os.File) {
	t := <-s.threads
	go s.prepare() // the next call's thread, while this one starts its command
	if t.err != nil {
		closeFiles(files)
		s.send(spawnMsg{Op: "error", ID: m.ID, Err: t.err.Error()})
		return
	}
	t.req <- callReq{m: m, files: files}
}

// callReq hands a request to a prepared thread.
type callReq struct {
	m     spawnMsg
	files []*os.File
}

// preparedThread is a locked OS thread made ready for the next command
// ahead of its request, off the call's path: a mount namespace of its
// own (a copy of the view), no_new_privs, no capabilities left to pass
// on, the seccomp filter, and a mounter thread already inside that mount
// namespace, waiting to mount the call's /proc. Only the request's
// Landlock ruleset is applied when it comes.
type preparedThread struct {
	req chan callReq
	err error // preparing failed: the thread is gone
}

// prepare makes a thread ready for one command, offers it to the next
// spawn request, and runs that request on it.
func (s *spawnerServer) prepare() {
	runtime.LockOSThread()
	// Never unlocked: the runtime ends the thread with the goroutine, and
	// its namespaces and confinement with it.
	mnt, err := s.prepareThread()
	if err != nil {
		s.threads <- preparedThread{err: err}
		return
	}
	req := make(chan callReq)
	s.threads <- preparedThread{req: req}
	r, ok := <-req
	if !ok {
		close(mnt)
		return
	}
	s.run(r.m, r.files, mnt)
}

// prepareThread readies the calling locked thread (see preparedThread)
// and returns the channel on which its mounter takes the call's first
// process.
func (s *spawnerServer) prepareThread() (chan<- mountReq, error) {
	// A mount namespace of the call's own (a copy of the view), for its
	// /proc; made before the seccomp filter, which refuses it.
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return nil, fmt.Errorf("unshare: %w", err)
	}
	mnt := make(chan mountReq, 1)
	if !s.callProc {
		if err := confineThread(-1, s.filter); err != nil {
			return nil, err
		}
		return mnt, nil
	}
	ns, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the call's mount namespace: %w", err)
	}
	ready := make(chan error, 1)
	go s.mounter(ns, ready, mnt)
	if err := <-ready; err != nil {
		return nil, err
	}
	if err := confineThread(-1, s.filter); err != nil {
		close(mnt)
		return nil, err
	}
	return mnt, nil
}

// callProcMount mounts the /proc of the call whose first process, pid, is
// stopped at its exec, through the call's mounter, and lets it go.
func (s *spawnerServer) callProcMount(pid int, mnt chan<- mountReq) error {
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil || !ws.Stopped() {
		return fmt.Errorf("the command did not stop at its exec (%v, status %#x)", err, uint32(ws))
	}
	done := make(chan error, 1)
	mnt <- mountReq{pid: pid, done: done}
	if err := <-done; err != nil {
		return err
	}
	if _, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("detach: %w", errno)
	}
	return nil
}

// mountReq asks a call's mounter to mount the call's /proc.
type mountReq struct {
	pid  int // the call's first process, stopped at its exec
	done chan error
}

// mounter enters, on a thread of its own and with a file system context
// of its own, the call's mount namespace ns (which it closes), says so on
// ready, then mounts the call's /proc for the one request on reqs. It is
// never confined, and its thread is thrown away after.
func (s *spawnerServer) mounter(ns int, ready chan<- error, reqs <-chan mountReq) {
	runtime.LockOSThread() // never unlocked: the thread leaves the spawner's mount namespace
	err := unix.Unshare(unix.CLONE_FS)
	if err == nil {
		err = unix.Setns(ns, unix.CLONE_NEWNS)
	}
	unix.Close(ns)
	if err != nil {
		ready <- fmt.Errorf("enter the call's mount namespace: %w", err)
		return
	}
	ready <- nil
	if req, ok := <-reqs; ok {
		req.done <- s.mountProc(req.pid)
	}
}

// mountProc mounts over /proc, in the calling thread's mount namespace, a
// read-only procfs of the PID namespace of process pid: the call sees its
// own processes only, and getpid agrees with /proc.
func (s *spawnerServer) mountProc(pid int) error {
	pidns, err := unix.Openat(s.procfd, strconv.Itoa(pid)+"/ns/pid", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the call's PID namespace: %w", err)
	}
	defer unix.Close(pidns)
	opts := "pidns=/proc/self/fd/" + strconv.Itoa(pidns)
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("mount the call's /proc: %w", err)
	}
	return nil
}

// run starts the command of m on the calling prepared thread, reports
// its start and, once the gateway has acknowledged it, its exit. The
// thread outlives the command, so the teardown of the call's namespaces
// comes after the exit is reported, not before.
func (s *spawnerServer) run(m spawnMsg, files []*os.File, mnt chan<- mountReq) {
	fail := func(err error) { s.send(spawnMsg{Op: "error", ID: m.ID, Err: err.Error()}) }
	defer close(mnt)
	var master *os.File
	if m.PTY != nil {
		// A terminal of the view's own: the slave as the three streams,
		// the ruleset (if any) after them, as when they are passed.
		mst, slave, err := pty.Open()
		if err != nil {
			closeFiles(files)
			fail(fmt.Errorf("open a pseudo-terminal: %w", err))
			return
		}
		if err := pty.Setsize(mst, &pty.Winsize{Rows: m.PTY.Rows, Cols: m.PTY.Cols}); err != nil {
			closeFiles(files)
			mst.Close()
			slave.Close()
			fail(fmt.Errorf("pseudo-terminal size: %w", err))
			return
		}
		master = mst
		defer master.Close()
		files = append([]*os.File{slave, slave, slave}, files...)
		m.TTY = true
	}
	defer closeFiles(files)
	if len(files) < 3 || (m.Rule && len(files) < 4) {
		fail(errors.New("spawn: missing descriptors"))
		return
	}
	if m.Dir != "" {
		if _, err := os.Stat(m.Dir); err != nil {
			fail(fmt.Errorf("working directory %s is not in this principal's view of the machine (%v)", m.Dir, err))
			return
		}
	}
	if m.Rule {
		rsfd := int(files[3].Fd())
		if err := s.addMountRules(rsfd, m.Access); err != nil {
			fail(err)
			return
		}
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rsfd), 0, 0); errno != 0 {
			fail(fmt.Errorf("landlock_restrict_self: %w", errno))
			return
		}
	}
	// The command is the first process of a new PID namespace, and stops
	// at its exec until its /proc is mounted (when it gets its own).
	attr := &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWPID, Ptrace: s.callProc, Setpgid: true}
	if m.TTY {
		attr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWPID, Ptrace: s.callProc, Setsid: true, Setctty: true, Ctty: 0}
	}
	p, err := os.StartProcess(m.Path, m.Argv, &os.ProcAttr{Dir: m.Dir, Env: m.Env, Files: files[:3], Sys: attr})
	if err != nil {
		fail(err)
		return
	}
	stop := func(err error) {
		_ = p.Kill()
		_, _ = p.Wait()
		fail(err)
	}
	var ws unix.WaitStatus
	if s.callProc {
		if err := s.callProcMount(p.Pid, mnt); err != nil {
			stop(err)
			return
		}
	}
	closeFiles(files)
	files = nil
	pidfd, err := unix.PidfdOpen(p.Pid, 0)
	if err != nil {
		stop(fmt.Errorf("pidfd_open: %w", err))
		return
	}
	pf := os.NewFile(uintptr(pidfd), "pidfd")
	acked := s.ackChan(m.ID)
	if master != nil {
		s.send(spawnMsg{Op: "started", ID: m.ID}, pf, master)
	} else {
		s.send(spawnMsg{Op: "started", ID: m.ID}, pf)
	}
	pf.Close()
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	<-acked
	for {
		_, err := unix.Wait4(p.Pid, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	s.send(spawnMsg{Op: "exit", ID: m.ID, Status: uint32(ws)})
}

// addMountRules grants access on the view's own mounts in ruleset rsfd.
func (s *spawnerServer) addMountRules(rsfd int, access uint64) error {
	for _, fd := range s.mounts {
		attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rsfd), unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
		if errno != 0 {
			return fmt.Errorf("landlock_add_rule: %w", errno)
		}
	}
	return nil
}

// ackChan returns the channel closed when the gateway acknowledges the
// start of command id.
func (s *spawnerServer) ackChan(id uint64) chan struct{} {
	s.amu.Lock()
	defer s.amu.Unlock()
	if s.acks == nil {
		s.acks = map[uint64]chan struct{}{}
	}
	ch := make(chan struct{})
	s.acks[id] = ch
	return ch
}

func (s *spawnerServer) ack(id uint64) {
	s.amu.Lock()
	defer s.amu.Unlock()
	if ch := s.acks[id]; ch != nil {
		close(ch)
		delete(s.acks, id)
	}
}

// confineThread confines the calling thread, which must be locked and
// thrown away afterwards, for the command it is about to start: no_new_privs;
// empty capability bounding, inheritable and ambient sets, so that the
// command, root in the namespace, has no capability after exec (the
// thread keeps its own, to make the command's PID namespace); the seccomp
// filter; and the Landlock ruleset rsfd, if not negative.
func confineThread(rsfd int, filter []unix.SockFilter) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := installSeccomp(filter); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	if rsfd >= 0 {
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rsfd), 0, 0); errno != 0 {
			return fmt.Errorf("landlock_restrict_self: %w", errno)
		}
	}
	return nil
}

// setupView builds the principal's view and makes it this process's root.
// It runs in the spawner, root in its new user namespace. It sets
// *callProc when the kernel can mount a /proc for each call's PID
// namespace (procfs's pidns= option, Linux 6.18).
func setupView(v viewSpec, callProc *bool) error {
	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("sandbox view: %s: %w", what, err)
		}
		return nil
	}
	mount := func(src, dst, fstype string, flags uintptr, data string) error {
		return step("mount "+dst, unix.Mount(src, dst, fstype, flags, data))
	}
	if err := mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return err
	}
	root := v.Mount
	if root == "" || !filepath.IsAbs(root) {
		return errors.New("sandbox view: no mount point")
	}
	// The whole tree, read-only and nosuid, as the new root.
	if err := mount("/", root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if err := readOnlyTree(root); err != nil {
		return err
	}
	at := func(p string) string { return filepath.Join(root, p) }

	// A minimal /dev: the harmless devices, a devpts instance of its own,
	// a private /dev/shm. The host's disks and terminals are not in it.
	if err := buildDev(at("/dev")); err != nil {
		return err
	}
	devNull := at("/dev/null")

	// The private /tmp, then the writable trees (a tree under /tmp gets a
	// mount point made in the private /tmp), then read-only trees inside
	// those.
	if v.Tmp != "" {
		if err := mount(v.Tmp, at("/tmp"), "", unix.MS_BIND, ""); err != nil {
			return err
		}
	}
	for _, w := range v.Visible {
		if _, err := os.Stat(w); err != nil {
			continue
		}
		if under("/tmp", w) {
			if err := os.MkdirAll(at(w), 0o700); err != nil {
				return step("mount point for "+w, err)
			}
		}
		if err := mount(w, at(w), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		if err := readOnlyTree(at(w)); err != nil {
			return err
		}
	}
	for _, w := range v.Writable {
		if _, err := os.Stat(w); err != nil {
			continue
		}
		if under("/tmp", w) {
			if err := os.MkdirAll(at(w), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				// Beneath a visible, read-only tree: its mount point exists.
				if _, serr := os.Stat(at(w)); serr != nil {
					return step("mount point for "+w, err)
				}
			}
		}
		if err := mount(w, at(w), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
	}
	for _, r := range v.ReadOnly {
		inside := slices.ContainsFunc(v.Writable, func(w string) bool { return w != r && under(w, r) })
		if !inside {
			continue
		}
		if _, err := os.Stat(at(r)); err != nil {
			continue
		}
		if err := mount(at(r), at(r), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		if err := readOnlyTree(at(r)); err != nil {
			return err
		}
	}

	// Hidden files and directories, and the sockets of HideSockets.
	hidden := slices.Clone(v.Hidden)
	for _, d := range v.HideSockets {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type()&fs.ModeSocket != 0 && !slices.Contains(v.ShowSockets, p) {
				hidden = append(hidden, p)
			}
			return nil
		})
	}
	for _, h := range hidden {
		fi, err := os.Lstat(at(h))
		if err != nil {
			continue
		}
		if fi.IsDir() {
			if err := mount("tmpfs", at(h), "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=4k"); err != nil {
				return err
			}
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			continue // the gateway resolved links: this is one made since
		}
		if err := mount(devNull, at(h), "", unix.MS_BIND, ""); err != nil {
			return err
		}
		if err := mount("", at(h), "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return err
		}
	}

	// A /proc of the principal's PID namespace: no process outside it is
	// visible. Named explicitly with pidns= (the spawner's own namespace)
	// to learn whether the kernel has the option that gives each call a
	// /proc of its own; a kernel without it (before 6.18) refuses it, and
	// the spawner, the first process of that namespace, mounts its own.
	procFlags := uintptr(unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	var err error = unix.EINVAL
	if !v.SharedProc {
		err = unix.Mount("proc", at("/proc"), "proc", procFlags, "pidns=/proc/self/ns/pid")
	}
	*callProc = err == nil
	if errors.Is(err, unix.EINVAL) {
		err = unix.Mount("proc", at("/proc"), "proc", procFlags, "")
	}
	if err := step("mount "+at("/proc"), err); err != nil {
		return err
	}
	if v.Offline {
		if err := loopbackUp(); err != nil {
			return step("bring up lo", err)
		}
	}

	// Make the view the root, and drop the old one.
	if err := step("chdir", unix.Chdir(root)); err != nil {
		return err
	}
	if err := step("pivot_root", unix.PivotRoot(".", ".")); err != nil {
		return err
	}
	if err := step("detach the old root", unix.Unmount(".", unix.MNT_DETACH)); err != nil {
		return err
	}
	return step("chdir /", unix.Chdir("/"))
}

// readOnlyTree makes the mount at path and every mount beneath it
// read-only and nosuid.
func readOnlyTree(path string) error {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("sandbox view: make %s read-only: %w", path, err)
	}
	return nil
}

// buildDev mounts a small /dev at dev: the host's null, zero, full,
// random, urandom and tty devices bound in, a new devpts instance, a
// private shm, and the usual links.
func buildDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=64k"); err != nil {
		return fmt.Errorf("sandbox view: mount /dev: %w", err)
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		p := filepath.Join(dev, d)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return fmt.Errorf("sandbox view: %w", err)
		}
		f.Close()
		if err := unix.Mount("/dev/"+d, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("sandbox view: bind /dev/%s: %w", d, err)
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return fmt.Errorf("sandbox view: %w", err)
		}
	}
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620"); err != nil {
		return fmt.Errorf("sandbox view: mount /dev/pts: %w", err)
	}
	if err := unix.Mount("tmpfs", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("sandbox view: mount /dev/shm: %w", err)
	}
	for name, target := range map[string]string{
		"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("sandbox view: %w", err)
		}
	}
	if err := unix.Mount("", dev, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=64k"); err != nil {
		return fmt.Errorf("sandbox view: make /dev read-only: %w", err)
	}
	return nil
}

// loopbackUp brings up the loopback interface of a new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// sendMsg writes m on sock with files' descriptors; a message larger than
// a datagram travels in a memfd passed first.
func sendMsg(sock int, m spawnMsg, files ...*os.File) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	fds := make([]int, 0, len(files)+1)
	if len(b) > maxDatagram {
		mfd, err := unix.MemfdCreate("rigout-spawn", unix.MFD_CLOEXEC)
		if err != nil {
			return err
		}
		defer unix.Close(mfd)
		if _, err := unix.Pwrite(mfd, b, 0); err != nil {
			return err
		}
		fds = append(fds, mfd)
		b = []byte(`{"op":"` + m.Op + `","large":true}`)
	}
	for _, f := range files {
		fds = append(fds, int(f.Fd()))
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	err = unix.Sendmsg(sock, b, oob, nil, 0)
	runtime.KeepAlive(files)
	return err
}

// recvMsg reads one message and the descriptors that came with it.
func recvMsg(sock int) (spawnMsg, []*os.File, error) {
	var m spawnMsg
	buf := make([]byte, maxDatagram+1024)
	oob := make([]byte, unix.CmsgSpace(8*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return m, nil, err
		}
		if n == 0 && oobn == 0 {
			return m, nil, errors.New("exec: spawner socket closed")
		}
		var files []*os.File
		if oobn > 0 {
			cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				return m, nil, err
			}
			for _, c := range cmsgs {
				fds, err := unix.ParseUnixRights(&c)
				if err != nil {
					continue
				}
				for _, fd := range fds {
					files = append(files, os.NewFile(uintptr(fd), "passed"))
				}
			}
		}
		if err := json.Unmarshal(buf[:n], &m); err != nil {
			closeFiles(files)
			return m, nil, fmt.Errorf("exec: spawner message: %w", err)
		}
		if m.Large {
			if len(files) == 0 {
				return m, nil, errors.New("exec: spawner message: large message without its memfd")
			}
			big, err := readAllFile(files[0])
			files[0].Close()
			files = files[1:]
			if err != nil {
				closeFiles(files)
				return m, nil, err
			}
			m = spawnMsg{}
			if err := json.Unmarshal(big, &m); err != nil {
				closeFiles(files)
				return m, nil, fmt.Errorf("exec: spawner message: %w", err)
			}
		}
		return m, files, nil
	}
}

func readAllFile(f *os.File) ([]byte, error) {
	var out []byte
	buf := make([]byte, 64<<10)
	off := int64(0)
	for {
		n, err := unix.Pread(int(f.Fd()), buf, off)
		out = append(out, buf[:n]...)
		off += int64(n)
		if n == 0 || err != nil {
			return out, err
		}
	}
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
