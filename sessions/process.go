package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/rigout/rigout/exec"
)

// DefaultReadMax is how many bytes of each stream a Read returns when
// ReadRequest.Max is zero.
const DefaultReadMax = 16 << 10

// DefaultWriteTimeout bounds a Write whose context has no deadline, when
// the process does not read its input.
const DefaultWriteTimeout = 5 * time.Second

// Process is one background process of a Manager. Its methods are safe for
// concurrent use. A Process obtained from [Manager.Get] belongs to the
// principal that asked; the Manager checks that, not the Process.
type Process struct {
	m         *Manager
	id        string
	principal string
	command   string
	started   time.Time
	pid       int
	route     string // where it runs: "local" or an SSH route
	ep        Handle
	ctx       context.Context // the process's own: Stop and the ceiling end it
	cancel    context.CancelCauseFunc
	done      chan struct{} // closed when the process has exited

	startLogged chan struct{} // closed once process.start is recorded

	// Guarded by m.mu, not mu: the spool's share of the Manager's total,
	// whether the process is in the table and holds a running slot
	// (adopted), and whether its waiter has seen it exit.
	spoolBytes   int64
	spoolDropped bool
	adopted      bool
	exitSeen     bool

	// wmu serializes Writes, which do not hold mu while they block.
	wmu sync.Mutex

	// mu protects the following.
	mu       sync.Mutex
	out      [2]*stream // stdout, stderr
	stdin    *os.File   // write end of the input pipe; nil once closed
	stdinR   *os.File   // its read end, for an SSH session; nil otherwise
	changed  chan struct{}
	finished bool
	res      exec.Result
	err      error
	cause    error // why it was stopped, if it was
	ended    time.Time
}

// stream is one output stream: its last bytes in memory and, once it
// outgrows them, all of it in a spool file from its start.
type stream struct {
	total   int64    // bytes the process wrote
	spooled int64    // bytes in the file: [0, spooled)
	file    *os.File // nil before it is created, once dropped or closed
	path    string
	tail    []byte // the last bytes: [total-len(tail), total)
	max     int
	// pending: no file yet, and every byte is in tail (total <= max);
	// the file is created, with tail written to it first, by the output
	// that would take total past max.
	pending bool
	created bool // the file was created, so there is one to remove
	// lines counts the line breaks written; marks[k] is the offset of the
	// start of line (k+1)*lineMark+1, so that a read by line scans at
	// most lineMark lines.
	lines int64
	marks []int64
}

// lineMark is how many lines apart a stream marks line starts.
const lineMark = 1024

// countLines counts the line breaks of b, written at offset total, and
// marks every lineMark-th line start.
func (st *stream) countLines(b []byte) {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return
		}
		i += j + 1
		st.lines++
		if st.lines%lineMark == 0 {
			st.marks = append(st.marks, st.total+int64(i))
		}
	}
}

// openSpoolLocked creates st's spool file; st is pending. A file that
// cannot be created leaves the stream in memory only, as a dropped spool
// does, and the operator's log says why.
func (p *Process) openSpoolLocked(st *stream) {
	st.pending = false
	f, err := os.OpenFile(st.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		p.m.cfg.Logger.LogAttrs(context.Background(), slog.LevelError, "spool file",
			slog.String("id", p.id), slog.String("error", err.Error()))
		return
	}
	st.file, st.created = f, true
}

// Info describes a process.
type Info struct {
	ID      string    `json:"id"`
	Command string    `json:"command"`
	Pid     int       `json:"pid"`
	Started time.Time `json:"started"`
	Running bool      `json:"running"`
	// Ended, ExitCode and Signal are set once it has finished; ExitCode
	// is -1 while running or when a signal ended it.
	Ended    time.Time `json:"ended,omitzero"`
	ExitCode int       `json:"exit_code"`
	Signal   string    `json:"signal,omitempty"`
	TimedOut bool      `json:"timed_out,omitempty"`
	// Stopped says why it was ended early: stopped, the ceiling, or the
	// Manager's Close.
	Stopped     string `json:"stopped,omitempty"`
	Error       string `json:"error,omitempty"`
	StdoutBytes int64  `json:"stdout_bytes"`
	StderrBytes int64  `json:"stderr_bytes"`
	// Sandboxed and Unsandboxed are exec.Result's: whether it runs in
	// the kernel sandbox, and if not why.
	Sandboxed   bool   `json:"sandboxed"`
	Unsandboxed string `json:"unsandboxed,omitempty"`
}

