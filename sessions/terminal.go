package sessions

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	osexec "os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/redact"
)

// Defaults for terminal sessions, used when the Config field is zero.
const (
	DefaultMaxTerminalsPerPrincipal = 8
	DefaultMaxTerminals             = 32
	DefaultTerminalIdle             = time.Hour
	DefaultTerminalBuffer           = 1 << 20
	// DefaultExecTimeout is how long Exec waits when its request sets no
	// Timeout.
	DefaultExecTimeout = 30 * time.Second
	// terminalStart bounds how long a new shell may take to answer.
	terminalStart = 20 * time.Second
)

// Errors of terminal sessions.
var (
	// ErrTerminalEnded means the session's shell has exited or the
	// session was closed.
	ErrTerminalEnded = errors.New("sessions: the terminal session has ended")
	// ErrTerminalBusy means another call was using the session for the
	// whole of this one's timeout.
	ErrTerminalBusy = errors.New("sessions: another call is using this terminal session")
	// ErrNothingRunning means keys were to be typed while no command
	// runs: the shell itself would read them as a command line, which
	// must pass the command gate.
	ErrNothingRunning = errors.New("sessions: no command is running to type keys into: send the text as a command")
	// ErrNoBash means the local machine has no bash, which terminal
	// sessions need.
	ErrNoBash = errors.New("sessions: terminal sessions need bash, which is not on PATH")
)

// NameTakenError means the principal already has a session of that name.
type NameTakenError struct {
	// Name is the name asked for; ID the session that has it.
	Name, ID string
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("sessions: a terminal session named %q is already open (%s): use it, close it first, or pick another name", e.Name, e.ID)
}

// TerminalOptions says what terminal session to open.
type TerminalOptions struct {
	// Name is an optional label, unique among the principal's open
	// sessions.
	Name string
	// Host is the host as the caller named it, for listings and the
	// ledger. If empty, "local".
	Host string
	// SSH, if set, runs the shell on its host (the SSH package's *SSH: over
	// a PTY channel of its pooled connection); if nil, the shell runs on this machine through
	// the Manager's Local (sandbox, private environment, descendant
	// tracking).
	SSH exec.PTYStarter
	// Dir is the shell's first working directory. If empty, the
	// runner's default.
	Dir string
	// Env is merged over the shell's environment.
	Env map[string]string
	// Secrets are environment variables whose values are secret (a
	// credential used by reference), merged over Env. Locally they are in
	// the shell's environment from its start, as exec.Command.Secrets
	// puts them: never typed. Over SSH, where a command line could show
	// them, they are typed into the shell once it is set up, as one
	// export line of escaped bytes, only after a probe has shown that
	// the terminal does not echo; a terminal that echoes is closed with
	// an error. Either way, every byte the session outputs passes through
	// a redact.Scrubber of the values (and their encodings) for the
	// session's whole life, before it is kept, returned or recorded.
	// Each value must be at least redact.MinSecretLen bytes long and hold
	// no NUL.
	Secrets map[string]string
	// Size is the terminal's size. Zero means exec's default.
	Size exec.PTYSize
}

// ExecRequest is one call on a terminal session.
type ExecRequest struct {
	// Command is a shell command line for the session's bash. Empty
	// means send nothing: wait for (or, with Interrupt, stop) the command
	// still running.
	Command string
	// Timeout bounds the call, waiting for a previous command included.
	// When it passes, Exec returns what the command printed so far and
	// the command keeps running. If zero, DefaultExecTimeout.
	Timeout time.Duration
	// Interrupt sends Ctrl-C to the terminal first, which the terminal
	// turns into SIGINT for its foreground process group.
	Interrupt bool
	// Keys are written to the terminal as they are, after Interrupt and
	// before Command, without any check: input for the running program.
	// With no command running, Exec returns ErrNothingRunning and writes
	// nothing, so that keys never reach the shell's own command line.
	Keys []byte
}

