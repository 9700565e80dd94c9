package exec

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SandboxConfig says what local commands must not touch, whatever their
// spelling. Paths are resolved through symbolic links when the sandbox is
// built; a path that does not exist yet is remembered and protected from
// the first call after it appears (see Sandbox).
type SandboxConfig struct {
	// Protected lists roots: a root itself and its direct entries cannot
	// be deleted or renamed, while everything two levels down and deeper
	// stays writable and deletable, as the command policy allows work
	// beneath a root. With /srv/data protected, `rm -rf /srv/data` may
	// empty /srv/data/sub but leaves /srv/data, /srv/data/sub and
	// /srv/data/file in place; `rm /srv/data/sub/x` works. Files directly
	// in a root stay writable.
	Protected []string
	// Critical lists files that cannot be written, truncated, replaced
	// (renamed over) or deleted; they stay readable. A directory here is
	// treated as ReadOnly. The other files in a critical file's directory
	// stay writable, which takes a Landlock rule for each: for a critical
	// file in a directory of many files, such as /usr/bin/bash, prefer
	// Sealed.
	Critical []string
	// Sealed lists directories whose own files can be read and executed
	// but not written or truncated, and in which nothing can be created,
	// deleted or renamed; their subdirectories, and everything beneath
	// those, stay free. It suits directories of programs and libraries
	// (/usr/bin, /usr/lib/x86_64-linux-gnu): it protects every file in
	// them as Critical would, for one Landlock rule and one for each
	// subdirectory instead of one for each file. The kernel copies every
	// rule into each command's domain: 1,000 rules cost about 0.4ms of
	// every sandboxed call.
	Sealed []string
	// Hidden lists directories and files whose contents can be neither
	// read nor written, and in which nothing can be created, renamed or
	// deleted: the gateway's state directory (token, ledger, key,
	// connection file). Their names can be listed, as can the directories
	// on the way, so that `ls /` keeps working.
	Hidden []string
	// ReadOnly lists trees that can be read and executed but not changed:
	// nothing beneath can be written, created, renamed or deleted. A
	// gateway that runs commands as root should list /proc/sys, /sys and
	// the cgroup mount here, or root commands can reconfigure the kernel.
	ReadOnly []string
	// RequireABI, if non-zero, makes NewSandbox fail unless the kernel's
	// Landlock ABI is at least this version: 6 gives every guarantee this
	// package knows of (signal scoping). If zero, the sandbox degrades
	// with the kernel and Status says what is missing.
	RequireABI int
	// BuildLater, if set, keeps NewSandbox from starting to build the first
	// ruleset: Start starts it, and so does anything that needs it (Ready,
	// a command, Refresh, SetConfig, Close). A process that must answer
	// something first (rigout stdio's initialize) starts it afterwards,
	// rather than have the build compete for the CPU. Paths are still
	// resolved by NewSandbox, so configuration errors show there.
	BuildLater bool
	// Views, if set, runs every command in a view of the machine of its
	// principal's own, beneath the Landlock ruleset (see ViewConfig). On
	// macOS, the principal's Seatbelt profile takes its writable trees,
	// read-only and hidden paths and network switch from it instead.
	Views *ViewConfig

	// seatbeltExec, if set, confines commands with this sandbox-exec(1)
	// on any system: tests run the macOS wiring with a stand-in.
	seatbeltExec string
}

