package sessions

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/redact"
)

// Defaults used when the corresponding Config field is zero.
const (
	DefaultMaxPerPrincipal = 16
	DefaultMaxTotal        = 64
	DefaultRetention       = time.Hour
	DefaultMaxFinished     = 64
	DefaultMaxLifetime     = 24 * time.Hour
	DefaultSpoolMax        = 64 << 20 // per process, both streams
	DefaultSpoolTotal      = 1 << 30
	DefaultMemoryMax       = 64 << 10 // per stream
	DefaultReapInterval    = 30 * time.Second
)

// Sentinel errors.
var (
	// ErrNotFound means no process with that ID belongs to the principal.
	// A process of another principal is not found either, so its existence
	// does not leak.
	ErrNotFound = errors.New("sessions: not found")
	// ErrClosed means the Manager has been closed.
	ErrClosed = errors.New("sessions: manager closed")
	// ErrFinished means the process has already exited.
	ErrFinished = errors.New("sessions: process has finished")
	// ErrInputClosed means the process's standard input is closed, or was
	// given in full when it started.
	ErrInputClosed = errors.New("sessions: standard input is closed")
	// ErrStopped is the cause of a process ended by Stop.
	ErrStopped = errors.New("sessions: stopped")
	// ErrCeiling is the cause of a process ended by Config.MaxLifetime.
	ErrCeiling = errors.New("sessions: ran past the gateway's ceiling on a process's life")
)

// LimitError is returned by Start when a cap on running processes is
// reached.
type LimitError struct {
	// Principal is the principal whose process was refused.
	Principal string
	// Limit is the cap that was reached.
	Limit int
	// PerPrincipal is true for the per-principal cap, false for the
	// overall one.
	PerPrincipal bool
	// Terminals is true for a cap on terminal sessions, false for one on
	// background processes.
	Terminals bool
}

func (e *LimitError) Error() string {
	if e.Terminals {
		if e.PerPrincipal {
			return fmt.Sprintf("sessions: %s already has %d terminal sessions open, the most allowed; close one first", e.Principal, e.Limit)
		}
		return fmt.Sprintf("sessions: the gateway already has %d terminal sessions open, the most allowed", e.Limit)
	}
	if e.PerPrincipal {
		return fmt.Sprintf("sessions: %s already runs %d background processes, the most allowed; stop one first", e.Principal, e.Limit)
	}
	return fmt.Sprintf("sessions: the gateway already runs %d background processes, the most allowed", e.Limit)
}

// Config configures a Manager. Local is required, so that no process
// runs outside a sandbox by accident; the rest has useful zero values: the
// defaults above, and a spool directory under the system's temporary
// directory.
type Config struct {
	// Local runs the processes: give the Manager the same Local as the
	// shell family, to keep its sandbox. Required, with a Sandbox or with
	// UnsafeNoSandbox to run the processes unconfined: else New fails with
	// exec.ErrNoSandbox. Leave its LeaveDescendants false: a Manager's
	// process is one Local call from start to exit, so what it leaves
	// behind when its leader exits is ended then, and Close leaves nothing
	// running.
	Local *exec.Local
	// MaxPerPrincipal caps the running processes of one principal. If
	// zero, DefaultMaxPerPrincipal.
	MaxPerPrincipal int
	// MaxTotal caps the running processes of all principals. If zero,
	// DefaultMaxTotal.
	MaxTotal int
	// Retention is how long a finished process stays readable. If zero,
	// DefaultRetention.
	Retention time.Duration
	// MaxFinished caps how many finished processes are kept; beyond it the
	// oldest of the principal keeping the most is forgotten first. If zero,
	// DefaultMaxFinished.
	MaxFinished int
	// MaxLifetime is the longest a process may run, whatever it asked
	// for. If zero, DefaultMaxLifetime.
	MaxLifetime time.Duration
	// SpoolDir is where a directory of output files is created (mode
	// 0700; files 0600). If empty, the system's temporary directory.
	SpoolDir string
	// SpoolMax caps the bytes spooled for one process, both streams
	// together; later output is kept only in memory. If zero,
	// DefaultSpoolMax.
	SpoolMax int64
	// SpoolTotal caps the bytes spooled by all processes; past it, the
	// oldest spool files are removed first, finished processes' before
	// running ones'. If zero, DefaultSpoolTotal.
	SpoolTotal int64
	// MemoryMax caps the last bytes of each stream kept in memory. If
	// zero, DefaultMemoryMax.
	MemoryMax int
	// ReapInterval is how often the reaper runs. If zero,
	// DefaultReapInterval.
	ReapInterval time.Duration
	// MaxTerminalsPerPrincipal caps the open terminal sessions of one
	// principal. If zero, DefaultMaxTerminalsPerPrincipal.
	MaxTerminalsPerPrincipal int
	// MaxTerminals caps the open terminal sessions of all principals. If
	// zero, DefaultMaxTerminals.
	MaxTerminals int
	// TerminalIdle is how long a terminal session may go without a call
	// (Exec) before the reaper closes it, ending what runs in it. If zero,
	// DefaultTerminalIdle.
	TerminalIdle time.Duration
	// TerminalBuffer caps the output a terminal session keeps that no
	// Exec has returned yet; past it the oldest is dropped and counted.
	// If zero, DefaultTerminalBuffer.
	TerminalBuffer int
	// Audit, if set, records process.start and process.exit events, and
	// session.open, session.command and session.close for terminals.
	Audit audit.Recorder
	// Logger receives operator logs. If nil, logs are discarded.
	Logger *slog.Logger
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
	// Instance names this gateway in the IDs it makes ("p…@gw-a"), so
	// that another gateway asked about one (replicas behind a load
	// balancer) answers with an [ElsewhereError] naming the owner rather
	// than "not found". Letters, digits, '.', '_' and '-' are kept, at most
	// 40. If empty, IDs name no instance.
	Instance string
}

