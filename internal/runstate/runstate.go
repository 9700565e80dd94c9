// Package runstate records a running rigout gateway in its state directory
// and finds it again: a lock held for the gateway's lifetime, a PID file,
// and runtime.json with the process's identity (PID, start time and boot
// ID: /proc/PID/stat and /proc/sys/kernel/random/boot_id on Linux, sysctl
// kern.proc.pid and kern.bootsessionuuid on macOS) beside the address it
// serves.
//
// The identity is what makes signalling safe: a PID the kernel has since
// given to another process has another start time, so [Inspect] reports
// such state as stale and [Process.Signal] refuses it. On Linux, signals go
// through a pidfd opened before the identity is checked, so the process
// checked is the process signalled; elsewhere the identity is checked again
// right before each kill(2).
package runstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rigout/rigout/internal/atomicfile"
)

// The files a running gateway keeps in its state directory.
const (
	LockFile    = "rigout.lock"  // flock'd for the gateway's lifetime; never removed
	PIDFile     = "rigout.pid"   // the PID, as text
	RuntimeFile = "runtime.json" // the Runtime record
	LogFile     = "rigout.log"   // the activity log (owner-only, secrets redacted)
)

// Identity names one process for the lifetime of one boot: the PID alone
// is reused by the kernel, the PID with its start time is not.
type Identity struct {
	PID int `json:"pid"`
	// StartTime is field 22 of /proc/PID/stat on Linux (clock ticks after
	// boot), p_starttime in microseconds since the epoch on macOS.
	StartTime uint64 `json:"start_time"`
	// BootID is the kernel's boot ID, so that state left from
	// before a reboot never matches a process after it.
	BootID string `json:"boot_id"`
}

// Self returns this process's identity.
func Self() (Identity, error) { return Of(os.Getpid()) }

// parseStat returns the state and the start time of a /proc/PID/stat line.
// The command name is in parentheses and may hold spaces and parentheses,
// so the fields are counted from the last ')'.
func parseStat(s string) (state string, start uint64, err error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 {
		return "", 0, errors.New("malformed /proc stat: too few fields")
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("malformed /proc stat start time: %w", err)
	}
	return f[0], start, nil
}

// Runtime is what runtime.json holds about the running gateway.
type Runtime struct {
	Identity
	Started        time.Time `json:"started"`
	Version        string    `json:"version"`
	Commit         string    `json:"commit,omitempty"`
	Addr           string    `json:"addr"`       // the bound listener
	URL            string    `json:"url"`        // the MCP endpoint clients use
	HealthURL      string    `json:"health_url"` // reachable from this machine
	Token          string    `json:"token"`      // the handed-out token's name, or a summary
	Hosts          []string  `json:"hosts,omitempty"`
	ConnectionFile string    `json:"connection_file,omitempty"`
	LogFile        string    `json:"log_file,omitempty"`
}

// ErrRunning is returned by Acquire when a gateway already holds the lock.
var ErrRunning = errors.New("runstate: a gateway is already running in this state directory")

// RunningError is Acquire's error when the lock is held; Runtime is what
// runtime.json says about the holder, nil if it says nothing yet.
type RunningError struct {
	Dir     string
	Runtime *Runtime
}

func (e *RunningError) Error() string {
	if e.Runtime == nil {
		return fmt.Sprintf("a gateway is already running (or starting) with state directory %s", e.Dir)
	}
	return fmt.Sprintf("a gateway is already running with state directory %s: PID %d at %s since %s",
		e.Dir, e.Runtime.PID, e.Runtime.URL, e.Runtime.Started.Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrRunning) hold.
func (e *RunningError) Unwrap() error { return ErrRunning }

// Lock is the held lock of a running gateway.
type Lock struct {
	dir string
	f   *os.File
}

// Acquire takes the state directory's lock for this process. If another
// process holds it, the error is a *RunningError. State left by a gateway
// that died without cleaning up is removed and returned as stale (nil if
// there was none).
func Acquire(dir string) (l *Lock, stale *Status, err error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("runstate: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			st := Inspect(dir)
			return nil, nil, &RunningError{Dir: dir, Runtime: st.Runtime}
		}
		return nil, nil, fmt.Errorf("runstate: lock %s: %w", f.Name(), err)
	}
	// The lock is ours, so whatever PID and runtime files exist were left
	// by a gateway that is gone.
	if st := Inspect(dir); st.State != NotRunning {
		stale = &st
		if st.State == Running {
			// The recorded process is alive yet does not hold the lock (its
			// files were copied or edited): report it, remove nothing of it.
			stale.Reason = fmt.Sprintf("PID %d is recorded and alive but does not hold the lock", st.Runtime.PID)
		}
		_ = os.Remove(filepath.Join(dir, RuntimeFile))
		_ = os.Remove(filepath.Join(dir, PIDFile))
	}
	return &Lock{dir: dir, f: f}, stale, nil
}