// ExecResult is what Exec returns.
type ExecResult struct {
	// Output is what the command (or the one still running) wrote to the
	// terminal since the last Exec returned, raw: escape sequences and
	// carriage returns as the program sent them; the marker removed.
	Output []byte
	// Dropped counts bytes left out of Output, from its start, because
	// they passed Config.TerminalBuffer.
	Dropped int64
	// Sent reports whether Command was written to the shell. It is false
	// when a previous command was still running at the timeout.
	Sent bool
	// Done reports that the command finished: ExitCode and Cwd are its.
	Done bool
	// ExitCode is the shell's $? after the command; Signal names the
	// signal it means when above 128 (130: SIGINT, 137: SIGKILL).
	ExitCode int
	Signal   string
	// Running reports that a command still runs at the timeout (or when
	// ctx ended): Output is what it printed so far.
	Running bool
	// Command is the command Output belongs to.
	Command string
	// Cwd is the shell's working directory after the command.
	Cwd string
	// Duration is how long the command has run.
	Duration time.Duration
	// Previous is the command that was still running when this call
	// came, and that finished while it waited, before Command was sent.
	Previous *ExecResult
	// Ended reports that the shell exited (the session is gone);
	// EndResult is how.
	Ended     bool
	EndResult exec.Result
}

// TerminalInfo describes a terminal session.
type TerminalInfo struct {
	ID       string    `json:"session_id"`
	Name     string    `json:"session_name,omitempty"`
	Host     string    `json:"host"`
	Route    string    `json:"route"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	Cwd      string    `json:"cwd,omitempty"`
	// Running is set while a command runs; Command is it, or the last.
	Running  bool   `json:"running"`
	Command  string `json:"command,omitempty"`
	Commands int    `json:"commands"`
	// Pid is the local shell's process ID (0 remotely).
	Pid         int    `json:"pid,omitempty"`
	Sandboxed   bool   `json:"sandboxed"`
	Unsandboxed string `json:"unsandboxed,omitempty"`
	// Ended says why a session that is over ended.
	Ended string `json:"ended,omitempty"`
}

// Terminal is a terminal session: a long-lived bash on a pseudo-terminal,
// local or over SSH, bound to the principal that opened it. Each command
// runs in the same shell, so the working directory, variables and
// functions persist. Its methods are safe for concurrent use; Exec calls
// take turns.
//
// A command's end and exit code come from a marker that the shell prints
// before each prompt (PROMPT_COMMAND): a record separator (0x1E), the
// command's nonce, its $?, the working directory, and another separator.
// The nonce is fresh random for each command and set by the very line that
// runs it, so output that prints a marker without it cannot end a command
// early, and a command whose syntax is wrong still ends (it runs through
// eval). Echo is off and the prompts are empty, so Output is the
// command's alone.
type Terminal struct {
	m         *Manager
	id        string
	name      string
	principal string
	host      string
	created   time.Time
	pty       *exec.PTY
	turn      chan struct{} // held by the Exec in progress
	done      chan struct{} // closed once the shell has ended and been recorded
	closeOnce sync.Once
	ready     bool        // guarded by m.mu: started, answering, and in the listings
	mask      *redact.Set // the session's secret values, or nil
	secrets   []string    // the same values, for callers' masks

	// mu protects the following.
	mu       sync.Mutex
	out      []byte // output no Exec has returned yet
	dropped  int64  // bytes dropped from out's front since the last take
	scanFrom int    // where in out the marker search resumes
	cmd      *termCmd
	cwd      string
	lastUsed time.Time
	commands int
	ended    bool
	endRes   exec.Result
	endWhy   string
	opened   bool // it answered: its end is recorded
	changed  chan struct{}
}

// termCmd is one command written to the shell.
type termCmd struct {
	nonce    string
	prefix   []byte // 0x1E nonce ':'
	text     string
	started  time.Time
	finished bool
	exit     int
	took     time.Duration
	end      int  // with finished: where its output ends in out
	taken    bool // an Exec has returned its end
	recorded bool
	logged   chan struct{} // closed once its end is in the ledger (or needs no row)
}

// OpenTerminal opens a terminal session for principal: it starts bash on a
// pseudo-terminal, sets it up (no echo, empty prompts, the marker) and
// waits for it to answer. ctx bounds that wait. It returns a *LimitError
// at a cap, a *NameTakenError for a name the principal already uses,
// ErrClosed after Close, ErrNoBash locally without bash, and an error
// that includes what the shell printed when it does not answer.
func (m *Manager) OpenTerminal(ctx context.Context, principal string, o TerminalOptions) (*Terminal, error) {
	if o.Host == "" {
		o.Host = "local"
	}
	mask, values, err := secretMask(o.Secrets)
	if err != nil {
		return nil, err
	}
	id := m.withInstance("t" + newID()[1:])
	m.mu.Lock()
	if err := m.admitTerminalLocked(principal, o.Name); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	// A placeholder holds the name and the slot while the shell starts.
	t := &Terminal{
		m: m, id: id, name: o.Name, principal: principal, host: o.Host, created: m.cfg.Now(),
		turn: make(chan struct{}, 1), done: make(chan struct{}), changed: make(chan struct{}),
		mask: mask, secrets: values,
	}
	t.lastUsed = t.created
	t.turn <- struct{}{} // nobody may Exec before it is ready
	m.terms[id] = t
	m.termsOf[principal]++
	m.wg.Add(1) // the reader and waiter; Close cannot have begun waiting yet
	m.mu.Unlock()

	env := map[string]string{"TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat", "SYSTEMD_PAGER": "cat"}
	for k, v := range o.Env {
		env[k] = v
	}
	cmd := exec.Command{Argv: []string{"bash", "--noprofile", "--norc", "--noediting", "-i"}, Dir: o.Dir, Env: env}
	if o.SSH == nil {
		cmd.Secrets = o.Secrets // in the environment from the start
	}
	var p *exec.PTY
	if o.SSH != nil {
		p, err = o.SSH.StartPTY(m.ctx, cmd, o.Size)
	} else {
		if cmd.Argv[0], err = osexec.LookPath("bash"); err != nil {
			err = ErrNoBash
		} else {
			p, err = m.cfg.Local.StartPTY(m.ctx, cmd, o.Size)
		}
	}
	if err != nil {
		m.dropTerminal(t)
		m.wg.Done()
		return nil, fmt.Errorf("sessions: terminal: %w", err)
	}
	t.pty = p
	t.cmd = t.newCmd("")
	go func() {
		defer m.wg.Done()
		t.run()
	}()
	// The setup line is echoed (echo is still on), and bash prints its
	// default prompt first: whatever comes before the marker is dropped.
	if _, err := p.Write([]byte(setupLine(t.cmd.nonce))); err != nil {
		t.abort()
		return nil, fmt.Errorf("sessions: terminal: set up the shell: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, terminalStart)
	defer cancel()
	r := t.wait(wctx, true)
	if !r.Done {
		t.abort()
		what := strings.TrimSpace(string(r.Output))
		if len(what) > 500 {
			what = what[len(what)-500:]
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("sessions: terminal: not started: %w", err)
		}
		return nil, fmt.Errorf("sessions: terminal: the shell did not answer within %v (it needs bash); it printed: %q", terminalStart, what)
	}
	if o.SSH != nil && len(o.Secrets) > 0 {
		if err := t.typeSecrets(wctx, o.Secrets); err != nil {
			t.abort()
			return nil, fmt.Errorf("sessions: terminal: %w", err)
		}
	}
	t.mu.Lock()
	t.opened = true
	t.mu.Unlock()
	m.mu.Lock()
	t.ready = true
	m.mu.Unlock()
	<-t.turn
	m.record(ctx, audit.Event{
		Type: audit.TypeSessionOpen, CallID: t.id, Principal: principal, Host: o.Host, Route: p.Route(),
		Status: audit.StatusOK, Args: redact.String(o.Name),
	})
	m.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "terminal session opened",
		slog.String("id", t.id), slog.String("principal", principal), slog.String("route", p.Route()))
	return t, nil
}

// admitTerminalLocked checks the caps and the name.
func (m *Manager) admitTerminalLocked(principal, name string) error {
	if m.closed {
		return ErrClosed
	}
	if name != "" {
		for _, t := range m.terms {
			if t.principal == principal && t.name == name {
				return &NameTakenError{Name: name, ID: t.id}
			}
		}
	}
	switch {
	case m.termsOf[principal] >= m.cfg.MaxTerminalsPerPrincipal:
		return &LimitError{Principal: principal, Limit: m.cfg.MaxTerminalsPerPrincipal, PerPrincipal: true, Terminals: true}
	case len(m.terms) >= m.cfg.MaxTerminals:
		return &LimitError{Principal: principal, Limit: m.cfg.MaxTerminals, Terminals: true}
	}
	return nil
}

// dropTerminal removes t from the table and gives back its slot.
func (m *Manager) dropTerminal(t *Terminal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.terms[t.id] != t {
		return
	}
	delete(m.terms, t.id)
	if m.termsOf[t.principal]--; m.termsOf[t.principal] <= 0 {
		delete(m.termsOf, t.principal)
	}
}

// Terminal returns principal's open terminal session id, or ErrNotFound
// (for another principal's too).
func (m *Manager) Terminal(principal, id string) (*Terminal, error) {
	m.mu.Lock()
	t, ok := m.terms[id]
	m.mu.Unlock()
	if !ok || t.principal != principal || !t.ready {
		return nil, m.notFound(id)
	}
	return t, nil
}

// Terminals returns principal's open terminal sessions, oldest first.
func (m *Manager) Terminals(principal string) []TerminalInfo {
	m.mu.Lock()
	var ts []*Terminal
	for _, t := range m.terms {
		if t.principal == principal && t.ready {
			ts = append(ts, t)
		}
	}
	m.mu.Unlock()
	infos := make([]TerminalInfo, 0, len(ts))
	for _, t := range ts {
		infos = append(infos, t.Info())
	}
	slices.SortFunc(infos, func(a, b TerminalInfo) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return infos
}

// CloseTerminal closes principal's session id (see [Terminal.Close]) and
// returns how it stood. It returns ErrNotFound for an unknown session or
// another principal's.
func (m *Manager) CloseTerminal(principal, id string) (TerminalInfo, error) {
	t, err := m.Terminal(principal, id)
	if err != nil {
		return TerminalInfo{}, err
	}
	t.Close()
	return t.Info(), nil
}

// reapTerminals closes the sessions idle longer than TerminalIdle. A
// session with a call in progress is not idle.
func (m *Manager) reapTerminals() {
	now := m.cfg.Now()
	m.mu.Lock()
	var ts []*Terminal
	for _, t := range m.terms {
		if t.ready {
			ts = append(ts, t)
		}
	}
	m.mu.Unlock()
	for _, t := range ts {
		t.mu.Lock()
		last := t.lastUsed
		t.mu.Unlock()
		if now.Sub(last) <= m.cfg.TerminalIdle {
			continue
		}
		select {
		case t.turn <- struct{}{}: // no call in progress, and none can start
		default:
			continue
		}
		t.mu.Lock()
		last = t.lastUsed // a call may have ended since
		t.mu.Unlock()
		if now.Sub(last) <= m.cfg.TerminalIdle {
			<-t.turn
			continue
		}
		t.end(fmt.Sprintf("idle for more than %v", m.cfg.TerminalIdle))
		<-t.turn
	}
}

// closeTerminals closes every session, at once, and waits for them.
func (m *Manager) closeTerminals() {
	m.mu.Lock()
	ts := make([]*Terminal, 0, len(m.terms))
	for _, t := range m.terms {
		if t.ready {
			ts = append(ts, t)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(func() { t.end("the gateway closed") })
	}
	wg.Wait()
}

// ID returns the session's ID.
func (t *Terminal) ID() string { return t.id }

// Secrets returns the values of TerminalOptions.Secrets, for a caller to
// mask in what it returns (its output is masked of them already).
func (t *Terminal) Secrets() []string { return slices.Clone(t.secrets) }

// Done returns a channel closed once the session has ended.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// Info returns the session's state.
func (t *Terminal) Info() TerminalInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := TerminalInfo{
		ID: t.id, Name: t.name, Host: t.host, Route: t.pty.Route(), Created: t.created, LastUsed: t.lastUsed,
		Cwd: t.cwd, Commands: t.commands, Pid: t.pty.Pid(), Ended: t.endWhy,
	}
	in.Sandboxed, in.Unsandboxed = t.pty.Sandbox()
	if t.cmd != nil && t.cmd.text != "" {
		in.Command = t.cmd.text
		in.Running = !t.cmd.finished && !t.ended
	}
	return in
}

// Close ends the session: it hangs the terminal up (the shell and its jobs
// get SIGHUP), kills what is left after the grace (locally, the whole
// process tree the shell started), waits for the end and records
// session.close. Later calls do nothing.
func (t *Terminal) Close() { t.end("closed") }

// end closes the session, saying why.
func (t *Terminal) end(why string) {
	t.mu.Lock()
	if t.endWhy == "" {
		t.endWhy = why
	}
	t.mu.Unlock()
	t.closeOnce.Do(func() { _ = t.pty.Close() })
	<-t.done
}

// abort ends a session that never became ready, without a record.
func (t *Terminal) abort() {
	t.mu.Lock()
	t.endWhy = "did not start"
	t.mu.Unlock()
	t.closeOnce.Do(func() { _ = t.pty.Close() })
	<-t.done
}

// drainGrace is how long the reader may go on after the shell has ended,
// for what it wrote last, before the terminal is freed under a process
// that escaped and still holds it.
const drainGrace = 500 * time.Millisecond

// run reads the terminal on a goroutine of its own and waits for the
// shell; once it has ended (and, locally, everything on the terminal with
// it), and the output is drained, it frees the terminal and records the
// end.
func (t *Terminal) run() {
	read := make(chan struct{})
	go func() {
		defer close(read)
		t.read()
	}()
	res, err := t.pty.Wait()
	select {
	case <-read:
	case <-time.After(drainGrace):
	}
	_ = t.pty.Close() // ends the reader if it still reads
	<-read
	t.finish(res, err)
}

// read copies the terminal's output into out and finds the markers, until
// the terminal hangs up or is freed.
func (t *Terminal) read() {
	buf := make([]byte, 8<<10) // a terminal hands over at most 4 KiB a read
	var w io.Writer = termSink{t}
	if t.mask != nil {
		// The values never reach out: what could be the start of one
		// at the end of a read waits for the next.
		sc := t.mask.Scrubber(w)
		defer sc.Close()
		w = sc
	}
	for {
		n, err := t.pty.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// termSink is where the terminal's output goes, masked: out, and the
// markers found in it.
type termSink struct{ t *Terminal }

func (s termSink) Write(b []byte) (int, error) {
	t := s.t
	t.mu.Lock()
	ev, logged := t.appendLocked(b)
	t.notifyLocked()
	t.mu.Unlock()
	if ev != nil {
		t.m.record(context.Background(), *ev)
	}
	if logged != nil {
		close(logged)
	}
	return len(b), nil
}

// finish records how the shell ended and closes done.
func (t *Terminal) finish(res exec.Result, err error) {
	t.m.dropTerminal(t)
	t.mu.Lock()
	t.ended, t.endRes = true, res
	if t.endWhy == "" {
		t.endWhy = "the shell exited"
		switch {
		case err != nil:
			t.endWhy += ": " + err.Error()
		case res.Signal != "":
			t.endWhy += " (" + res.Signal + ")"
		default:
			t.endWhy += fmt.Sprintf(" (status %d)", res.ExitCode)
		}
	}
	why := t.endWhy
	var cmdEv *audit.Event
	if c := t.cmd; c != nil && !c.finished && !c.recorded && c.text != "" {
		c.recorded = true
		cmdEv = t.commandEvent(c, audit.StatusCanceled, "the session ended: "+why)
	}
	t.notifyLocked()
	opened := t.opened
	t.mu.Unlock()
	if opened {
		if cmdEv != nil {
			t.m.record(context.Background(), *cmdEv)
		}
		exit := res.ExitCode
		t.m.record(context.Background(), audit.Event{
			Type: audit.TypeSessionClose, CallID: t.id, Principal: t.principal, Host: t.host, Route: t.pty.Route(),
			Status: audit.StatusOK, ExitCode: &exit, Signal: res.Signal, Duration: t.m.cfg.Now().Sub(t.created), Error: why,
		})
	}
	close(t.done)
}

// appendLocked adds output, looks for the running command's marker and
// keeps out within its cap. When the command finished, it returns its
// session.command event (if it has one) and the channel to close once
// that is recorded.
func (t *Terminal) appendLocked(b []byte) (ev *audit.Event, logged chan struct{}) {
	t.out = append(t.out, b...)
	if c := t.cmd; c != nil && !c.finished {
		if i := bytes.Index(t.out[t.scanFrom:], c.prefix); i < 0 {
			t.scanFrom = max(len(t.out)-len(c.prefix)+1, 0)
		} else {
			i += t.scanFrom
			rest := t.out[i+len(c.prefix):]
			j := bytes.IndexByte(rest, markerSep)
			if j < 0 {
				t.scanFrom = i // the rest is on its way
			} else {
				status, cwd, _ := strings.Cut(string(rest[:j]), ":")
				c.exit, _ = strconv.Atoi(status)
				c.finished, c.end, c.took = true, i, t.m.cfg.Now().Sub(c.started)
				t.cwd = cwd
				t.out = append(t.out[:i], rest[j+1:]...)
				t.scanFrom = 0
				logged = c.logged
				if c.text != "" && !c.recorded {
					c.recorded = true
					st := audit.StatusOK
					if c.exit != 0 {
						st = audit.StatusError
					}
					ev = t.commandEvent(c, st, "")
				}
			}
		}
	}
	if over := len(t.out) - t.m.cfg.TerminalBuffer; over > 0 {
		// Trim in bulk, to copy rarely.
		over = max(over, t.m.cfg.TerminalBuffer/4)
		over = min(over, len(t.out))
		if c := t.cmd; c != nil && c.finished {
			// The finished command's output comes first and goes first.
			c.end = max(c.end-over, 0)
		}
		t.out = append(t.out[:0:0], t.out[over:]...)
		t.dropped += int64(over)
		t.scanFrom = max(t.scanFrom-over, 0)
	}
	return ev, logged
}

// commandEvent is c's session.command row.
func (t *Terminal) commandEvent(c *termCmd, st audit.Status, errText string) *audit.Event {
	exit := c.exit
	ev := &audit.Event{
		Type: audit.TypeSessionCommand, CallID: t.id, Principal: t.principal, Host: t.host, Route: t.pty.Route(),
		Status: st, Args: redact.String(c.text), Duration: c.took, Error: errText,
	}
	if t.mask != nil {
		ev.Args = t.mask.Redact(c.text)
	}
	if c.finished {
		ev.ExitCode = &exit
		ev.Signal = signalOf(exit)
	}
	return ev
}

func (t *Terminal) notifyLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// newCmd returns a command with a fresh nonce.
func (t *Terminal) newCmd(text string) *termCmd {
	var b [12]byte
	_, _ = rand.Read(b[:])
	n := hex.EncodeToString(b[:])
	return &termCmd{nonce: n, prefix: []byte("\x1e" + n + ":"), text: text, started: t.m.cfg.Now(), logged: make(chan struct{})}
}

// markerSep frames the marker: ASCII record separator, which programs do
// not print and the output cleaning removes anyway.
const markerSep = 0x1e

// setupLine is the first line the shell reads: no echo, no CR before LF,
// no job control or history expansion, empty prompts, a plain terminal
// for programs, and the marker printed before each prompt by a function
// that keeps $?. It ends by setting the first nonce.
func setupLine(nonce string) string {
	return `stty -echo -onlcr -ixon 2>/dev/null; set +m +H +o history; unset HISTFILE PROMPT_COMMAND; PS1=; PS2=; PS0=; ` +
		`export TERM=dumb PAGER=cat GIT_PAGER=cat SYSTEMD_PAGER=cat; ` +
		`__rigout_p() { local s=$?; if [ -n "$__rigout_n" ]; then printf '\036%s:%s:%s\036' "$__rigout_n" "$s" "$PWD"; __rigout_n=; fi; return $s; }; ` +
		`PROMPT_COMMAND=__rigout_p; __rigout_n=` + nonce + "\n"
}

// maxLine bounds each line written to the shell, well under the
// terminal's 4095-byte line limit in canonical mode.
const maxLine = 3000

// commandLines renders a command as the lines written to the shell: the
// text as $'…' with every byte outside printable ASCII escaped (so the
// terminal's line editing and signal keys never see a control byte),
// evaluated by the line that sets the nonce. A long command is first
// assembled in a variable, a line at a time.
func commandLines(nonce, text string) string {
	var chunks []string
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
		if b.Len() >= maxLine {
			chunks = append(chunks, b.String())
			b.Reset()
		}
	}
	if b.Len() > 0 || len(chunks) == 0 {
		chunks = append(chunks, b.String())
	}
	run := "__rigout_n=" + nonce + "; eval -- "
	if len(chunks) == 1 {
		return run + "$'" + chunks[0] + "'\n"
	}
	var lines strings.Builder
	for i, c := range chunks {
		op := "+="
		if i == 0 {
			op = "="
		}
		lines.WriteString("__rigout_c" + op + "$'" + c + "'\n")
	}
	lines.WriteString(run + `"$__rigout_c"` + "\n")
	return lines.String()
}

// Exec runs one call on the session: Ctrl-C if asked, the keys, then —
// once the previous command, if one still runs, has finished — the
// command, and waits for its end up to the timeout. A previous command
// still running at the timeout is not interrupted and no command is sent
// (Sent false, Running true, its new output returned): interrupt it, or
// call again to wait on. A command still running at the timeout keeps
// running and the next Exec waits for it first. ctx ending returns as the
// timeout does. Exec returns ErrTerminalEnded once the session has ended,
// and ErrTerminalBusy when another call held the session for the whole
// timeout.
func (t *Terminal) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case t.turn <- struct{}{}:
	case <-t.done:
		return ExecResult{}, ErrTerminalEnded
	case <-ctx.Done():
		return ExecResult{}, ErrTerminalBusy
	}
	defer func() { <-t.turn }()
	t.mu.Lock()
	ended := t.ended
	t.lastUsed = t.m.cfg.Now()
	t.mu.Unlock()
	defer t.touch()
	if ended {
		return ExecResult{}, ErrTerminalEnded
	}
	if req.Interrupt {
		if _, err := t.pty.Write([]byte{0x03}); err != nil {
			return ExecResult{}, t.writeErr(err)
		}
	}
	if len(req.Keys) > 0 {
		if !t.running() {
			return ExecResult{}, ErrNothingRunning
		}
		if _, err := t.pty.Write(req.Keys); err != nil {
			return ExecResult{}, t.writeErr(err)
		}
	}
	var prev *ExecResult
	if t.running() {
		r := t.wait(ctx, true)
		if r.Running || r.Ended || req.Command == "" {
			return r, nil
		}
		prev = &r
	}
	if req.Command == "" {
		r := t.wait(ctx, true) // output since, if any: nothing runs
		return r, nil
	}
	c := t.newCmd(req.Command)
	t.mu.Lock()
	t.cmd = c
	t.commands++
	t.scanFrom = 0
	t.mu.Unlock()
	if _, err := t.pty.Write([]byte(commandLines(c.nonce, req.Command))); err != nil {
		return ExecResult{}, t.writeErr(err)
	}
	r := t.wait(ctx, true)
	r.Sent = true
	r.Previous = prev
	return r, nil
}

func (t *Terminal) touch() {
	t.mu.Lock()
	t.lastUsed = t.m.cfg.Now()
	t.mu.Unlock()
}

func (t *Terminal) writeErr(err error) error {
	select {
	case <-t.done:
		return ErrTerminalEnded
	default:
		return fmt.Errorf("sessions: write to terminal %s: %w", t.id, err)
	}
}

// running reports whether a command sent to the shell has not finished.
func (t *Terminal) running() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cmd != nil && !t.cmd.finished && !t.ended
}

// wait waits until the current command finishes, the shell ends, or ctx
// ends, and takes the output so far. Without a running command it
// returns at once with whatever output arrived. A finished command is
// returned once its session.command row is recorded, so the ledger has it
// before the caller's answer.
func (t *Terminal) wait(ctx context.Context, take bool) ExecResult {
	r, logged := t.waitFor(ctx, take)
	if logged != nil {
		select {
		case <-logged:
		case <-t.done:
		}
	}
	return r
}

func (t *Terminal) waitFor(ctx context.Context, take bool) (_ ExecResult, logged chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		c := t.cmd
		if c == nil || c.finished || t.ended {
			break
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
			t.mu.Lock()
			continue
		case <-ctx.Done():
		}
		t.mu.Lock()
		break
	}
	c := t.cmd
	var r ExecResult
	if c != nil {
		r.Command = c.text
		r.Duration = t.m.cfg.Now().Sub(c.started)
	}
	r.Cwd = t.cwd
	n := len(t.out)
	switch {
	case c != nil && c.finished && !c.taken:
		r.Done, r.ExitCode, r.Signal, r.Duration = true, c.exit, signalOf(c.exit), c.took
		n = c.end
		c.taken = take // what follows belongs to the next command
		logged = c.logged
	case t.ended:
		r.Ended, r.EndResult = true, t.endRes
	case c != nil && c.finished:
		r.Command, r.Duration = "", 0 // idle: what arrived since
	default:
		r.Running = c != nil
		// Keep back what may be the start of the marker.
		if k := bytes.LastIndexByte(t.out, markerSep); k >= 0 && c != nil {
			tail := t.out[k:]
			if bytes.HasPrefix(c.prefix, tail) || bytes.HasPrefix(tail, c.prefix) {
				n = k
			}
		}
	}
	r.Output = bytes.Clone(t.out[:n])
	r.Dropped = t.dropped
	if take {
		t.out = append(t.out[:0], t.out[n:]...)
		t.dropped = 0
		t.scanFrom = max(t.scanFrom-n, 0)
	}
	return r, logged
}

// signalOf names the signal a shell status above 128 stands for.
func signalOf(status int) string {
	if status <= 128 || status > 128+64 {
		return ""
	}
	return unix.SignalName(syscall.Signal(status - 128))
}

// secretMask returns the mask of a session's secrets and their values,
// sorted by name; nil without any.
func secretMask(secrets map[string]string) (*redact.Set, []string, error) {
	if len(secrets) == 0 {
		return nil, nil, nil
	}
	names := make([]string, 0, len(secrets))
	for n := range secrets {
		names = append(names, n)
	}
	slices.Sort(names)
	values := make([]string, 0, len(names))
	for _, n := range names {
		v := secrets[n]
		if strings.IndexByte(v, 0) >= 0 {
			return nil, nil, fmt.Errorf("sessions: terminal: secret %s holds a NUL byte", n)
		}
		values = append(values, v)
	}
	set, err := redact.New(values...)
	if err != nil {
		return nil, nil, fmt.Errorf("sessions: terminal: secrets: %w", err)
	}
	return set, values, nil
}

// typeSecrets sets secrets in a remote shell that is set up (echo off,
// history off, empty prompts): first a probe line, whose echo would bring
// its nonce back; then, only if it did not, export lines that hold every
// byte of each value as a \xHH escape of bash's $'…' (export is a
// built-in: no value in any process's argv), the last of which sets the
// nonce, so that its marker says they ran.
func (t *Terminal) typeSecrets(ctx context.Context, secrets map[string]string) error {
	run := func(c *termCmd, lines string) (ExecResult, error) {
		t.mu.Lock()
		t.cmd = c
		t.scanFrom = 0
		t.mu.Unlock()
		if _, err := t.pty.Write([]byte(lines)); err != nil {
			return ExecResult{}, t.writeErr(err)
		}
		r := t.wait(ctx, true)
		if !r.Done {
			return r, errors.New("the remote shell did not answer while its secrets were set")
		}
		return r, nil
	}
	probe := t.newCmd("")
	r, err := run(probe, "__rigout_n="+probe.nonce+"; :\n")
	if err != nil {
		return err
	}
	if bytes.Contains(r.Output, []byte(probe.nonce)) {
		return errors.New("the remote terminal echoes its input (stty -echo did not work there), so secrets cannot be typed into it unseen: none was sent")
	}
	c := t.newCmd("")
	r, err = run(c, exportLines(c.nonce, secrets))
	if err != nil {
		return err
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("the remote shell could not set the secrets (status %d)", r.ExitCode)
	}
	return nil
}

// exportLines renders secrets as the lines typed into a remote shell:
// export NAME=$'\xHH…', continued by NAME+=$'…' lines under maxLine, and
// a last line that sets nonce and runs : (so that $_ holds no value).
func exportLines(nonce string, secrets map[string]string) string {
	names := make([]string, 0, len(secrets))
	for n := range secrets {
		names = append(names, n)
	}
	slices.Sort(names)
	var lines strings.Builder
	for _, n := range names {
		v := secrets[n]
		op := "export " + n + "="
		for len(v) > 0 || op != "" {
			k := min(len(v), (maxLine-len(op)-3)/4)
			var b strings.Builder
			b.WriteString(op + "$'")
			for i := 0; i < k; i++ {
				fmt.Fprintf(&b, `\x%02x`, v[i])
			}
			b.WriteString("'\n")
			lines.WriteString(b.String())
			v, op = v[k:], ""
			if len(v) > 0 {
				op = n + "+="
			}
		}
	}
	lines.WriteString("__rigout_n=" + nonce + "; :\n")
	return lines.String()
}