// Sandbox is a kernel sandbox (Landlock, on Linux) that Local applies to
// every command it starts. Build one with NewSandbox, hand it to
// Local.Sandbox, and report Status on /health and in `rigout doctor`.
//
// # How it is applied
//
// Go's os/exec runs no code between fork and exec, so the restriction
// must already be in place in the thread that forks. Landlock domains,
// no_new_privs and capabilities belong to a thread, not a process, and
// os/exec forks from the thread of the goroutine that calls Start. So each
// command is started by a goroutine locked to an OS thread of its own,
// which sets no_new_privs, drops CAP_SYS_PTRACE and calls
// landlock_restrict_self on that thread alone (a raw syscall, not psx's
// all-threads variant); it returns without unlocking, and the runtime then
// ends the thread, so no other goroutine ever runs confined. The runtime
// starts new threads from its template thread, never from a locked one,
// and the main thread is never used (it cannot be ended, and /proc/<pid>
// and signals to the process are checked against it). The command
// inherits the thread's domain, and everything it starts stays inside.
//
// The thread is confined in advance: once a command is on its way, the
// Sandbox confines a thread for the next one, which waits, locked and
// idle, for its command (a rebuild of the ruleset or Close ends it
// unused). Nothing can reach it meanwhile: its domain is new, made by an
// unconfined thread, so it is nested in no other domain, and Landlock lets
// a process signal (ABI 6) or ptrace only tasks in its own domain or in
// domains nested in it, while every running command is in a domain of its
// own (TestSandboxPreparedThread probes it). landlock_restrict_self copies
// every rule into the new domain, about 0.4µs a rule here, and a Go thread
// costs about 40µs to make and end: both happen off the call's path
// unless calls come faster than threads are confined.
//
// Until the launch thread is gone, the command shares its domain and
// could signal it, and a SIGKILL to any thread ends the gateway. A static
// program probing right after exec reached that thread in about half of
// all calls (TestSandboxLaunchThread). The command is therefore traced:
// it stops at exec, before its first instruction; the launch thread
// detaches it into a SIGSTOP and exits; Local sends SIGCONT once the
// thread can no longer be signalled. It waits for that on a pidfd of the
// thread (PIDFD_THREAD, Linux 6.9; before, by polling tgkill), asleep in
// the runtime's poller. NewSandbox also makes the gateway non-dumpable, so
// that its /proc files need CAP_SYS_PTRACE, which commands lack.
//
// Alternatives, weighed, measured on a shared 2-CPU VM (Linux 6.18) with
// `true`. Before this design's current form, a sandboxed call with a
// 181-rule ruleset spent, beyond an unsandboxed one's 1.03ms: 13µs
// starting the goroutine, 5µs on no_new_privs and capabilities, 45µs in
// landlock_restrict_self, 84µs waiting for the exec stop, 6µs detaching,
// 90µs waking the gateway from the ending thread (the Go scheduler makes a
// thread to run it on), 36µs (mean) polling for the thread's end with
// sleeps, 6µs on SIGCONT. With the rigout binary's default policy the
// ruleset had about 2,100 rules, and landlock_restrict_self alone took
// 0.8ms: the rule count, not the mechanism, dominated, and every design
// pays it, because each call needs a domain of its own (or calls could
// signal each other's processes, and the launch threads of other calls)
// and the kernel copies all rules into every new domain, nested or not.
// Hence Sealed, the binary's sealing of program directories, and the
// planner leaving out rules its parents already grant: 2,100 rules became
// about 410. Then: a futex on the thread's clear-tid word (set_tid_address)
// instead of the poll was slower, as a goroutine blocked in a system call
// keeps sysmon waking every 20µs; the pidfd in the poller removes the
// wake-up and the sleeps; confining in advance takes the restriction and
// the thread's creation off the call's path (not off the CPU). A re-exec
// launcher (the gateway binary, or any Go program, starting itself to
// restrict and exec) costs a Go program's start per call, 1.2ms more than
// `true` here, and a hook in every embedder's main. A long-lived spawner
// would still make a domain per command (nested, so that commands reach
// neither it nor each other), so it saves only the thread and the exec
// gate, about 0.15ms, for a second process to supervise, descriptors and
// exit statuses over a socket, and code between fork and exec that Go
// cannot run (C, or cgo in the binary). A pool of empty call cgroups would
// save up to 0.17ms of every local call, sandboxed or not, and leave the
// ratio as it is. BenchmarkSandboxedLocal in cmd/rigout (the default
// policy) went from 2.5x to 1.5x unsandboxed, and BenchmarkLocalSandboxPaired
// here (181 rules) from 1.40x to 1.34x, both under a load of about 10; see
// docs/PERFORMANCE.md for the binary's figure.
//
// # What it enforces
//
// Landlock only allows: rights granted on a directory hold for everything
// beneath it, and nothing can be denied below a grant. "Everything except
// X" is therefore granted entry by entry along the path to X: the
// directories on the way get only the rights that are safe for X, and
// each of their other entries gets full rights. Consequences, all by
// construction:
//   - The parent of a protected root or critical file cannot have any of
//     its entries deleted or renamed (only their contents), and no
//     directory on the path to one can be renamed.
//   - The directories on the path to a hidden directory can be listed but
//     nothing can be created, written or deleted directly in them (their
//     other entries keep every right): keep the state directory at a
//     shallow path outside home directories and /tmp, such as
//     /var/lib/rigout.
//   - Each call runs in a domain of its own: it cannot signal (ABI 6) or
//     ptrace processes outside it, the gateway and other calls included,
//     and cannot open /proc/<pid>/mem, cwd, root or fd links of the
//     gateway. `kill -9 -1` reaches only the call's own processes.
//   - Mounting is denied to sandboxed processes.
//
// # Limits
//
// The sandbox enumerates directory entries when it is built. Before each
// call it compares the modification times of the directories it
// enumerated and rebuilds when one changed, so entries created between
// calls are covered; an entry created during a call is covered from the
// next call on, and until then it has only the rights of its parent
// (for a new directory inside a protected root: contents not deletable).
// A rebuild takes about a millisecond, so keep configured paths out of
// directories that change all the time, such as /tmp.
// Landlock checks paths: another path to the same file (a hard link made
// before the sandbox, a bind mount) is not protected. On the kernels
// tested (6.18), Landlock does not guard /proc/<pid>/environ and maps;
// the gateway being non-dumpable keeps them from commands of another or
// the same unprivileged user, but not from commands running as root. A
// command running as root also keeps root's other powers (raw block
// devices, chmod and chown, kernel interfaces not listed in ReadOnly):
// run commands as an unprivileged user for a boundary. Commands that need
// setuid programs (Command.Sudo) cannot run under no_new_privs: they run
// outside the sandbox and their Result says so. A gateway that is itself
// traced with fork following (strace -f), or under Yama ptrace_scope 3,
// cannot start sandboxed commands.
//
// A Sandbox is safe for concurrent use. Close releases its ruleset and
// ends the thread it keeps confined for the next command.
type Sandbox struct {
	cfg    SandboxConfig
	abi    int
	abiErr error

	// ready is closed once the first ruleset is built (or failed): NewSandbox
	// or Start builds it in the background, and everything that needs it
	// waits.
	ready chan struct{}
	// build starts the first build, once; nil when there is nothing to
	// build (no Landlock).
	build func()

	// mu protects the following; restricting holds it for reading.
	mu       sync.RWMutex
	rs       ruleset // the current ruleset, if built
	plan     *sandboxPlan
	closed   bool
	buildErr error // why the last build failed, while plan is nil

	// missing is plan.missing of the latest ruleset, for Status, which
	// does not wait for a build; nil until the first.
	missing atomic.Pointer[[]string]

	// views runs commands in per-principal views; nil without
	// SandboxConfig.Views.
	views *viewSet

	// seatbelt confines commands on macOS instead of Landlock and views;
	// nil elsewhere.
	seatbelt *seatbelt

	// launchMu protects the following. Under mu held for reading, next
	// is confined by the current ruleset; rebuilds and Close dismiss it.
	launchMu  sync.Mutex
	next      *launcher // a thread confined for the next command
	preparing bool      // a goroutine is confining one
}