func (c *Config) setDefaults() {
	c.Instance = instanceLabel(c.Instance)
	c.MaxPerPrincipal = cmp.Or(max(c.MaxPerPrincipal, 0), DefaultMaxPerPrincipal)
	c.MaxTotal = cmp.Or(max(c.MaxTotal, 0), DefaultMaxTotal)
	c.Retention = cmp.Or(max(c.Retention, 0), DefaultRetention)
	c.MaxFinished = cmp.Or(max(c.MaxFinished, 0), DefaultMaxFinished)
	c.MaxLifetime = cmp.Or(max(c.MaxLifetime, 0), DefaultMaxLifetime)
	c.SpoolMax = cmp.Or(max(c.SpoolMax, 0), DefaultSpoolMax)
	c.SpoolTotal = cmp.Or(max(c.SpoolTotal, 0), DefaultSpoolTotal)
	c.MemoryMax = cmp.Or(max(c.MemoryMax, 0), DefaultMemoryMax)
	c.ReapInterval = cmp.Or(max(c.ReapInterval, 0), DefaultReapInterval)
	c.MaxTerminalsPerPrincipal = cmp.Or(max(c.MaxTerminalsPerPrincipal, 0), DefaultMaxTerminalsPerPrincipal)
	c.MaxTerminals = cmp.Or(max(c.MaxTerminals, 0), DefaultMaxTerminals)
	c.TerminalIdle = cmp.Or(max(c.TerminalIdle, 0), DefaultTerminalIdle)
	c.TerminalBuffer = cmp.Or(max(c.TerminalBuffer, 0), DefaultTerminalBuffer)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Manager runs background processes and terminal sessions, each bound to
// the principal that started it.
//
// A Manager is safe for concurrent use. It owns one reaper goroutine, one
// waiting goroutine per running process and two per terminal session (its
// reader and its waiter); Close stops them all. Locks:
// the Manager's mutex and a Process's or a Terminal's are never held
// together.
type Manager struct {
	cfg      Config
	local    Starter // Config.Local
	spoolDir string
	ctx      context.Context // parent of every process's context
	cancel   context.CancelCauseFunc
	wg       sync.WaitGroup // the reaper and the waiters
	stopReap chan struct{}
	closeOne sync.Once

	// mu protects the following.
	mu         sync.Mutex
	closed     bool
	procs      map[string]*Process
	running    map[string]int // running processes per principal
	runningAll int
	spoolTotal int64
	terms      map[string]*Terminal
	termsOf    map[string]int // open terminals per principal
}

// New builds a Manager from cfg, which is copied, creates its spool
// directory and starts its reaper.
func New(cfg Config) (*Manager, error) {
	if err := exec.CheckSandboxed(cfg.Local); err != nil {
		return nil, fmt.Errorf("sessions: Config.Local: %w", err)
	}
	c := cfg
	c.setDefaults()
	dir, err := os.MkdirTemp(c.SpoolDir, "rigout-spool-")
	if err != nil {
		return nil, fmt.Errorf("sessions: spool directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("sessions: spool directory: %w", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	m := &Manager{
		local: localStarter{c.Local},
		cfg:   c, spoolDir: dir, ctx: ctx, cancel: cancel, stopReap: make(chan struct{}),
		procs: map[string]*Process{}, running: map[string]int{},
		terms: map[string]*Terminal{}, termsOf: map[string]int{},
	}
	m.wg.Go(m.reaper)
	return m, nil
}

// SpoolDir returns the directory holding the output files, which Close
// removes.
func (m *Manager) SpoolDir() string { return m.spoolDir }

// Start starts cmd as a background process of principal and returns at
// once. cmd.Timeout, if set, still ends it; so do Stop, Config.MaxLifetime
// and Close, never the end of ctx, which only bounds starting (and the
// process.start record). cmd.OnOutput, if set, is called as the output
// arrives, after the output is spooled. If cmd.Stdin is nil, the process
// reads what Write sends; otherwise it reads cmd.Stdin and Write returns
// ErrInputClosed.
//
// Start returns a *LimitError at a cap, ErrClosed after Close, and an
// error wrapping exec's when the command cannot start.
func (m *Manager) Start(ctx context.Context, principal string, cmd exec.Command) (*Process, error) {
	return m.StartOn(ctx, principal, m.local, cmd)
}

// StartOn is Start on st: a local or an SSH starter (see [Starter]).
func (m *Manager) StartOn(ctx context.Context, principal string, st Starter, cmd exec.Command) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sessions: not started: %w", err)
	}
	m.mu.Lock()
	if err := m.admitLocked(principal); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	m.wg.Add(1) // for the waiter; Close cannot have begun waiting yet
	m.mu.Unlock()

	p, err := m.start(m.withInstance(newID()), exec.CallFrom(ctx), principal, st, cmd)
	if err != nil {
		m.release(principal)
		m.wg.Done()
		return nil, err
	}
	m.mu.Lock()
	// Close takes the table only after the waiter below is done, so a
	// process started while Close runs is still in it and its files closed.
	p.adopted = true
	m.procs[p.id] = p
	closed := m.closed
	m.mu.Unlock()
	if closed {
		p.cancel(ErrClosed)
	}
	go func() {
		defer m.wg.Done()
		m.waitFor(p)
	}()
	m.recordStart(ctx, p)
	return p, nil
}