// Write records rt (its Identity replaced by this process's) in
// runtime.json and the PID file, both owner-only and written atomically.
func (l *Lock) Write(rt Runtime) error {
	id, err := Self()
	if err != nil {
		return err
	}
	rt.Identity = id
	b, err := json.MarshalIndent(rt, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(l.dir, PIDFile), []byte(strconv.Itoa(id.PID)+"\n")); err != nil {
		return fmt.Errorf("runstate: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(l.dir, RuntimeFile), append(b, '\n')); err != nil {
		return fmt.Errorf("runstate: %w", err)
	}
	return nil
}

// Release removes runtime.json and the PID file and unlocks.
func (l *Lock) Release() error {
	err := errors.Join(rmIfExists(filepath.Join(l.dir, RuntimeFile)), rmIfExists(filepath.Join(l.dir, PIDFile)))
	return errors.Join(err, l.f.Close())
}

func rmIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// State is what Inspect found.
type State int

const (
	NotRunning State = iota // no PID file, no runtime.json
	Running                 // the recorded process is alive and is the one recorded
	Stale                   // files are left, but their process is gone or another has its PID
)

func (s State) String() string {
	return [...]string{"not running", "running", "stale"}[s]
}

// Status is the state of a state directory.
type Status struct {
	State   State
	Runtime *Runtime // as recorded; nil when there is no runtime.json
	Reason  string   // why the state is stale
}

// Inspect reads the state directory without taking the lock or signalling
// anything: Running only when the recorded PID is alive with the recorded
// start time and boot ID.
func Inspect(dir string) Status {
	rt, rerr := readRuntime(dir)
	pidText, perr := os.ReadFile(filepath.Join(dir, PIDFile))
	switch {
	case rerr != nil && errors.Is(rerr, fs.ErrNotExist) && errors.Is(perr, fs.ErrNotExist):
		return Status{State: NotRunning}
	case rerr != nil && !errors.Is(rerr, fs.ErrNotExist):
		return Status{State: Stale, Reason: fmt.Sprintf("%s is unreadable (%v); its process cannot be identified and is never signalled", RuntimeFile, rerr)}
	case rerr != nil:
		return Status{State: Stale, Reason: fmt.Sprintf("%s (%q) has no %s: the process cannot be identified and is never signalled", PIDFile, strings.TrimSpace(string(pidText)), RuntimeFile)}
	}
	return Status{State: verify(rt.Identity), Runtime: rt, Reason: reason(rt.Identity)}
}

func verify(want Identity) State {
	if reason(want) == "" {
		return Running
	}
	return Stale
}

// reason says why want no longer names a live process, or "" if it does.
func reason(want Identity) string {
	got, err := Of(want.PID)
	switch {
	case err != nil:
		return fmt.Sprintf("PID %d is not running", want.PID)
	case want.BootID != "" && got.BootID != want.BootID:
		return fmt.Sprintf("recorded before a reboot (boot %s, now %s)", want.BootID, got.BootID)
	case got.StartTime != want.StartTime:
		return fmt.Sprintf("PID %d now belongs to another process (started at tick %d, recorded %d); it is not signalled", want.PID, got.StartTime, want.StartTime)
	}
	return ""
}

func readRuntime(dir string) (*Runtime, error) {
	b, err := os.ReadFile(filepath.Join(dir, RuntimeFile))
	if err != nil {
		return nil, err
	}
	var rt Runtime
	if err := json.Unmarshal(b, &rt); err != nil {
		return nil, err
	}
	if rt.PID <= 0 {
		return nil, fmt.Errorf("no PID recorded")
	}
	return &rt, nil
}

// ErrNotSame is Signal's error when the PID no longer names the recorded
// process.
var ErrNotSame = errors.New("runstate: the recorded process is gone or its PID belongs to another process")