// SandboxStatus says what a Sandbox enforces on this kernel.
type SandboxStatus struct {
	// ABI is the kernel's Landlock ABI version; 0 means no Landlock.
	ABI int
	// Enforced reports whether commands run inside a Landlock domain at
	// all. When false, only the command policy guards.
	Enforced bool
	// Reason says why Enforced is false.
	Reason string
	// Filesystem reports that protected roots, critical files, hidden and
	// read-only paths are enforced (ABI 1).
	Filesystem bool
	// Refer reports that files can be renamed and linked across
	// directories (ABI 2); below it every cross-directory rename or link
	// fails.
	Refer bool
	// Truncate reports that truncate(2) on a critical file is denied
	// (ABI 3); below it only opening for writing is.
	Truncate bool
	// IoctlDev reports that ioctl on devices is governed (ABI 5).
	IoctlDev bool
	// Signals reports that commands cannot signal processes outside their
	// call (ABI 6); below it `kill -9 -1` reaches the gateway when the
	// command runs as the gateway's user.
	Signals bool
	// Ptrace reports that commands cannot ptrace processes outside their
	// call or open their /proc/<pid>/mem, cwd, root and fd links (ABI 1).
	// /proc/<pid>/environ and maps of the gateway are kept from commands
	// by NonDumpable instead, except from commands running as root.
	Ptrace bool
	// NonDumpable reports that the gateway process was made non-dumpable.
	NonDumpable bool
	// Missing lists configured paths that do not exist (yet), as of the
	// latest ruleset: empty until the first is built (see Sandbox.Ready).
	Missing []string
	// Unenforced lists, in words, what this kernel does not enforce.
	Unenforced []string
	// Views reports that commands run in a view of their principal's own
	// (namespaces, seccomp; see ViewConfig).
	Views bool
	// ViewsReason says why Views is false when views were asked for.
	ViewsReason string
	// Seatbelt reports that commands run under a macOS Seatbelt profile
	// (sandbox-exec) generated from the same configuration, one profile
	// per principal when views were asked for (see SeatbeltProfile).
	Seatbelt bool
}

