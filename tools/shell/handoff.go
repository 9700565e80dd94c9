package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/textsafe"
)

// handOffShown caps the output so far that a hand-off shows, per stream:
// its last bytes.
const handOffShown = 8 << 10

// nextWait is the wait_seconds the suggested process read uses.
const nextWait = 20

// starter returns where the process Manager starts target's commands:
// this machine with the Manager's own Local, or a remote host whose
// runner starts background commands (exec.HandleStarter: an SSH host on
// the Router's pooled connection); nil without a Manager.
func (f *Family) starter(target exec.Target) sessions.Starter {
	if f.cfg.Processes == nil {
		return nil
	}
	if target.Local {
		return f.cfg.Processes.Local()
	}
	if s, ok := target.Runner.(exec.HandleStarter); ok {
		return sessions.Remote(target.Route, s)
	}
	return nil
}

// runTask runs a command of a call that is an MCP task: as a background
// process of the caller (listed and read by the process tool like any
// other), waited for to its end, since a task has no client timeout to
// fit in. tasks/cancel ends ctx, which stops the process.
func (f *Family) runTask(ctx context.Context, call *rigout.Call, host, command string, st sessions.Starter, cmd exec.Command) (*mcp.CallToolResult, error) {
	p, err := f.cfg.Processes.StartOn(ctx, call.Principal().Name, st, cmd)
	var le *sessions.LimitError
	switch {
	case errors.As(err, &le):
		call.Outcome.Status, call.Outcome.Error = audit.StatusBusy, err.Error()
		return rigout.ErrorResult("could not run on %s: %v", host, err), nil
	case err != nil:
		call.Outcome.Status = audit.StatusError
		call.Outcome.Error = "could not run: " + err.Error()
		return rigout.ErrorResult("could not run on %s: %v", host, err), nil
	}
	res, err := p.Wait(ctx)
	if err != nil && ctx.Err() != nil {
		_ = p.Stop()
		res, err = p.Wait(context.WithoutCancel(ctx))
		if err == nil {
			res.Canceled = true
		}
	}
	if err != nil {
		call.Outcome.Status = audit.StatusError
		call.Outcome.Error = "could not run: " + err.Error()
		return rigout.ErrorResult("could not run on %s: %v", host, err), nil
	}
	if res.Route == "" {
		res.Route = st.Route()
	}
	r := f.commandResult(call, host, command, res)
	if sc, ok := r.StructuredContent.(commandResult); ok {
		sc.ProcessID = p.ID()
		r.StructuredContent = sc
	}
	return r, nil
}

// runHandOff runs a command through the process Manager: it waits up
// to wait for the command, and returns its result as Run's would if it
// ended by then (or the call was canceled, which stops it); otherwise the
// command keeps running as a background process and the result names it
// and the call that reads it. The gate has already judged the command.
func (f *Family) runHandOff(ctx context.Context, call *rigout.Call, host, command string, st sessions.Starter, cmd exec.Command, wait time.Duration) (*mcp.CallToolResult, error) {
	m, who := f.cfg.Processes, call.Principal().Name
	// Progress is the call's: it stops when the call returns.
	var live atomic.Bool
	live.Store(true)
	defer live.Store(false)
	if user := cmd.OnOutput; user != nil {
		cmd.OnOutput = func(s exec.Stream, b []byte) {
			if live.Load() {
				user(s, b)
			}
		}
	}
	res, p, err := m.RunKeep(ctx, who, st, cmd, wait, int64(f.cfg.ShowMax))
	var le *sessions.LimitError
	switch {
	case errors.As(err, &le):
		// It ran past its wait but may not become one more background
		// process: it was stopped, and says so with what it printed.
		r := f.commandResult(call, host, command, res)
		call.Outcome.Status, call.Outcome.Error = audit.StatusBusy, err.Error()
		r.IsError = true
		addNote(r, fmt.Sprintf("still running after %s, so it was stopped: %v", wait, err))
		return r, nil
	case err != nil:
		call.Outcome.Status = audit.StatusError
		call.Outcome.Error = "could not run: " + err.Error()
		return rigout.ErrorResult("could not run on %s: %v", host, err), nil
	case p != nil && isDone(p):
		return f.keptResult(ctx, call, host, command, res, p), nil
	case p != nil:
		return f.handOffResult(ctx, call, host, command, st.Route(), p, wait)
	}
	return f.commandResult(call, host, command, res), nil
}