// Run runs cmd for principal and waits up to wait for it. If it ends by
// then (or ctx ends first, which stops it), Run returns its Result and a
// nil Process, and the Manager keeps nothing of it: no table entry, no
// spool file, no audit row. Otherwise the still-running command is handed
// off without a restart: it becomes a background process of principal, as
// if Start had started it (process.start is recorded then), and Run
// returns it. Its caps are checked at the hand-off, so quick commands run
// whatever the background count; at a cap, Run stops the command and
// returns its Result with a *LimitError. cmd.OnOutput is called as for
// Start, also after the hand-off. ctx ends the command only while Run
// waits.
func (m *Manager) Run(ctx context.Context, principal string, cmd exec.Command, wait time.Duration) (exec.Result, *Process, error) {
	return m.RunOn(ctx, principal, m.local, cmd, wait)
}

// RunOn is Run on st: a local or an SSH starter (see [Starter]). An SSH
// command handed off keeps running on its channel, never restarted.
func (m *Manager) RunOn(ctx context.Context, principal string, st Starter, cmd exec.Command, wait time.Duration) (exec.Result, *Process, error) {
	return m.RunKeep(ctx, principal, st, cmd, wait, 0)
}

// RunKeep is RunOn that also keeps a command that ended within its wait
// after printing more than keep bytes (both streams; zero keeps none): it
// returns the Result with the finished Process, whose output stays
// readable by offset or line (Read) until Retention or MaxFinished forgets
// it, so that a caller can show a part and let its reader page the rest.
// A kept process takes no running slot and records no process rows: the
// call that ran it is its record. Tell it from a hand-off by Done.
func (m *Manager) RunKeep(ctx context.Context, principal string, st Starter, cmd exec.Command, wait time.Duration, keep int64) (exec.Result, *Process, error) {
	if err := ctx.Err(); err != nil {
		return exec.Result{ExitCode: -1}, nil, fmt.Errorf("sessions: not started: %w", err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return exec.Result{ExitCode: -1}, nil, ErrClosed
	}
	m.wg.Add(1)
	m.mu.Unlock()
	p, err := m.start(m.withInstance(newID()), exec.CallFrom(ctx), principal, st, cmd)
	if err != nil {
		m.wg.Done()
		return exec.Result{ExitCode: -1}, nil, err
	}
	go func() {
		defer m.wg.Done()
		m.waitFor(p)
	}()
	finish := func(err error) (exec.Result, *Process, error) {
		<-p.done
		p.mu.Lock()
		res, werr := p.res, p.err
		printed := p.out[0].total + p.out[1].total
		p.mu.Unlock()
		if keep > 0 && printed > keep && werr == nil && err == nil {
			m.mu.Lock()
			closed := m.closed
			if !closed {
				m.procs[p.id] = p
			}
			m.mu.Unlock()
			if !closed {
				m.trimFinished()
				return res, p, nil
			}
		}
		m.forget(p)
		if werr != nil {
			return res, nil, werr
		}
		return res, nil, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-p.done:
		return finish(nil)
	case <-ctx.Done():
		p.cancel(ErrStopped)
		return finish(nil)
	case <-timer.C:
	}
	m.mu.Lock()
	if p.exitSeen {
		m.mu.Unlock()
		return finish(nil)
	}
	if err := m.admitLocked(principal); err != nil {
		m.mu.Unlock()
		p.cancel(ErrStopped)
		return finish(err)
	}
	p.adopted = true
	m.procs[p.id] = p
	m.mu.Unlock()
	m.recordStart(ctx, p)
	return exec.Result{}, p, nil
}

// admitLocked takes a running slot for principal, or says why not.
func (m *Manager) admitLocked(principal string) error {
	switch {
	case m.closed:
		return ErrClosed
	case m.running[principal] >= m.cfg.MaxPerPrincipal:
		return &LimitError{Principal: principal, Limit: m.cfg.MaxPerPrincipal, PerPrincipal: true}
	case m.runningAll >= m.cfg.MaxTotal:
		return &LimitError{Principal: principal, Limit: m.cfg.MaxTotal}
	}
	m.running[principal]++
	m.runningAll++
	return nil
}

// recordStart records p's process.start; its process.exit waits for it.
func (m *Manager) recordStart(ctx context.Context, p *Process) {
	defer close(p.startLogged)
	m.record(ctx, audit.Event{
		Type: audit.TypeProcessStart, CallID: p.id, Principal: p.principal, Route: p.route,
		Status: audit.StatusStarted, Args: redact.String(p.command),
	})
	m.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "process started",
		slog.String("id", p.id), slog.String("principal", p.principal), slog.Int("pid", p.Info().Pid))
}