// String returns a one-line summary for health reports.
func (s SandboxStatus) String() string {
	if !s.Enforced {
		return "no kernel sandbox (" + s.Reason + "): only the command policy guards"
	}
	msg := fmt.Sprintf("Landlock ABI %d enforced", s.ABI)
	if s.Seatbelt {
		msg = "Seatbelt (sandbox-exec) enforced"
	}
	if s.Views {
		msg = "per-principal views (user, mount, PID and IPC namespaces, seccomp) beneath " + msg
	} else if s.ViewsReason != "" {
		msg += "; no per-principal views (" + s.ViewsReason + ")"
	}
	if len(s.Unenforced) > 0 {
		msg += "; not enforced: " + strings.Join(s.Unenforced, "; ")
	}
	return msg
}

// ErrSandboxABI means the kernel's Landlock ABI is below
// SandboxConfig.RequireABI.
var ErrSandboxABI = errors.New("exec: sandbox: Landlock ABI too old")

// ErrSandboxClosed means the Sandbox was closed.
var ErrSandboxClosed = errors.New("exec: sandbox: closed")

// NewSandbox checks the kernel's Landlock ABI and cfg's paths, and starts
// building the ruleset for cfg (unless cfg.BuildLater defers that).
// Without Landlock it returns a Sandbox that
// enforces nothing and says so in Status, unless cfg.RequireABI asks for
// more, in which case it returns an error wrapping ErrSandboxABI. A path
// that cannot be resolved for another reason than not existing is an
// error.
//
// The ruleset itself — a walk of the protected roots' directories, a few
// milliseconds on a typical system — is built in the background, so that
// a gateway starts without waiting for it: the first command waits
// instead, and runs only inside it. Should that build fail (a directory
// that cannot be read), commands fail with its error until a rebuild
// succeeds; Ready waits for the build and returns the error.
func NewSandbox(cfg SandboxConfig) (*Sandbox, error) {
	c := cfg
	c.Protected = slices.Clone(cfg.Protected)
	c.Critical = slices.Clone(cfg.Critical)
	c.Sealed = slices.Clone(cfg.Sealed)
	c.Hidden = slices.Clone(cfg.Hidden)
	c.ReadOnly = slices.Clone(cfg.ReadOnly)
	if v := cfg.Views; v != nil && (v.TmpDir == "" || !filepath.IsAbs(v.TmpDir)) {
		return nil, fmt.Errorf("exec: sandbox: ViewConfig.TmpDir must be an absolute directory for the principals' private /tmp, got %q", v.TmpDir)
	}
	s := &Sandbox{cfg: c, ready: make(chan struct{})}
	if path := cmp.Or(c.seatbeltExec, seatbeltPath()); path != "" {
		s.seatbelt = newSeatbelt(path, cfg.Views)
		close(s.ready)
		return s, nil
	}
	noInheritedDescriptors()
	if cfg.Views != nil {
		s.views = newViewSet(*cfg.Views)
	}
	s.abi, s.abiErr = landlockABI()
	if c.RequireABI > 0 && s.abi < c.RequireABI {
		why := fmt.Sprintf("have %d, need %d", s.abi, c.RequireABI)
		if s.abiErr != nil {
			why += ": " + s.abiErr.Error()
		}
		return nil, fmt.Errorf("%w: %s", ErrSandboxABI, why)
	}
	if s.abi == 0 {
		close(s.ready)
		return s, nil
	}
	if s.views == nil {
		if err := protectProcess(); err != nil {
			return nil, fmt.Errorf("exec: sandbox: make the gateway non-dumpable: %w", err)
		}
	}
	if _, _, err := planTree(c); err != nil {
		return nil, err
	}
	s.build = sync.OnceFunc(func() {
		go func() {
			defer close(s.ready)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.buildErr = s.rebuildLocked()
		}()
	})
	if !c.BuildLater {
		s.build()
	}
	return s, nil
}

