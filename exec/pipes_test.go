package exec_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec"
)

// TestStartPipes talks to a real long-lived process over its pipes: each
// line written comes back as it is written, stderr reaches OnOutput, and
// closing stdin ends the program and its output.
func TestStartPipes(t *testing.T) {
	l := &exec.Local{UnsafeNoSandbox: true}
	var stderr strings.Builder
	p, in, out, err := l.StartPipes(context.Background(), exec.Command{
		Shell: `while read -r line; do echo "got $line"; echo "err $line" >&2; done; echo bye`,
		OnOutput: func(s exec.Stream, b []byte) {
			if s == exec.Stderr {
				stderr.Write(b)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	for _, msg := range []string{"one", "two"} {
		if _, err := io.WriteString(in, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil || line != "got "+msg+"\n" {
			t.Fatalf("read %q, %v; want the echo of %s while the process runs", line, err, msg)
		}
	}
	in.Close()
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "bye\n" {
		t.Errorf("after stdin closed: %q, %v", rest, err)
	}
	res, err := p.Wait()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Wait: %+v, %v", res, err)
	}
	if got := stderr.String(); got != "err one\nerr two\n" {
		t.Errorf("stderr through OnOutput: %q", got)
	}
	out.Close()
}

// TestStartPipesEndsWithContext: the process lives as long as ctx, and
// stdout ends when it is ended; Stdin is the pipe's, not the Command's.
func TestStartPipesEndsWithContext(t *testing.T) {
	l := &exec.Local{UnsafeNoSandbox: true}
	if _, _, _, err := l.StartPipes(context.Background(), exec.Command{Argv: []string{"cat"}, Stdin: strings.NewReader("x")}); err == nil {
		t.Error("StartPipes accepted a Command with Stdin")
	}
	ctx, cancel := context.WithCancel(context.Background())
	p, in, out, err := l.StartPipes(ctx, exec.Command{Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cancel()
	if b, err := io.ReadAll(out); err != nil || len(b) != 0 {
		t.Errorf("stdout after cancel: %q, %v", b, err)
	}
	res, err := p.Wait()
	if err != nil || !res.Canceled {
		t.Errorf("Wait: %+v, %v; want canceled", res, err)
	}
}