// ReadRequest says what Read returns.
type ReadRequest struct {
	// Stream is exec.Stdout, exec.Stderr, or zero for both.
	Stream exec.Stream
	// Offset is the byte offset to read stdout from (or the one Stream
	// names); ErrOffset is stderr's when both are read. Pass the Next of
	// the previous read to read on.
	Offset, ErrOffset int64
	// Tail, if positive, returns the last Tail lines of each stream (within
	// Max bytes) instead of reading from the offsets.
	Tail int
	// Line, if positive, reads from the start of this line (1-based) of
	// each stream asked for, instead of from the offsets, and returns whole
	// lines only (a line longer than Max is returned in Max-byte pieces).
	Line int64
	// Max caps the bytes returned per stream. If zero, DefaultReadMax.
	Max int
	// Wait, if positive, waits up to this long for output beyond the
	// offsets (with Tail: any new output) or for the exit, whichever comes
	// first, when there is none yet.
	Wait time.Duration
}

// Chunk is what Read returned of one stream.
type Chunk struct {
	// Offset is where Data starts in the stream; Next is where the next
	// read should start.
	Offset, Next int64
	Data         []byte
	// Skipped counts bytes between the requested offset and Offset that
	// are no longer kept (the spool was capped or dropped).
	Skipped int64
	// Total is how many bytes the stream has carried so far.
	Total int64
	// Line is the number (1-based) of the line Data starts, and NextLine
	// the line a read by line should ask for next; both are zero when the
	// read was not by line. Lines counts the stream's line breaks so far.
	Line, NextLine, Lines int64
}

// ReadResult is what Read returns.
type ReadResult struct {
	// Stdout and Stderr are nil when not asked for.
	Stdout, Stderr *Chunk
	Info           Info
}

// ID returns the process's ID.
func (p *Process) ID() string { return p.id }

// Done returns a channel closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

func (p *Process) isDone() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *Process) endedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// Wait waits until the process exits or ctx ends, and returns its Result.
// It returns ctx's error if ctx ends first; the process runs on.
func (p *Process) Wait(ctx context.Context) (exec.Result, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return exec.Result{}, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.res, p.err
}

// Info returns the process's state.
func (p *Process) Info() Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.infoLocked()
}

func (p *Process) infoLocked() Info {
	if p.pid == 0 {
		p.pid = p.ep.Pid() // an SSH process's remote pid arrives late
	}
	in := Info{
		ID: p.id, Command: p.command, Pid: p.pid, Started: p.started, Running: !p.finished,
		ExitCode: -1, StdoutBytes: p.out[0].total, StderrBytes: p.out[1].total,
	}
	in.Sandboxed, in.Unsandboxed = p.ep.Sandbox()
	if p.finished {
		in.Ended, in.ExitCode, in.Signal, in.TimedOut = p.ended, p.res.ExitCode, p.res.Signal, p.res.TimedOut
		if p.err != nil {
			in.Error = p.err.Error()
		}
		switch {
		case errors.Is(p.cause, ErrStopped):
			in.Stopped = "stopped"
		case errors.Is(p.cause, ErrCeiling):
			in.Stopped = "ceiling"
		case errors.Is(p.cause, ErrClosed):
			in.Stopped = "gateway closed"
		}
	}
	return in
}