// Start starts building the first ruleset in the background, if that has
// not started yet (SandboxConfig.BuildLater); it does not wait. A nil
// Sandbox has nothing to build.
func (s *Sandbox) Start() {
	if s != nil && s.build != nil {
		s.build()
	}
}

// waitReady starts the first build if needed and waits for it.
func (s *Sandbox) waitReady() {
	s.Start()
	<-s.ready
}

// Ready waits until the first ruleset is built and returns the error that
// keeps s from having one, if any. A nil Sandbox is ready.
func (s *Sandbox) Ready() error {
	if s == nil {
		return nil
	}
	s.waitReady()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.plan == nil && s.abi > 0 {
		return s.buildErr
	}
	return nil
}

// Status reports what s enforces on this kernel. A nil Sandbox enforces
// nothing.
func (s *Sandbox) Status() SandboxStatus {
	if s == nil {
		return SandboxStatus{Reason: "no sandbox configured"}
	}
	if s.seatbelt != nil {
		return s.seatbelt.status()
	}
	st := SandboxStatus{ABI: s.abi}
	if s.views != nil {
		if err := s.views.available(); err != nil {
			st.ViewsReason = err.Error()
		} else {
			st.Views = true
			if lim := s.views.limits(); lim != "" {
				st.Unenforced = append(st.Unenforced, lim)
			}
		}
	}
	if s.abi == 0 {
		st.Reason = "no Landlock on this kernel"
		if s.abiErr != nil {
			st.Reason += ": " + s.abiErr.Error()
		}
		return st
	}
	st.Enforced, st.Filesystem, st.Ptrace = true, true, true
	st.Refer, st.Truncate, st.IoctlDev, st.Signals = s.abi >= 2, s.abi >= 3, s.abi >= 5, s.abi >= 6
	if !st.Refer {
		st.Unenforced = append(st.Unenforced, "cross-directory rename and link always fail (ABI < 2)")
	}
	if !st.Truncate {
		st.Unenforced = append(st.Unenforced, "truncate(2) of critical files (ABI < 3)")
	}
	if !st.IoctlDev {
		st.Unenforced = append(st.Unenforced, "device ioctl (ABI < 5)")
	}
	if !st.Signals {
		st.Unenforced = append(st.Unenforced, "signal scoping: commands can signal the gateway (ABI < 6)")
	}
	st.NonDumpable = !st.Views
	switch {
	case os.Geteuid() == 0 && st.Views:
		st.Unenforced = append(st.Unenforced, "commands run as root without capabilities: they own root's files in their writable trees")
	case os.Geteuid() == 0:
		st.Unenforced = append(st.Unenforced, "commands run as root: they can read the gateway's /proc/<pid>/environ and keep root's powers beyond files")
	}
	// Not under mu: a build holds it while it walks the directories, and
	// Status answers at once (initialize's instructions carry it).
	if m := s.missing.Load(); m != nil {
		st.Missing = slices.Clone(*m)
	}
	return st
}

// Close releases the ruleset and ends the thread confined for the next
// command, if any, waiting until it is gone. Commands started afterwards
// fail with ErrSandboxClosed; running ones stay sandboxed.
func (s *Sandbox) Close() error {
	if s == nil {
		return nil
	}
	s.waitReady()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.launchMu.Lock()
	s.closed = true
	s.launchMu.Unlock()
	s.dismissLocked(true)
	if s.views != nil {
		s.views.close()
	}
	return s.rs.close()
}