// start creates the spool files and the input pipe, and starts cmd for
// the call whose ID is call ("" when none is known).
func (m *Manager) start(id, call, principal string, st Starter, cmd exec.Command) (_ *Process, err error) {
	p := &Process{
		m: m, id: id, principal: principal, command: describe(cmd), started: m.cfg.Now(), route: st.Route(),
		changed: make(chan struct{}), done: make(chan struct{}), startLogged: make(chan struct{}),
	}
	defer func() {
		if err != nil {
			p.closeFiles(true)
		}
	}()
	for i := range p.out {
		// The spool file is created when the stream outgrows its tail in
		// memory (see Process.output): most commands print less and end
		// within their call, and never need one.
		p.out[i] = &stream{max: m.cfg.MemoryMax, pending: true,
			path: fmt.Sprintf("%s/%s.%s", m.spoolDir, id, exec.Stream(i+1))}
	}
	var stdinR *os.File
	if cmd.Stdin == nil {
		if stdinR, p.stdin, err = os.Pipe(); err != nil {
			return nil, fmt.Errorf("sessions: input pipe: %w", err)
		}
		cmd.Stdin = stdinR
	}
	user := cmd.OnOutput
	cmd.OnOutput = func(s exec.Stream, b []byte) {
		p.output(s, b)
		if user != nil {
			user(s, b)
		}
	}
	// The process outlives the request, not the manager; it keeps the
	// call's ID (exec.WithCall), which marks its processes.
	ctx, cancel := context.WithCancelCause(exec.WithCall(m.ctx, call))
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, m.cfg.MaxLifetime, ErrCeiling)
	p.ctx = ctx
	p.cancel = func(cause error) { cancel(cause); cancelTimeout() }
	ep, err := st.Start(ctx, cmd)
	if stdinR != nil {
		if _, local := st.(localStarter); local || err != nil {
			_ = stdinR.Close() // the child has its own copy
		} else {
			p.stdinR = stdinR // read by the SSH session until the exit
		}
	}
	if err != nil {
		p.cancel(err)
		if p.stdin != nil {
			_ = p.stdin.Close()
		}
		return nil, fmt.Errorf("sessions: %w", err)
	}
	p.ep, p.pid = ep, ep.Pid()
	return p, nil
}

