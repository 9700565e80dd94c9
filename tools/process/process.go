// Package process is the tool family of background processes: the process
// tool lists, reads, writes to and signals the processes a
// sessions.Manager keeps — those execute_command handed off when they ran
// past their wait.
//
// # Overview
//
// The process tool declares a risk per action: list and read are
// read-only; write and signal are exec, since they act on a running
// program. write also needs the terminals capability (auth.Scopes.Terminals):
// what it sends to a program's standard input cannot be judged by the
// command policy, exactly as a terminal session's input cannot. Every
// action sees only the calling principal's processes: another principal's
// ID is "not found". Shown output is cleaned and redacted
// (textsafe.Text); structuredContent carries the offsets for the next
// read.
//
// # Usage
//
//	pf, err := process.New(process.Config{Manager: m})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: pf.Tools()})
package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/internal/family"
)

// DefaultMaxWait is the longest wait_seconds a read may ask for, when
// Config.MaxWait is zero.
const DefaultMaxWait = 30 * time.Second

// stopWait bounds how long a stop waits to report how the process ended.
const stopWait = 10 * time.Second

// Config configures the family.
type Config struct {
	// Manager keeps the processes. Required; the caller closes it.
	Manager *sessions.Manager
	// MaxWait caps a read's wait_seconds. If zero, DefaultMaxWait. The
	// schema advertises 30; a larger request is cut to MaxWait.
	MaxWait time.Duration
	// MaxRead caps the bytes a read returns per stream. If zero,
	// sessions.DefaultReadMax.
	MaxRead int
}

// Family is the process tool family. It is safe for concurrent use.
type Family struct {
	cfg Config
}