// errNoViews means a command cannot run in a view: the Sandbox has none,
// or they are unavailable on this machine (SandboxStatus.ViewsReason).
var errNoViews = errors.New("exec: sandbox: no per-principal views")

// Refresh rebuilds the ruleset now, re-reading the directories it
// enumerates. Run does this by itself when one of them changed.
func (s *Sandbox) Refresh() error {
	s.waitReady()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrSandboxClosed
	}
	if s.abi == 0 {
		return nil
	}
	return s.rebuildLocked()
}

// SetConfig replaces what s protects and rebuilds the ruleset; commands
// started afterwards get the new rules, running ones keep theirs. Use it
// when the roots change. cfg.RequireABI is checked again. On error, s
// keeps its old configuration.
func (s *Sandbox) SetConfig(cfg SandboxConfig) error {
	if cfg.RequireABI > 0 && s.abi < cfg.RequireABI {
		return fmt.Errorf("%w: have %d, need %d", ErrSandboxABI, s.abi, cfg.RequireABI)
	}
	c := cfg
	c.Protected = slices.Clone(cfg.Protected)
	c.Critical = slices.Clone(cfg.Critical)
	c.Sealed = slices.Clone(cfg.Sealed)
	c.Hidden = slices.Clone(cfg.Hidden)
	c.ReadOnly = slices.Clone(cfg.ReadOnly)
	s.waitReady()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrSandboxClosed
	}
	old := s.cfg
	s.cfg = c
	if s.seatbelt != nil {
		s.seatbelt.forget()
	}
	if s.abi == 0 {
		return nil
	}
	if err := s.rebuildLocked(); err != nil {
		s.cfg = old
		return err
	}
	return nil
}

// rebuildLocked plans and builds a new ruleset, then swaps it in.
func (s *Sandbox) rebuildLocked() error {
	cfg := s.cfg
	if s.views != nil && s.views.available() == nil {
		// Views cover hidden paths with empty mounts; Landlock's way of
		// hiding (rights taken from every directory on the way) would
		// also take them from the views' own /proc, /dev and /tmp, whose
		// mount points it ignores.
		cfg.Hidden = nil
	}
	p, err := planSandbox(cfg, handledAccess(s.abi))
	if err != nil {
		return err
	}
	rs, err := buildRuleset(s.abi, p)
	if err != nil {
		return err
	}
	_ = s.rs.close()
	s.rs, s.plan, s.buildErr = rs, p, nil
	s.missing.Store(&p.missing)
	s.dismissLocked(false)
	return nil
}

// mtimeGrain bounds the granularity of directory modification times:
// without multigrain timestamps, Linux stamps changes with the coarse
// clock (one tick, 10ms at HZ=100).
const mtimeGrain = 20 * time.Millisecond

// fresh reports whether the plan still matches the directories it read.
// A directory changed in the same clock tick as the build may keep its
// time, so a plan that read a directory changed that recently is
// rebuilt once, a tick later.
func (p *sandboxPlan) fresh() bool {
	if p == nil {
		return false // never built: build it now
	}
	settled := time.Since(p.built) > mtimeGrain
	for _, w := range p.watch {
		fi, err := os.Stat(w.path)
		if err != nil || !fi.ModTime().Equal(w.mtime) {
			return false
		}
		if settled && w.mtime.After(p.built.Add(-mtimeGrain)) {
			return false
		}
	}
	return true
}

// Landlock file system rights. The values are the kernel's ABI; they are
// repeated here so that planning can be tested on any system.
const (
	accExecute    uint64 = 1 << 0
	accWriteFile  uint64 = 1 << 1
	accReadFile   uint64 = 1 << 2
	accReadDir    uint64 = 1 << 3
	accRemoveDir  uint64 = 1 << 4
	accRemoveFile uint64 = 1 << 5
	accMakeChar   uint64 = 1 << 6
	accMakeDir    uint64 = 1 << 7
	accMakeReg    uint64 = 1 << 8
	accMakeSock   uint64 = 1 << 9
	accMakeFifo   uint64 = 1 << 10
	accMakeBlock  uint64 = 1 << 11
	accMakeSym    uint64 = 1 << 12
	accRefer      uint64 = 1 << 13 // ABI 2
	accTruncate   uint64 = 1 << 14 // ABI 3
	accIoctlDev   uint64 = 1 << 15 // ABI 5

	accABI1 = accExecute | accWriteFile | accReadFile | accReadDir | accRemoveDir | accRemoveFile |
		accMakeChar | accMakeDir | accMakeReg | accMakeSock | accMakeFifo | accMakeBlock | accMakeSym
	// accFile are the rights that apply to a file that is not a directory.
	accFile   = accExecute | accWriteFile | accReadFile | accTruncate | accIoctlDev
	accRemove = accRemoveDir | accRemoveFile
	accRead   = accExecute | accReadFile | accReadDir
)

