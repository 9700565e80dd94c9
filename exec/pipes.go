package exec

import (
	"context"
	"errors"
	"io"
	"os"
)

// StartPipes starts cmd as [Local.Start] does — the same sandbox (in the
// view of ctx's principal, where the sandbox has views), tracking and
// environment — with its standard input and standard output connected to
// pipes: for a long-lived program that speaks over them, such as a stdio
// MCP server.
//
// The caller writes the program's input to stdin (closing it ends the
// input) and reads its output from stdout, which ends (io.EOF) once the
// process has exited and its output is drained. Output reaches stdout as
// it is written, so the caller must keep reading it, or close stdout to
// discard the rest (the program's writes then fail). cmd.OnOutput still
// sees both streams and Result.Stdout keeps at most cmd.MaxOutput of
// standard output, as with Start; cmd.Stdin must be nil.
//
// ctx bounds the process's life as Start's does. The Process reports its
// exit through [Process.Wait], which StartPipes also calls, to close
// stdout's writing end.
func (l *Local) StartPipes(ctx context.Context, cmd Command) (p *Process, stdin io.WriteCloser, stdout io.ReadCloser, err error) {
	if cmd.Stdin != nil {
		return nil, nil, nil, errors.New("exec: StartPipes: Command.Stdin must be nil: the process reads the returned stdin")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	onOutput := cmd.OnOutput
	cmd.OnOutput = func(s Stream, b []byte) {
		if s == Stdout {
			_, _ = outW.Write(b) // fails once the caller closed stdout
		}
		if onOutput != nil {
			onOutput(s, b)
		}
	}
	cmd.Stdin = inR
	p, err = l.Start(ctx, cmd)
	inR.Close() // the process has its own
	if err != nil {
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, nil, nil, err
	}
	go func() {
		_, _ = p.Wait()
		outW.Close()
	}()
	return p, inW, outR, nil
}