// waitFor waits for p to exit and records how it ended.
func (m *Manager) waitFor(p *Process) {
	res, err := p.ep.Wait()
	cause := context.Cause(p.ctx)
	p.cancel(nil)
	var stopped error
	if cause != nil && res.Canceled {
		stopped = cause
	}
	m.mu.Lock()
	p.exitSeen = true
	adopted := p.adopted
	m.mu.Unlock()
	// The exit is recorded before anyone can see the process finished,
	// and after its start.
	exit := res.ExitCode
	ev := audit.Event{
		Type: audit.TypeProcessExit, CallID: p.id, Principal: p.principal, Route: p.route,
		ExitCode: &exit, Signal: res.Signal, Duration: res.Duration,
		StdoutBytes: res.Stdout.Total, StderrBytes: res.Stderr.Total, Truncated: res.Truncated(),
		Status: audit.StatusOK,
	}
	switch {
	case err != nil:
		ev.Status, ev.Error = audit.StatusError, err.Error()
	case res.TimedOut:
		ev.Status = audit.StatusTimeout
	case res.Canceled:
		ev.Status = audit.StatusCanceled
		if stopped != nil {
			ev.Error = stopped.Error()
		}
	case res.ExitCode != 0:
		ev.Status = audit.StatusError
	}
	if adopted {
		<-p.startLogged
		m.record(context.Background(), ev)
		m.release(p.principal)
	}
	now := m.cfg.Now()
	p.mu.Lock()
	p.finished, p.res, p.err, p.ended = true, res, err, now
	p.cause = stopped
	if p.stdin != nil {
		_ = p.stdin.Close()
		p.stdin = nil
	}
	if p.stdinR != nil {
		_ = p.stdinR.Close()
		p.stdinR = nil
	}
	p.notifyLocked()
	p.mu.Unlock()
	close(p.done)
	if adopted {
		m.trimFinished()
	}
}

// release gives back a running slot.
func (m *Manager) release(principal string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runningAll--
	if m.running[principal]--; m.running[principal] <= 0 {
		delete(m.running, principal)
	}
}

func (m *Manager) record(ctx context.Context, ev audit.Event) {
	if m.cfg.Audit == nil {
		return
	}
	if err := m.cfg.Audit.Record(context.WithoutCancel(ctx), ev); err != nil {
		m.cfg.Logger.LogAttrs(ctx, slog.LevelError, "audit record failed",
			slog.String("type", string(ev.Type)), slog.String("id", ev.CallID), slog.String("error", err.Error()))
	}
}

// Get returns principal's process id, or ErrNotFound.
func (m *Manager) Get(principal, id string) (*Process, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[id]
	if !ok || p.principal != principal {
		return nil, m.notFound(id)
	}
	return p, nil
}

// List returns principal's processes, oldest first.
func (m *Manager) List(principal string) []Info {
	m.mu.Lock()
	var ps []*Process
	for _, p := range m.procs {
		if p.principal == principal {
			ps = append(ps, p)
		}
	}
	m.mu.Unlock()
	infos := make([]Info, 0, len(ps))
	for _, p := range ps {
		infos = append(infos, p.Info())
	}
	slices.SortFunc(infos, func(a, b Info) int {
		return cmp.Or(a.Started.Compare(b.Started), strings.Compare(a.ID, b.ID))
	})
	return infos
}

// Forget removes principal's finished process id and its spool files. It
// returns ErrNotFound for an unknown process and ErrFinished's opposite,
// an error, for a running one: stop it first.
func (m *Manager) Forget(principal, id string) error {
	p, err := m.Get(principal, id)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	default:
		return fmt.Errorf("sessions: process %s is still running: stop it first", id)
	}
	m.forget(p)
	return nil
}

// forget removes p from the table and its spool files.
func (m *Manager) forget(p *Process) {
	m.mu.Lock()
	if m.procs[p.id] == p {
		delete(m.procs, p.id)
	}
	m.spoolTotal -= p.spoolBytes
	p.spoolBytes, p.spoolDropped = 0, true
	m.mu.Unlock()
	p.closeFiles(true)
}