// handledAccess returns the file system rights Landlock knows at abi.
func handledAccess(abi int) uint64 {
	if abi < 1 {
		return 0
	}
	h := accABI1
	if abi >= 2 {
		h |= accRefer
	}
	if abi >= 3 {
		h |= accTruncate
	}
	if abi >= 5 {
		h |= accIoctlDev
	}
	return h
}

type pathKind int

const (
	kindProtected pathKind = iota + 1
	kindSealed
	kindCritical
	kindHidden
	kindReadOnly
)

// sandboxRule grants access on one path.
type sandboxRule struct {
	path   string
	access uint64
}

type watchedDir struct {
	path  string
	mtime time.Time
}

// sandboxPlan is the computed rule set: pure data, built from the file
// system by planSandbox.
type sandboxPlan struct {
	built   time.Time // when the directories were read
	rules   []sandboxRule
	watch   []watchedDir
	missing []string
}

// planNode is a directory or file on the path to a configured path.
type planNode struct {
	name     string
	kind     pathKind // 0 for a directory on the way
	isDir    bool
	children map[string]*planNode
}

// planSandbox computes the rules that grant everything except what cfg
// withholds, for the rights in handled.
func planSandbox(cfg SandboxConfig, handled uint64) (*sandboxPlan, error) {
	p, root, err := planTree(cfg)
	if err != nil {
		return nil, err
	}
	watch := p.watcher()
	if err := p.walk(root, "/", handled, 0, watch); err != nil {
		return nil, err
	}
	return p, nil
}

// watcher returns the function that adds a directory to p's watch list,
// once.
func (p *sandboxPlan) watcher() func(string) {
	watched := map[string]bool{}
	for _, w := range p.watch {
		watched[w.path] = true
	}
	return func(dir string) {
		if watched[dir] {
			return
		}
		if fi, err := os.Stat(dir); err == nil {
			watched[dir] = true
			p.watch = append(p.watch, watchedDir{dir, fi.ModTime()})
		}
	}
}

// planTree resolves cfg's paths into the tree the walk starts from: the
// cheap half of planning, where a path that cannot be resolved is found.
func planTree(cfg SandboxConfig) (*sandboxPlan, *planNode, error) {
	p := &sandboxPlan{built: time.Now()}
	root := &planNode{name: "/", isDir: true}
	watch := p.watcher()
	add := func(paths []string, kind pathKind) error {
		for _, raw := range paths {
			path, exists, err := resolvePath(raw)
			if err != nil {
				return fmt.Errorf("exec: sandbox: %s: %w", raw, err)
			}
			if !exists {
				p.missing = append(p.missing, path)
				// Watch the nearest directory that exists, to notice
				// the path appear.
				for d := filepath.Dir(path); ; d = filepath.Dir(d) {
					if _, err := os.Stat(d); err == nil || d == "/" {
						watch(d)
						break
					}
				}
				continue
			}
			fi, err := os.Stat(path)
			if err != nil {
				return fmt.Errorf("exec: sandbox: %w", err)
			}
			k := kind
			if k == kindCritical && fi.IsDir() {
				k = kindReadOnly
			}
			if path == "/" {
				if k == kindProtected {
					root.kind = max(root.kind, k)
					continue
				}
				return fmt.Errorf("exec: sandbox: %s cannot be %s", raw, k)
			}
			n := root
			for part := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
				if n.children == nil {
					n.children = map[string]*planNode{}
				}
				c := n.children[part]
				if c == nil {
					c = &planNode{name: part, isDir: true}
					n.children[part] = c
				}
				n = c
			}
			n.isDir = fi.IsDir()
			// Where two settings name one path, the stricter wins.
			n.kind = max(n.kind, k)
		}
		return nil
	}
	for _, set := range []struct {
		paths []string
		kind  pathKind
	}{{cfg.Protected, kindProtected}, {cfg.Sealed, kindSealed}, {cfg.Critical, kindCritical}, {cfg.Hidden, kindHidden}, {cfg.ReadOnly, kindReadOnly}} {
		if err := add(set.paths, set.kind); err != nil {
			return nil, nil, err
		}
	}
	return p, root, nil
}

