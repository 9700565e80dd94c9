package exec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Local runs commands on this machine.
//
// Each command runs in its own process group and, where the kernel allows,
// in a cgroup v2 of its own, else with a marker in its environment (see
// TrackMode and Tracking). When the command's leader exits and its output
// is drained, every process it left behind is killed: `sleep 1000 &`,
// setsid and double-forked daemons included (unless LeaveDescendants). When the
// Command's Timeout passes or the context ends, the call's processes get
// SIGTERM and, Grace later, SIGKILL. With a Sandbox, each command runs in
// a Landlock domain of its own; Result.Sandboxed says whether it did.
//
// A Local is safe for concurrent use; its fields must not change after the
// first Run.
type Local struct {
	// Env is the base environment, as "KEY=value" pairs. If nil, the
	// gateway's own environment is used. Either way, variables for which
	// Private reports true are removed before the Command's Env is merged.
	Env []string
	// Private reports whether a base environment variable belongs to the
	// gateway and must not reach a child (tokens, secrets). If nil, every
	// variable whose name starts with "RIGOUT_" is private.
	Private func(name string) bool
	// Shell is the program that runs Command.Shell with "-c". If empty,
	// bash is used when it is on PATH, else /bin/sh.
	Shell string
	// Grace is the time between SIGTERM and SIGKILL. If zero, DefaultGrace.
	Grace time.Duration
	// Drain is how long output is still read after the process exits while
	// a background descendant holds the pipes open. If zero, 250ms.
	Drain time.Duration
	// Sandbox, if set, confines every command (see Sandbox). If nil,
	// commands run unconfined and each Result says so; the tool families,
	// sessions.Manager and federation then refuse the Local
	// ([ErrNoSandbox]) unless UnsafeNoSandbox is set.
	Sandbox *Sandbox
	// UnsafeNoSandbox, if true, says the embedder means a Local without a
	// Sandbox to run its commands unconfined: only the command policy
	// stands between them and the machine. [CheckSandboxed] accepts such
	// a Local; it has no effect when Sandbox is set.
	UnsafeNoSandbox bool
	// LeaveDescendants, if true, lets processes a command started in the
	// background outlive the call. By default they are killed when the
	// leader exits (after Drain), and Result.Orphans counts them.
	LeaveDescendants bool

	trackOnce sync.Once
	// trackMu protects the following.
	trackMu sync.Mutex
	cgBase  string // directory of the call cgroups
	cgErr   error  // why there are none

	shellOnce sync.Once
	shell     string
	envOnce   sync.Once
	env       map[string]string
	baseEnv   []string  // env as a sorted slice, for commands that add nothing
	bufs      sync.Pool // copy buffers for output capture
}

var _ Runner = (*Local)(nil)

// Run runs cmd and waits for it. See Runner for the error contract.
func (l *Local) Run(ctx context.Context, cmd Command) (Result, error) {
	p, res, err := l.launch(ctx, cmd, nil, nil)
	if err != nil {
		return res, err
	}
	return p.Wait()
}

type stopReason int

const (
	stopNone stopReason = iota
	stopTimeout
	stopCanceled
)

// watch waits for the process to exit, the timeout to pass or ctx to end.
// On the latter two it sends SIGTERM to the group, then SIGKILL after the
// grace period if the leader is still running.
func (l *Local) watch(ctx context.Context, timeout time.Duration, tr *tracker, exited <-chan struct{}) stopReason {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var why stopReason
	select {
	case <-exited:
		return stopNone
	case <-timer:
		why = stopTimeout
	case <-ctx.Done():
		why = stopCanceled
	}
	tr.signal(syscall.SIGTERM)
	grace := time.NewTimer(l.grace())
	defer grace.Stop()
	select {
	case <-exited:
	case <-grace.C:
		tr.signal(syscall.SIGKILL)
	}
	return why
}

// newCallMarker returns a fresh environment entry marking one command:
// RIGOUT_CALL_ID=<call>.<random> when the context names the call (see
// WithCall), so that a later start can find what the call left running,
// else RIGOUT_CALL_ID=<random>.
func newCallMarker(call string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	if call != "" {
		return callMarkerEnv + "=" + call + "." + hex.EncodeToString(b[:])
	}
	return callMarkerEnv + "=" + hex.EncodeToString(b[:])
}

// start starts c, inside sandbox if it is not nil, and reports whether
// the command is confined.
func (l *Local) start(ctx context.Context, sandbox *Sandbox, c *osexec.Cmd) (bool, error) {
	switch {
	case sandbox == nil:
		return false, c.Start()
	case sandbox.seatbelt != nil:
		return sandbox.startSeatbelt(ctx, c)
	}
	return sandbox.start(c)
}

func (l *Local) grace() time.Duration {
	if l.Grace > 0 {
		return l.Grace
	}
	return DefaultGrace
}

func (l *Local) drain() time.Duration {
	if l.Drain > 0 {
		return l.Drain
	}
	return 250 * time.Millisecond
}

func (l *Local) shellPath() string {
	l.shellOnce.Do(func() {
		l.shell = l.Shell
		if l.shell != "" {
			return
		}
		if p, err := osexec.LookPath("bash"); err == nil {
			l.shell = p
			return
		}
		l.shell = "/bin/sh"
	})
	return l.shell
}

// environ returns the child's environment: the base without private
// variables, with extra merged over it, sorted for determinism.
func (l *Local) environ(extra map[string]string, dir string) []string {
	l.envOnce.Do(func() {
		base := l.Env
		if base == nil {
			base = os.Environ()
		}
		private := l.Private
		if private == nil {
			private = func(name string) bool { return strings.HasPrefix(name, "RIGOUT_") }
		}
		l.env = make(map[string]string, len(base))
		for _, kv := range base {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" || private(k) {
				continue
			}
			l.env[k] = v
		}
		for k, v := range l.env {
			l.baseEnv = append(l.baseEnv, k+"="+v)
		}
		sort.Strings(l.baseEnv)
		l.baseEnv = slices.Clip(l.baseEnv)
	})
	if len(extra) == 0 && dir == "" {
		return l.baseEnv // os/exec copies it; never modified
	}
	out := make([]string, 0, len(l.env)+len(extra)+1)
	for k, v := range l.env {
		if _, ok := extra[k]; !ok {
			out = append(out, k+"="+v)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	if _, ok := extra["PWD"]; !ok && dir != "" {
		// PWD names the working directory, as a shell would set it.
		if abs, err := filepath.Abs(dir); err == nil {
			out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "PWD=") })
			out = append(out, "PWD="+abs)
		}
	}
	sort.Strings(out)
	return out
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGFPE:
		return "SIGFPE"
	case syscall.SIGILL:
		return "SIGILL"
	case syscall.SIGUSR1:
		return "SIGUSR1"
	case syscall.SIGUSR2:
		return "SIGUSR2"
	case syscall.SIGALRM:
		return "SIGALRM"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// mergeSecrets returns env with secrets over it, or env itself when there
// are none.
func mergeSecrets(env, secrets map[string]string) map[string]string {
	if len(secrets) == 0 {
		return env
	}
	out := make(map[string]string, len(env)+len(secrets))
	for k, v := range env {
		out[k] = v
	}
	for k, v := range secrets {
		out[k] = v
	}
	return out
}