// New builds the family from cfg, which is copied.
func New(cfg Config) (*Family, error) {
	c := cfg
	if c.Manager == nil {
		return nil, errors.New("process: Config.Manager is required")
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.MaxRead <= 0 {
		c.MaxRead = sessions.DefaultReadMax
	}
	return &Family{cfg: c}, nil
}

// Tools returns the family's tools.
func (f *Family) Tools() []rigout.Tool { return []rigout.Tool{f.Process()} }

const processDescription = "Background processes (handed off by execute_command). " +
	"list; read output by line, offset or tail, waiting for more; write to stdin; signal (default: stop)."

var processInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "read", "write", "signal"]},
    "id": {"type": "string", "description": "Process ID."},
    "stream": {"type": "string", "enum": ["stdout", "stderr", "both"], "description": "read: default both."},
    "offset": {"type": "integer", "minimum": 0, "description": "read: byte offset."},
    "stderr_offset": {"type": "integer", "minimum": 0, "description": "read, both streams: stderr's offset."},
    "line": {"type": "integer", "minimum": 1, "description": "read: from this line."},
    "tail": {"type": "integer", "minimum": 1, "description": "read: the last N lines instead."},
    "wait_seconds": {"type": "integer", "minimum": 0, "maximum": 30, "description": "read: wait 0-30 s for output or exit."},
    "input": {"type": "string", "description": "write: text for stdin."},
    "keys": {"type": "array", "items": {"type": "string", "enum": ["enter", "tab", "esc", "ctrl-c", "ctrl-d"]}, "description": "write: keys after input (ctrl-c: SIGINT, ctrl-d: close stdin)."},
    "signal": {"type": "string", "enum": ["stop", "TERM", "KILL", "INT", "HUP"], "description": "signal: default stop (TERM, then KILL)."}
  },
  "required": ["action"],
  "additionalProperties": false
}`)

// Process returns the process tool.
func (f *Family) Process() rigout.Tool {
	return rigout.Tool{
		Name:        "process",
		Description: processDescription,
		InputSchema: processInput,
		Action:      "action",
		Actions: map[string]rigout.Risk{
			"list":   rigout.ReadOnly,
			"read":   rigout.ReadOnly,
			"write":  rigout.Exec,
			"signal": rigout.Exec,
		},
		Needs:    []rigout.Need{{Capability: rigout.Terminals, Actions: []string{"write"}}},
		Recorded: []string{"action", "id", "signal"},
		Handler:  f.process,
	}
}

type processArgs struct {
	ID           string   `json:"id"`
	Stream       string   `json:"stream"`
	Offset       int64    `json:"offset"`
	StderrOffset int64    `json:"stderr_offset"`
	Tail         int      `json:"tail"`
	Line         int64    `json:"line"`
	WaitSeconds  int64    `json:"wait_seconds"`
	Input        *string  `json:"input"`
	Keys         []string `json:"keys"`
	Signal       string   `json:"signal"`
}

// ReadResult is the structuredContent of a read.
type ReadResult struct {
	sessions.Info
	Stdout        *Chunk `json:"stdout,omitempty"`
	Stderr        *Chunk `json:"stderr,omitempty"`
	NextOffset    *int64 `json:"next_offset,omitempty"`
	NextErrOffset *int64 `json:"next_stderr_offset,omitempty"`
	// Next is the read that goes on, while the process runs or output
	// remains.
	Next *rigout.NextCall `json:"next,omitempty"`
}

// Chunk is one stream of a read, as shown.
type Chunk struct {
	Text    string `json:"text"`
	Offset  int64  `json:"offset"`
	Next    int64  `json:"next"`
	Total   int64  `json:"total"`
	Skipped int64  `json:"skipped,omitempty"`
	// Line and NextLine are the first line shown and the line to read
	// next, in a read by line; Lines counts the stream's lines so far.
	Line     int64 `json:"line,omitempty"`
	NextLine int64 `json:"next_line,omitempty"`
	Lines    int64 `json:"lines"`
}

func (f *Family) process(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a processArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	who := call.Principal().Name
	if call.Action() == "list" {
		return f.list(who)
	}
	if a.ID == "" {
		return family.Invalid(call, "process %s needs `id`", call.Action())
	}
	p, err := f.cfg.Manager.Get(who, a.ID)
	if err != nil {
		return f.notFound(call, a.ID, err), nil
	}
	call.Outcome.Route = "local"
	switch call.Action() {
	case "read":
		return f.read(ctx, call, p, a)
	case "write":
		return f.write(ctx, call, p, a)
	case "signal":
		return f.signal(ctx, call, p, a)
	}
	// The chain refuses actions the tool did not declare.
	return nil, fmt.Errorf("process: action %q has no handler", call.Action())
}

func (f *Family) notFound(call *rigout.Call, id string, err error) *mcp.CallToolResult {
	if ee, ok := errors.AsType[*sessions.ElsewhereError](err); ok {
		call.Outcome.Status = audit.StatusInvalid
		return rigout.ErrorResult("process %s belongs to gateway %s; this is gateway %s — route by Mcp-Session-Id (sticky sessions) to reach it",
			textsafe.Text([]byte(id)), textsafe.Text([]byte(ee.Owner)), textsafe.Text([]byte(ee.HereName())))
	}
	if errors.Is(err, sessions.ErrNotFound) {
		call.Outcome.Status = audit.StatusInvalid
		return rigout.ErrorResult("no process %s (finished processes are kept for a while; `process` action list shows yours)", textsafe.Text([]byte(id)))
	}
	call.Outcome.Status = audit.StatusError
	return rigout.ErrorResult("process %s: %v", textsafe.Text([]byte(id)), err)
}

func (f *Family) list(who string) (*mcp.CallToolResult, error) {
	infos := f.cfg.Manager.List(who)
	var sb strings.Builder
	if len(infos) == 0 {
		sb.WriteString("no background processes\n")
	}
	for i := range infos {
		infos[i].Command = textsafe.Block(infos[i].Command, 200)
		in := infos[i]
		fmt.Fprintf(&sb, "%s %s, %d+%d bytes: %s\n", in.ID, state(in), in.StdoutBytes, in.StderrBytes, textsafe.FirstLine(in.Command, 80))
	}
	if infos == nil {
		infos = []sessions.Info{}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(sb.String())},
		StructuredContent: map[string]any{"processes": infos},
	}, nil
}

// state renders a process's state in a few words: "running", "exit 0",
// "killed by SIGTERM (stopped)".
func state(in sessions.Info) string {
	var s string
	switch {
	case in.Running:
		return "running"
	case in.Error != "":
		s = "failed: " + in.Error
	case in.TimedOut:
		s = "timed out (" + in.Signal + ")"
	case in.Signal != "":
		s = "killed by " + in.Signal
	default:
		s = fmt.Sprintf("exit %d", in.ExitCode)
	}
	if in.Stopped != "" {
		s += " (" + in.Stopped + ")"
	}
	return s
}

func (f *Family) read(ctx context.Context, call *rigout.Call, p *sessions.Process, a processArgs) (*mcp.CallToolResult, error) {
	req := sessions.ReadRequest{Offset: a.Offset, ErrOffset: a.StderrOffset, Tail: a.Tail, Line: a.Line, Max: f.cfg.MaxRead}
	if a.Line > 0 && a.Tail > 0 {
		return family.Invalid(call, "line and tail do not go together: line reads from a line, tail reads the last lines")
	}
	switch a.Stream {
	case "", "both":
	case "stdout":
		req.Stream = exec.Stdout
	case "stderr":
		req.Stream = exec.Stderr
	default:
		return family.Invalid(call, "stream is stdout, stderr or both")
	}
	if a.WaitSeconds > 0 {
		req.Wait = min(time.Duration(a.WaitSeconds)*time.Second, f.cfg.MaxWait)
	}
	rr, err := p.Read(ctx, req)
	if err != nil {
		call.Outcome.Status = audit.StatusCanceled
		return rigout.ErrorResult("read %s: %v", p.ID(), err), nil
	}
	rr.Info.Command = textsafe.Block(rr.Info.Command, 200)
	out := ReadResult{Info: rr.Info, Stdout: chunk(rr.Stdout), Stderr: chunk(rr.Stderr)}
	var sb strings.Builder
	fmt.Fprintf(&sb, "process %s: %s\n", p.ID(), state(rr.Info))
	for _, s := range []struct {
		name string
		c    *Chunk
	}{{"stdout", out.Stdout}, {"stderr", out.Stderr}} {
		if s.c == nil {
			continue
		}
		if s.c.Line > 0 && len(s.c.Text) > 0 {
			fmt.Fprintf(&sb, "%s lines %d-%d of %d", s.name, s.c.Line, max(s.c.NextLine-1, s.c.Line), s.c.Lines)
		} else {
			fmt.Fprintf(&sb, "%s [%d-%d of %d]", s.name, s.c.Offset, s.c.Next, s.c.Total)
		}
		if s.c.Skipped > 0 {
			fmt.Fprintf(&sb, " (%d bytes before this are no longer kept)", s.c.Skipped)
		}
		if s.c.Text == "" {
			sb.WriteString(": (nothing new)\n")
			continue
		}
		sb.WriteString(":\n" + s.c.Text)
		if !strings.HasSuffix(s.c.Text, "\n") {
			sb.WriteByte('\n')
		}
	}
	if a.Tail == 0 {
		if out.Stdout != nil {
			out.NextOffset = &out.Stdout.Next
		}
		if out.Stderr != nil {
			if out.Stdout == nil {
				out.NextOffset = &out.Stderr.Next
			} else {
				out.NextErrOffset = &out.Stderr.Next
			}
		}
	}
	if rr.Info.Running || more(out) {
		next := nextRead(p.ID(), a.Stream, out.Stdout, out.Stderr, 20)
		if rr.Info.Running {
			next.Why = "waits up to 20s for more output or the exit"
		}
		if a.Line > 0 {
			next = nextLine(p.ID(), a.Stream, out.Stdout, out.Stderr, next)
		}
		out.Next = &next
		sb.WriteString(next.Line())
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(sb.String())}, StructuredContent: out}, nil
}

// more reports whether a stream has bytes beyond what was returned.
func more(r ReadResult) bool {
	return (r.Stdout != nil && r.Stdout.Next < r.Stdout.Total) || (r.Stderr != nil && r.Stderr.Next < r.Stderr.Total)
}

// nextRead renders the process call that reads on from the given chunks
// (nil for a stream not read), as a JSON argument object.
func nextRead(id, stream string, stdout, stderr *Chunk, waitSeconds int) rigout.NextCall {
	args := map[string]any{"action": "read", "id": id, "wait_seconds": waitSeconds}
	switch {
	case stdout != nil && stderr != nil:
		args["offset"], args["stderr_offset"] = stdout.Next, stderr.Next
	case stdout != nil:
		args["offset"], args["stream"] = stdout.Next, "stdout"
	case stderr != nil:
		args["offset"], args["stream"] = stderr.Next, "stderr"
	}
	if stream == "" || stream == "both" {
		delete(args, "stream")
	}
	return rigout.NextCall{Tool: "process", Arguments: args, Why: "reads on"}
}

// nextLine is the read by line that goes on from a read by line: by line
// while a line boundary was reached, else by offset (inside a long line).
func nextLine(id, stream string, stdout, stderr *Chunk, byOffset rigout.NextCall) rigout.NextCall {
	c := stdout
	if c == nil || (stream == "" || stream == "both") && c.Next >= c.Total && stderr != nil {
		c, stream = stderr, "stderr"
	} else if stream == "" || stream == "both" {
		stream = "stdout"
	}
	if c == nil || c.NextLine == 0 {
		return byOffset
	}
	return rigout.NextCall{Tool: "process", Why: "reads the next lines",
		Arguments: map[string]any{"action": "read", "id": id, "stream": stream, "line": c.NextLine}}
}

// chunk renders one stream of a read for the model.
func chunk(c *sessions.Chunk) *Chunk {
	if c == nil {
		return nil
	}
	return &Chunk{Text: textsafe.Text(c.Data), Offset: c.Offset, Next: c.Next, Total: c.Total, Skipped: c.Skipped,
		Line: c.Line, NextLine: c.NextLine, Lines: c.Lines}
}

// keyBytes are the keys that are bytes on standard input.
var keyBytes = map[string]string{"enter": "\n", "tab": "\t", "esc": "\x1b"}

func (f *Family) write(ctx context.Context, call *rigout.Call, p *sessions.Process, a processArgs) (*mcp.CallToolResult, error) {
	if a.Input == nil && len(a.Keys) == 0 {
		return family.Invalid(call, "process write needs `input` or `keys`")
	}
	var did []string
	fail := func(err error) (*mcp.CallToolResult, error) {
		call.Outcome.Status, call.Outcome.Error = audit.StatusError, err.Error()
		msg := fmt.Sprintf("write to %s: %v", p.ID(), err)
		if len(did) > 0 {
			msg += " (done before: " + strings.Join(did, "; ") + ")"
		}
		return rigout.ErrorResult("%s", msg), nil
	}
	if a.Input != nil && *a.Input != "" {
		n, err := p.Write(ctx, []byte(*a.Input))
		if err != nil {
			return fail(err)
		}
		did = append(did, fmt.Sprintf("wrote %d bytes", n))
	}
	for _, k := range a.Keys {
		var err error
		switch k {
		case "ctrl-c":
			err = p.Signal(syscall.SIGINT)
			did = append(did, "ctrl-c: sent SIGINT to the process group")
		case "ctrl-d":
			err = p.CloseInput()
			did = append(did, "ctrl-d: closed stdin")
		default:
			b, ok := keyBytes[k]
			if !ok {
				return family.Invalid(call, "unknown key %q", k)
			}
			_, err = p.Write(ctx, []byte(b))
			did = append(did, "sent "+k)
		}
		if err != nil {
			did = did[:len(did)-1]
			return fail(err)
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(fmt.Sprintf("process %s: %s\n", p.ID(), strings.Join(did, "; ")))},
		StructuredContent: map[string]any{"id": p.ID(), "done": did},
	}, nil
}

// signals are the signals the tool sends by name.
var signals = map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP}

func (f *Family) signal(ctx context.Context, call *rigout.Call, p *sessions.Process, a processArgs) (*mcp.CallToolResult, error) {
	name := a.Signal
	if name == "" {
		name = "stop"
	}
	var err error
	if name == "stop" {
		err = p.Stop()
	} else if sig, ok := signals[name]; ok {
		err = p.Signal(sig)
	} else {
		return family.Invalid(call, "signal is stop, TERM, KILL, INT or HUP")
	}
	if err != nil {
		if errors.Is(err, sessions.ErrFinished) {
			return rigout.TextResult(fmt.Sprintf("process %s had already finished: %s\n", p.ID(), state(p.Info()))), nil
		}
		call.Outcome.Status, call.Outcome.Error = audit.StatusError, err.Error()
		return rigout.ErrorResult("signal %s: %v", p.ID(), err), nil
	}
	// Report how it ended, if it ends soon.
	wait := stopWait
	if name != "stop" {
		wait = time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, _ = p.Wait(wctx)
	in := p.Info()
	text := fmt.Sprintf("process %s: sent %s; now %s\n", p.ID(), name, state(in))
	if name == "stop" {
		text = fmt.Sprintf("process %s: stop (SIGTERM, then SIGKILL after a grace); now %s\n", p.ID(), state(in))
	}
	in.Command = textsafe.Block(in.Command, 200)
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: in}, nil
}