// trimFinished forgets finished processes past MaxFinished, each time the
// oldest of the principal that keeps the most, so that one principal's
// many short processes cannot push another's results out.
func (m *Manager) trimFinished() {
	m.mu.Lock()
	var fin []*Process
	for _, p := range m.procs {
		if p.isDone() {
			fin = append(fin, p)
		}
	}
	m.mu.Unlock()
	if len(fin) <= m.cfg.MaxFinished {
		return
	}
	slices.SortFunc(fin, func(a, b *Process) int { return a.endedAt().Compare(b.endedAt()) })
	count := map[string]int{}
	for _, p := range fin {
		count[p.principal]++
	}
	for over := len(fin) - m.cfg.MaxFinished; over > 0; over-- {
		hog := ""
		for who, n := range count {
			if n > count[hog] || (n == count[hog] && who < hog) {
				hog = who
			}
		}
		i := slices.IndexFunc(fin, func(p *Process) bool { return p.principal == hog })
		m.forget(fin[i])
		fin = slices.Delete(fin, i, i+1)
		count[hog]--
	}
}

// Reap runs one pass of the reaper now: it closes terminal sessions idle
// longer than TerminalIdle, stops processes running longer than
// MaxLifetime (by Config.Now) and forgets finished processes older than
// Retention or past MaxFinished. The reaper goroutine calls it every
// ReapInterval.
func (m *Manager) Reap() {
	m.reapTerminals()
	now := m.cfg.Now()
	m.mu.Lock()
	ps := make([]*Process, 0, len(m.procs))
	for _, p := range m.procs {
		ps = append(ps, p)
	}
	m.mu.Unlock()
	for _, p := range ps {
		if !p.isDone() {
			if now.Sub(p.started) > m.cfg.MaxLifetime {
				p.cancel(ErrCeiling)
			}
			continue
		}
		if now.Sub(p.endedAt()) > m.cfg.Retention {
			m.forget(p)
		}
	}
	m.trimFinished()
}

func (m *Manager) reaper() {
	t := time.NewTicker(m.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stopReap:
			return
		case <-t.C:
			m.Reap()
		}
	}
}

// Close closes every terminal session (a hang-up, then SIGKILL to what is
// left after the grace), ends every process the Manager started (SIGTERM
// to each process tree, then SIGKILL after the Local's grace), waits for
// them and for the reaper, and removes the spool directory it created with every output
// file in it, finished processes' included. It removes nothing else.
// Later calls return nil; after Close, Start returns ErrClosed and every
// process is forgotten.
func (m *Manager) Close() error {
	var err error
	m.closeOne.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		m.closeTerminals()
		m.cancel(ErrClosed)
		close(m.stopReap)
		m.wg.Wait()
		m.mu.Lock()
		ps := m.procs
		m.procs = map[string]*Process{}
		m.mu.Unlock()
		for _, p := range ps {
			p.closeFiles(false)
		}
		err = os.RemoveAll(m.spoolDir)
	})
	return err
}

// reserveSpool grants up to n spool bytes to p, making room by dropping
// the oldest other spools if the total cap needs it.
func (m *Manager) reserveSpool(p *Process, n int64) int64 {
	m.mu.Lock()
	if p.spoolDropped {
		m.mu.Unlock()
		return 0
	}
	n = min(n, m.cfg.SpoolMax-p.spoolBytes)
	var victims []*Process
	if m.spoolTotal+n > m.cfg.SpoolTotal {
		var cands []*Process
		for _, q := range m.procs {
			if q != p && q.spoolBytes > 0 && !q.spoolDropped {
				cands = append(cands, q)
			}
		}
		slices.SortFunc(cands, func(a, b *Process) int {
			// Finished processes first, then the oldest.
			ad, bd := a.isDone(), b.isDone()
			if ad != bd {
				if ad {
					return -1
				}
				return 1
			}
			return a.started.Compare(b.started)
		})
		for _, q := range cands {
			if m.spoolTotal+n <= m.cfg.SpoolTotal {
				break
			}
			m.spoolTotal -= q.spoolBytes
			q.spoolBytes, q.spoolDropped = 0, true
			victims = append(victims, q)
		}
	}
	n = max(min(n, m.cfg.SpoolTotal-m.spoolTotal), 0)
	m.spoolTotal += n
	p.spoolBytes += n
	m.mu.Unlock()
	for _, q := range victims {
		q.dropSpool()
	}
	return n
}

// newID returns a fresh process ID.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "p" + hex.EncodeToString(b[:])
}

// describe renders cmd for listings.
func describe(cmd exec.Command) string {
	if cmd.Shell != "" {
		return cmd.Shell
	}
	return strings.Join(cmd.Argv, " ")
}