// output is the command's OnOutput: spool b, keep its tail, wake readers.
func (p *Process) output(s exec.Stream, b []byte) {
	p.mu.Lock()
	st := p.out[s-1]
	// Only this stream's reader goroutine appends to it, so total and tail
	// stay as they are while mu is released below.
	if st.pending && st.total+int64(len(b)) > int64(st.max) {
		p.openSpoolLocked(st)
	}
	// A file just created lacks the bytes so far, all still in tail.
	var backlog []byte
	if st.file != nil && st.spooled == 0 && st.total > 0 && st.total == int64(len(st.tail)) {
		backlog = st.tail
	}
	spooling := st.file != nil && (st.spooled == st.total || backlog != nil)
	p.mu.Unlock()
	var grant int64
	if spooling {
		grant = p.m.reserveSpool(p, int64(len(backlog)+len(b)))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if grant > 0 && st.file != nil && st.spooled+int64(len(backlog)) == st.total {
		n, err := st.file.WriteAt(append(backlog[:len(backlog):len(backlog)], b...)[:grant], st.spooled)
		st.spooled += int64(n)
		if err != nil {
			p.m.cfg.Logger.LogAttrs(context.Background(), slog.LevelError, "spool write failed",
				slog.String("id", p.id), slog.String("error", err.Error()))
		}
	}
	st.countLines(b)
	st.total += int64(len(b))
	st.tail = append(st.tail, b...)
	if over := len(st.tail) - st.max; over > 0 {
		// Trim in bulk, to copy rarely.
		if len(st.tail) > 2*st.max || len(b) >= st.max {
			// In place: the buffer is reused, not reallocated.
			st.tail = st.tail[:copy(st.tail, st.tail[over:])]
		}
	}
	p.notifyLocked()
}

// notifyLocked wakes every waiting Read.
func (p *Process) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Read returns output from the offsets (or the tail), waiting as
// ReadRequest.Wait says. It returns ctx's error if ctx ends while it waits.
func (p *Process) Read(ctx context.Context, req ReadRequest) (ReadResult, error) {
	if req.Max <= 0 {
		req.Max = DefaultReadMax
	}
	want := func(s exec.Stream) bool { return req.Stream == 0 || req.Stream == s }
	off := [2]int64{req.Offset, req.ErrOffset}
	if req.Stream == exec.Stderr {
		off[1] = req.Offset
	}
	p.mu.Lock()
	if req.Tail > 0 {
		off = [2]int64{p.out[0].total, p.out[1].total}
	}
	if req.Wait > 0 {
		timer := time.NewTimer(req.Wait)
		defer timer.Stop()
		for !p.finished && !(want(exec.Stdout) && p.out[0].total > off[0]) && !(want(exec.Stderr) && p.out[1].total > off[1]) {
			ch := p.changed
			p.mu.Unlock()
			select {
			case <-ch:
			case <-timer.C:
				p.mu.Lock()
				goto read
			case <-ctx.Done():
				return ReadResult{}, ctx.Err()
			}
			p.mu.Lock()
		}
	}
read:
	defer p.mu.Unlock()
	var rr ReadResult
	for i, s := range []exec.Stream{exec.Stdout, exec.Stderr} {
		if !want(s) {
			continue
		}
		st := p.out[i]
		var c Chunk
		if req.Tail > 0 {
			from := max(st.total-int64(req.Max), 0)
			if st.file == nil || st.spooled < st.total {
				// The end is in memory only.
				from = max(from, st.total-int64(len(st.tail)))
			}
			c = st.read(from, req.Max)
			c.Skipped = 0
			c.Data = lastLines(c.Data, req.Tail)
			c.Offset = c.Next - int64(len(c.Data))
		} else if req.Line > 0 {
			c = st.readLines(req.Line, req.Max)
		} else {
			c = st.read(off[i], req.Max)
		}
		c.Lines = st.lines
		if s == exec.Stdout {
			rr.Stdout = &c
		} else {
			rr.Stderr = &c
		}
	}
	rr.Info = p.infoLocked()
	return rr, nil
}

// read returns up to n bytes from off: from the spool file while it has
// them, then from the memory tail.
func (st *stream) read(off int64, n int) Chunk {
	off = min(max(off, 0), st.total)
	c := Chunk{Offset: off, Total: st.total}
	memStart := st.total - int64(len(st.tail))
	for len(c.Data) < n && off < st.total {
		rest := n - len(c.Data)
		switch {
		case st.file != nil && off < st.spooled:
			k := int(min(int64(rest), st.spooled-off))
			buf := make([]byte, k)
			k, _ = st.file.ReadAt(buf, off)
			if k == 0 {
				off = st.total // unreadable: stop
				continue
			}
			c.Data = append(c.Data, buf[:k]...)
			off += int64(k)
		case off < memStart:
			if len(c.Data) > 0 {
				// A gap after data: stop here, the next read skips it.
				c.Next = off
				return c
			}
			c.Skipped = memStart - off
			c.Offset, off = memStart, memStart
		default:
			i := int(off - memStart)
			k := min(rest, len(st.tail)-i)
			c.Data = append(c.Data, st.tail[i:i+k]...)
			off += int64(k)
		}
	}
	c.Next = off
	return c
}

// readLines returns whole lines from the start of line (1-based), up to
// n bytes: a line longer than n comes in n-byte pieces, the next read
// going on inside it. A line whose bytes are no longer kept (the spool was
// capped or dropped) is skipped to the first line that is.
func (st *stream) readLines(line int64, n int) Chunk {
	off, at := st.lineStart(line)
	c := st.read(off, n)
	c.Line = at
	if c.Skipped > 0 {
		c.Line = 0 // the lines skipped are not counted
	}
	if i := bytes.LastIndexByte(c.Data, '\n'); i >= 0 && c.Next < st.total {
		c.Data = c.Data[:i+1]
		c.Next = c.Offset + int64(i+1)
	}
	if c.Line > 0 {
		c.NextLine = c.Line + int64(bytes.Count(c.Data, []byte{'\n'}))
		if len(c.Data) > 0 && c.Data[len(c.Data)-1] != '\n' && c.Next < st.total {
			c.NextLine = 0 // inside a long line: read on by offset
		}
	}
	return c
}

// lineStart returns the offset where line (1-based) starts and the line
// found there: line itself, the line after the last when the stream has
// fewer, or 0 when a gap (bytes no longer kept) makes it unknown.
func (st *stream) lineStart(line int64) (int64, int64) {
	line = max(line, 1)
	k := min((line-1)/lineMark, int64(len(st.marks)))
	off, at := int64(0), int64(1)
	if k > 0 {
		off, at = st.marks[k-1], k*lineMark+1
	}
	for at < line && off < st.total {
		c := st.read(off, 64<<10)
		if len(c.Data) == 0 {
			break
		}
		if c.Skipped > 0 {
			return c.Offset, 0
		}
		used := 0
		for at < line {
			j := bytes.IndexByte(c.Data[used:], '\n')
			if j < 0 {
				break
			}
			used += j + 1
			at++
		}
		if at == line {
			return c.Offset + int64(used), at
		}
		off = c.Next
	}
	return off, at
}

// lastLines returns the last n lines of b (a final newline ends the last
// line, it does not start another).
func lastLines(b []byte, n int) []byte {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	i := end
	for ; n > 0; n-- {
		j := bytes.LastIndexByte(b[:i], '\n')
		if j < 0 {
			return b
		}
		i = j
		if n == 1 {
			return b[i+1:]
		}
	}
	return b[i+1:]
}

// Write sends b to the process's standard input. It waits, up to ctx's
// deadline or DefaultWriteTimeout, while the process does not read. It
// returns ErrFinished after the exit and ErrInputClosed once CloseInput
// was called or when the input was given at Start.
func (p *Process) Write(ctx context.Context, b []byte) (int, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.mu.Lock()
	in, finished := p.stdin, p.finished
	p.mu.Unlock()
	if finished {
		return 0, ErrFinished
	}
	if in == nil {
		return 0, ErrInputClosed
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultWriteTimeout)
	}
	// The output keeps flowing while this blocks: mu is not held, and
	// CloseInput or the exit may close the pipe, which ends the write.
	_ = in.SetWriteDeadline(deadline)
	n, err := in.Write(b)
	if err != nil {
		if p.isDone() {
			return n, ErrFinished
		}
		return n, fmt.Errorf("sessions: write to %s: %w", p.id, err)
	}
	return n, nil
}