// handOffResult is the result of a call whose command now runs in the
// background: the output so far (its last part) and the next call.
func (f *Family) handOffResult(ctx context.Context, call *rigout.Call, host, command, route string, p *sessions.Process, wait time.Duration) (*mcp.CallToolResult, error) {
	in := p.Info()
	rr, err := p.Read(ctx, sessions.ReadRequest{
		Offset:    max(in.StdoutBytes-handOffShown, 0),
		ErrOffset: max(in.StderrBytes-handOffShown, 0),
		Max:       handOffShown,
	})
	if err != nil {
		rr = sessions.ReadResult{Stdout: &sessions.Chunk{}, Stderr: &sessions.Chunk{}, Info: in}
	}
	in = rr.Info
	o := &call.Outcome
	o.Status, o.Route = audit.StatusBackground, route
	o.StdoutBytes, o.StderrBytes = rr.Stdout.Total, rr.Stderr.Total
	if !in.Sandboxed && route == "local" {
		o.Unsandboxed = in.Unsandboxed
	}
	next := nextCall(p.ID(), rr.Stdout.Next, rr.Stderr.Next)

	var sb strings.Builder
	fmt.Fprintf(&sb, "$ %s\n", showCommand(command))
	fmt.Fprintf(&sb, "host: %s (via %s)\n", host, route)
	if !in.Sandboxed && in.Unsandboxed != "" {
		fmt.Fprintf(&sb, "not sandboxed: %s\n", in.Unsandboxed)
	}
	pid := fmt.Sprintf("pid %d", in.Pid)
	if route != "local" {
		pid = "still on its SSH channel, remote " + pid
	}
	fmt.Fprintf(&sb, "still running after %s: now background process %s (%s); its output is kept\n", wait, p.ID(), pid)
	stdout, stderr := shownSoFar(rr.Stdout), shownSoFar(rr.Stderr)
	if stdout == "" && stderr == "" {
		sb.WriteString("(no output yet)\n")
	}
	for _, s := range [][2]string{{"stdout", stdout}, {"stderr", stderr}} {
		if s[1] != "" {
			sb.WriteByte('\n')
			writeStream(&sb, s[0]+" so far", s[1])
		}
	}
	sb.WriteString("\n" + next.Line())

	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(sb.String())},
		StructuredContent: commandResult{
			Host:        host,
			Route:       route,
			ExitCode:    -1,
			DurationMS:  wait.Milliseconds(),
			Stdout:      stdout,
			Stderr:      stderr,
			StdoutBytes: rr.Stdout.Total,
			StderrBytes: rr.Stderr.Total,
			Sandboxed:   in.Sandboxed,
			Unsandboxed: in.Unsandboxed,
			ProcessID:   p.ID(),
			Running:     true,
			Next:        &next,
		},
	}, nil
}

// shownSoFar renders a hand-off's output of one stream, saying what was
// left out before it.
func shownSoFar(c *sessions.Chunk) string {
	if len(c.Data) == 0 {
		return ""
	}
	t := textsafe.Text(c.Data)
	if c.Offset > 0 {
		t = fmt.Sprintf("[… first %d bytes not shown: read them with offset 0 …]\n%s", c.Offset, t)
	}
	return t
}

// nextCall is the process call that reads on after a hand-off.
func nextCall(id string, stdoutNext, stderrNext int64) rigout.NextCall {
	return rigout.NextCall{Tool: "process", Why: "reads on, waiting for output or the exit", Arguments: map[string]any{
		"action": "read", "id": id, "offset": stdoutNext, "stderr_offset": stderrNext, "wait_seconds": nextWait,
	}}
}

// addNote appends a note to a result's text and structuredContent.
func addNote(r *mcp.CallToolResult, note string) {
	if len(r.Content) > 0 {
		if t, ok := r.Content[0].(mcp.TextContent); ok {
			t.Text += "note: " + note + "\n"
			r.Content[0] = t
		}
	}
	if sc, ok := r.StructuredContent.(commandResult); ok {
		sc.Note = note
		r.StructuredContent = sc
	}
}