func (k pathKind) String() string {
	switch k {
	case kindProtected:
		return "protected"
	case kindSealed:
		return "sealed"
	case kindCritical:
		return "critical"
	case kindHidden:
		return "hidden"
	case kindReadOnly:
		return "read-only"
	}
	return "unconstrained"
}

// ceiling returns the rights that may be granted on n or above it without
// reaching what n's subtree withholds.
func (n *planNode) ceiling(handled uint64) uint64 {
	c := handled
	switch n.kind {
	case kindProtected:
		c &^= accRemove
	case kindSealed:
		c &= accRead
	case kindCritical:
		c &^= accWriteFile | accTruncate | accRemove
	case kindHidden:
		if n.isDir {
			// Listing names is allowed along the way and inside, so
			// that `ls /` and `find /` keep working; reading, writing,
			// creating and removing are not.
			return c & accReadDir
		}
		c &^= accFile | accRemove
	case kindReadOnly:
		return c & accRead
	}
	if n.kind == kindHidden || n.kind == kindReadOnly {
		return c // their subtrees are not looked at
	}
	for _, ch := range n.children {
		c &= ch.ceiling(handled)
	}
	return c
}

// walk emits the rules for n (at path) and its subtree. inherited is what
// the rules on the directories above grant: Landlock grants the union of
// the rules on a file and on every directory above it, so a rule that
// grants nothing more is left out. That keeps the files directly in a
// protected root (all of /usr/bin) from needing a rule each, and the
// ruleset small: the kernel copies every rule into each call's domain.
func (p *sandboxPlan) walk(n *planNode, path string, handled, inherited uint64, watch func(string)) error {
	grant := n.ceiling(handled)
	if !n.isDir {
		grant &= accFile
	}
	if grant&^inherited != 0 {
		p.rules = append(p.rules, sandboxRule{path, grant})
	}
	inherited |= grant
	if !n.isDir || n.kind == kindHidden || n.kind == kindReadOnly {
		return nil
	}
	if len(n.children) == 0 && n.kind != kindProtected && n.kind != kindSealed {
		return nil // the grant above covers the whole tree
	}
	entries, err := os.ReadDir(path)
	if errors.Is(err, fs.ErrPermission) {
		// A directory the gateway cannot list (/root, for a gateway that
		// is not root) is sealed: its entries keep only its own rights,
		// and commands of the gateway's user could not reach them anyway.
		return nil
	}
	if err != nil {
		return fmt.Errorf("exec: sandbox: %w", err)
	}
	watch(path)
	for _, e := range entries {
		child := filepath.Join(path, e.Name())
		if c := n.children[e.Name()]; c != nil {
			if err := p.walk(c, child, handled, inherited, watch); err != nil {
				return err
			}
			continue
		}
		// A symbolic link is checked at its target, wherever that is;
		// granting on it would grant on the target.
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		full := handled
		if !e.IsDir() {
			if n.kind == kindSealed {
				continue // read-only, as the directory
			}
			full &= accFile
		}
		if full&^inherited != 0 {
			p.rules = append(p.rules, sandboxRule{child, full})
		}
	}
	return nil
}

// resolvePath makes raw absolute and resolves its symbolic links. A path
// that does not exist is returned cleaned, with exists false.
func resolvePath(raw string) (path string, exists bool, err error) {
	if raw == "" {
		return "", false, errors.New("empty path")
	}
	abs, err := filepath.Abs(raw)
	if err != nil {
		return "", false, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return abs, false, nil
	}
	if err != nil {
		return "", false, err
	}
	return real, true, nil
}