// CloseInput closes the process's standard input, so it reads end of
// file. It returns ErrFinished after the exit and ErrInputClosed if it is
// closed already.
func (p *Process) CloseInput() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return ErrFinished
	}
	if p.stdin == nil {
		return ErrInputClosed
	}
	err := p.stdin.Close()
	p.stdin = nil
	return err
}

// Signal sends sig to the process's whole tree. It returns ErrFinished
// after the exit.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.isDone() {
		return ErrFinished
	}
	if err := p.ep.Signal(sig); err != nil {
		if errors.Is(err, exec.ErrProcessDone) {
			return ErrFinished
		}
		return err
	}
	return nil
}

// Stop ends the process's tree: SIGTERM, then SIGKILL after the Local's
// grace. It returns at once (Wait waits for the end) and ErrFinished
// after the exit.
func (p *Process) Stop() error {
	if p.isDone() {
		return ErrFinished
	}
	p.cancel(ErrStopped)
	return nil
}

// dropSpool removes the spool files, for the Manager's total cap. Reads
// then come from memory only.
func (p *Process) dropSpool() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.out {
		if st == nil {
			continue
		}
		st.pending = false
		if st.file != nil {
			_ = st.file.Close()
			_ = os.Remove(st.path)
			st.file, st.spooled = nil, 0
		}
	}
}

// closeFiles closes the spool files and, if remove, deletes them.
func (p *Process) closeFiles(remove bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.out {
		if st == nil {
			continue
		}
		if st.file != nil {
			_ = st.file.Close()
			st.file = nil
		}
		st.pending = false
		if remove && st.created {
			_ = os.Remove(st.path)
		}
	}
}
