package sessions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
)

// TestRunKeepPagesByLine: a command that prints more than keep within its
// wait is returned finished and kept, and its output is read by line —
// across the spool file and the memory tail, past the line marks, in
// whole lines — while a quiet one is not kept.
func TestRunKeepPagesByLine(t *testing.T) {
	m := newManager(t, sessions.Config{MemoryMax: 4 << 10})
	ctx := context.Background()
	_, p, err := m.RunKeep(ctx, "alice", m.Local(), exec.Command{Shell: "echo quiet"}, 10*time.Second, 1000)
	if err != nil || p != nil {
		t.Fatalf("a quiet command was kept: %v %v", p, err)
	}
	// 5000 lines "line N", 1-based.
	res, p, err := m.RunKeep(ctx, "alice", m.Local(), exec.Command{Shell: "seq -f 'line %g' 1 5000"}, 10*time.Second, 1000)
	if err != nil || p == nil {
		t.Fatalf("not kept: %v", err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("a kept process is still running")
	}
	if got, err := m.Get("alice", p.ID()); err != nil || got != p {
		t.Fatalf("kept process not listed: %v", err)
	}
	if _, err := m.Get("bob", p.ID()); err == nil {
		t.Fatal("another principal reads the kept process")
	}
	tests := []struct {
		name      string
		line      int64
		max       int
		wantFirst string
		wantLine  int64
		wantLines int
	}{
		{"first", 1, 100, "line 1", 1, 13}, // "line 1\n".."line 9\n" are 63 bytes, then 8 bytes each
		{"past a mark", 2050, 90, "line 2050", 2050, 9},
		{"in the tail", 4999, 1000, "line 4999", 4999, 2},
		{"exactly a mark", 1025, 30, "line 1025", 1025, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr, err := p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Line: tt.line, Max: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			c := rr.Stdout
			text := string(c.Data)
			if !strings.HasSuffix(text, "\n") {
				t.Fatalf("not whole lines: %q", text)
			}
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			if lines[0] != tt.wantFirst || c.Line != tt.wantLine || len(lines) != tt.wantLines {
				t.Fatalf("read from line %d: line %d, %d lines, first %q", tt.line, c.Line, len(lines), lines[0])
			}
			if c.NextLine != c.Line+int64(len(lines)) || c.Lines != 5000 {
				t.Fatalf("next line %d, lines %d", c.NextLine, c.Lines)
			}
			for i, l := range lines {
				if want := fmt.Sprintf("line %d", c.Line+int64(i)); l != want {
					t.Fatalf("line %d is %q", c.Line+int64(i), l)
				}
			}
		})
	}
	rr, err := p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Line: 6000})
	if err != nil || len(rr.Stdout.Data) != 0 {
		t.Fatalf("past the end: %v %q", err, rr.Stdout.Data)
	}
}

// TestReadByLineLongLine: a line longer than Max comes in Max-byte pieces.
func TestReadByLineLongLine(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	_, p, err := m.RunKeep(ctx, "alice", m.Local(), exec.Command{Shell: "printf 'a\\n%05000d\\nb\\n' 0"}, 10*time.Second, 100)
	if err != nil || p == nil {
		t.Fatalf("not kept: %v", err)
	}
	rr, err := p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Line: 2, Max: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if c := rr.Stdout; len(c.Data) != 1000 || c.Line != 2 || c.NextLine != 0 || c.Next != c.Offset+1000 {
		t.Fatalf("long line: %d bytes, line %d, next line %d, next %d", len(c.Data), c.Line, c.NextLine, c.Next)
	}
}