func isDone(p *sessions.Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// keptResult is the result of a command that ended printing more than
// ShowMax: Run's result, with each stream over its share shown as its
// first and last lines, numbered, and the process read that pages the
// rest by line. The process keeps the whole output.
func (f *Family) keptResult(ctx context.Context, call *rigout.Call, host, command string, res exec.Result, p *sessions.Process) *mcp.CallToolResult {
	share := f.cfg.ShowMax / 2 // per stream
	r := f.commandResult(call, host, command, res)
	sc, ok := r.StructuredContent.(commandResult)
	if !ok {
		return r
	}
	var next *rigout.NextCall
	var notes []string
	for _, s := range []struct {
		stream exec.Stream
		name   string
		text   *string
		drop   *int64
	}{{exec.Stdout, "stdout", &sc.Stdout, &sc.StdoutDropped}, {exec.Stderr, "stderr", &sc.Stderr, &sc.StderrDropped}} {
		total := sc.StdoutBytes
		if s.stream == exec.Stderr {
			total = sc.StderrBytes
		}
		if total <= int64(share) {
			continue
		}
		head, err := p.Read(ctx, sessions.ReadRequest{Stream: s.stream, Line: 1, Max: share / 4})
		if err != nil {
			continue
		}
		tail, err := p.Read(ctx, sessions.ReadRequest{Stream: s.stream, Tail: 1 << 30, Max: share - share/4})
		if err != nil {
			continue
		}
		h := chunkOf(head, s.stream)
		t := chunkOf(tail, s.stream)
		tdata := t.Data
		if t.Offset > h.Next {
			if i := bytes.IndexByte(tdata, '\n'); i >= 0 && i+1 < len(tdata) {
				tdata = tdata[i+1:] // a partial first line
			}
		}
		// The tail's first line: Lines counts the breaks, and a last line
		// without one is line Lines+1, so either way:
		tailFrom := t.Lines - int64(bytes.Count(tdata, []byte{'\n'})) + 1
		omitted := t.Total - int64(len(tdata)) - int64(len(h.Data))
		if omitted <= 0 {
			continue
		}
		*s.drop = omitted
		args := map[string]any{"action": "read", "id": p.ID(), "stream": s.name}
		var marker string
		if h.NextLine > 0 {
			// The head ends on a line boundary: page on by line.
			headLines := h.NextLine - 1
			marker = fmt.Sprintf("[… lines %d-%d (%d bytes) not shown: the output is kept; page it by line with process read …]\n", headLines+1, tailFrom-1, omitted)
			notes = append(notes, fmt.Sprintf("%s: %d lines, %d bytes; shown: lines 1-%d and %d-%d", s.name, t.Lines, t.Total, headLines, tailFrom, t.Lines))
			args["line"] = headLines + 1
		} else {
			// The first line alone is longer than the head: page on by offset.
			marker = fmt.Sprintf("\n[… %d bytes not shown: the output is kept; page it with process read …]\n", omitted)
			notes = append(notes, fmt.Sprintf("%s: %d bytes; shown: its first %d and last %d", s.name, t.Total, len(h.Data), len(tdata)))
			args["offset"] = h.Next
		}
		*s.text = textsafe.Text(h.Data) + marker + textsafe.Text(tdata)
		if next == nil {
			next = &rigout.NextCall{Tool: "process", Why: "reads the output not shown", Arguments: args}
		}
	}
	if next == nil {
		// Within ShowMax after all: nothing needs paging.
		_ = f.cfg.Processes.Forget(call.Principal().Name, p.ID())
		return r
	}
	sc.ProcessID, sc.Next = p.ID(), next
	sc.Note = "output over " + fmt.Sprint(f.cfg.ShowMax) + " bytes is kept as process " + p.ID() + " (" + strings.Join(notes, "; ") + ")"
	var sb strings.Builder
	fmt.Fprintf(&sb, "$ %s\n", showCommand(command))
	fmt.Fprintf(&sb, "host: %s (via %s)\n", host, sc.Route)
	if !sc.Sandboxed && sc.Unsandboxed != "" {
		fmt.Fprintf(&sb, "not sandboxed: %s\n", sc.Unsandboxed)
	}
	fmt.Fprintf(&sb, "%s\n", firstLineOf(r))
	writeParts := func(name, text string) {
		if text != "" {
			sb.WriteByte('\n')
			writeStream(&sb, name, text)
		}
	}
	writeParts("stdout", sc.Stdout)
	writeParts("stderr", sc.Stderr)
	sb.WriteString("\nnote: " + sc.Note + "\n" + next.Line())
	r.Content = []mcp.Content{mcp.NewTextContent(sb.String())}
	r.StructuredContent = sc
	return r
}

// chunkOf returns the chunk of s that a read returned.
func chunkOf(rr sessions.ReadResult, s exec.Stream) sessions.Chunk {
	c := rr.Stdout
	if s == exec.Stderr {
		c = rr.Stderr
	}
	if c == nil {
		return sessions.Chunk{}
	}
	return *c
}

// firstLineOf returns the status line of a command result's text: how it
// ended ("exit code: 0 (1.2s)").
func firstLineOf(r *mcp.CallToolResult) string {
	if len(r.Content) == 0 {
		return ""
	}
	t, ok := r.Content[0].(mcp.TextContent)
	if !ok {
		return ""
	}
	for _, l := range strings.Split(t.Text, "\n") {
		if strings.HasPrefix(l, "exit code:") || strings.HasPrefix(l, "timed out") || strings.HasPrefix(l, "killed") || strings.HasPrefix(l, "canceled") {
			return l
		}
	}
	return ""
}
