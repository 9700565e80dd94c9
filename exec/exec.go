package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// DefaultMaxOutput is the per-stream output cap used when none is set: 1 MiB.
const DefaultMaxOutput = 1 << 20

// DefaultGrace is how long a process group has between SIGTERM and SIGKILL.
const DefaultGrace = 2 * time.Second

// Sentinel errors. A command that ran and exited non-zero is not an error.
var (
	// ErrNoCommand means the Command had neither Shell nor Argv.
	ErrNoCommand = errors.New("exec: no command given")
	// ErrBothForms means the Command had both Shell and Argv.
	ErrBothForms = errors.New("exec: shell command and argv are exclusive")
)

// Runner runs one command to completion. Local and remote executors
// implement it; the gateway's tools only see this interface.
//
// Run returns an error only when the command could not run at all (bad
// request, missing program, dial failure, context cancelled before start).
// A command that started and then exited non-zero, was killed by a signal or
// timed out is a Result with a nil error.
type Runner interface {
	Run(ctx context.Context, cmd Command) (Result, error)
}

// Command is one request to run a program.
type Command struct {
	// Shell is a command line run by the target's shell (bash -c, else
	// sh -c; on a Windows SSH host cmd.exe or PowerShell, see
	// HostConfig.Shell). Exactly one of Shell and Argv is set.
	Shell string
	// Argv is an exact argument vector, run without a shell.
	Argv []string
	// Direct, with Shell, is the argument vector Shell is equivalent to when
	// it is one simple command of literal words (validate.Decision.Argv).
	// Local runs it without bash when bash would run it the same way (see
	// Local); other runners ignore it and run Shell.
	Direct []string
	// Dir is the working directory. If empty, the runner's default is used
	// (the gateway's working directory locally, the login directory remotely).
	Dir string
	// Env is merged over the runner's base environment.
	Env map[string]string
	// Secrets are environment variables whose values are secret, merged
	// over Env (a name in both takes the Secrets value). Locally they
	// reach the child's environment as Env does. Over SSH they are never
	// put on the command line (which the server may log and any remote
	// user may see in a process list): the line has the remote shell read
	// one line of "export NAME='value'" from standard input with its
	// built-ins, ahead of Stdin. A value may hold any byte but NUL.
	Secrets map[string]string
	// Scrub, if set, filters each output stream before OnOutput and the
	// capture see it: the process writes to the writer Scrub returns,
	// which is closed (to flush what it holds back) when the stream ends.
	// (*redact.Set).Scrubber fits.
	Scrub func(w io.Writer) io.WriteCloser
	// Stdin is fed to the process. If nil, the process reads an empty input.
	Stdin io.Reader
	// Timeout bounds the run. If zero, only ctx bounds it.
	Timeout time.Duration
	// Sudo runs the command through `sudo -n` (never prompting).
	Sudo bool
	// MaxOutput caps each of stdout and stderr while they stream. If zero,
	// DefaultMaxOutput is used. The result keeps the first and the last
	// parts of a longer stream and counts what it dropped.
	MaxOutput int
	// OnOutput, if set, is called with each chunk as it arrives, before
	// capping, from the goroutine reading that stream. It must not retain p.
	OnOutput func(stream Stream, p []byte)
	// JudgedFor, if set, is the shell the command was written and judged
	// for (a gateway sets the dialect its policy used). An SSH runner
	// whose host turns out to run another shell refuses it with a
	// *ShellMismatchError instead of sending it; locally it is ignored.
	JudgedFor Shell
	// Hold, if set, is called once the command is ready to start and
	// before it runs anything: in a principal's view the command is
	// prepared (its process made, stopped at its exec) while Hold waits,
	// elsewhere Hold is called before the process is made. If Hold returns
	// an error, the command never runs and starting it fails with that
	// error. A gateway uses it to prepare a command while the call's
	// intent row is being written (see rigout.AwaitIntent).
	Hold func() error `json:"-"`
}

// Proceed is what a runner calls once c is ready to start, before it
// runs anything: it calls Hold, if set, and returns its error wrapped
// ("exec: not started: ..."), in which case c must not run.
func (c *Command) Proceed() error {
	if c.Hold == nil {
		return nil
	}
	if err := c.Hold(); err != nil {
		return fmt.Errorf("exec: not started: %w", err)
	}
	return nil
}

// Validate reports whether c is well formed.
func (c *Command) Validate() error {
	switch {
	case c.Shell == "" && len(c.Argv) == 0:
		return ErrNoCommand
	case c.Shell != "" && len(c.Argv) > 0:
		return ErrBothForms
	case len(c.Argv) > 0 && c.Argv[0] == "":
		return fmt.Errorf("exec: argv[0] is empty: %w", ErrNoCommand)
	}
	for k := range c.Env {
		if !validEnvName(k) {
			return &EnvNameError{Name: k}
		}
	}
	for k, v := range c.Secrets {
		if !validEnvName(k) {
			return &EnvNameError{Name: k}
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("exec: secret environment variable %s holds a NUL byte", k)
		}
	}
	return nil
}

// Stream names an output stream.
type Stream int

// The output streams.
const (
	Stdout Stream = iota + 1
	Stderr
)

// String returns "stdout" or "stderr".
func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return fmt.Sprintf("Stream(%d)", int(s))
}

// Result is what a command did.
type Result struct {
	// Route says where the command ran: "local", or the SSH route.
	Route string
	// ExitCode is the process's exit status, or -1 if it was killed by a
	// signal.
	ExitCode int
	// Signal names the signal that ended the process ("SIGKILL"), if any.
	Signal string
	// Duration is the wall time from start to exit.
	Duration time.Duration
	// TimedOut is set when the Command's Timeout ended the run.
	TimedOut bool
	// Canceled is set when the caller's context ended the run.
	Canceled bool
	// Stdout and Stderr hold the captured output, capped.
	Stdout, Stderr Output
	// Sandboxed reports that the command ran inside the kernel sandbox
	// (Local with a Sandbox on a kernel with Landlock).
	Sandboxed bool
	// Unsandboxed says why the command ran outside a sandbox when
	// Sandboxed is false: "no sandbox configured", no Landlock on this
	// kernel, a sudo command (setuid cannot work under no_new_privs), or
	// a remote host. Empty when Sandboxed.
	Unsandboxed string
	// Orphans counts the processes the command left running when its
	// leader exited, which were killed because no process may outlive
	// its call (Local; see TrackMode for what each mode finds).
	Orphans int
}

// Output is one captured stream.
type Output struct {
	// Data is what was kept: the whole stream, or its head and tail.
	Data []byte
	// Total is how many bytes the stream carried.
	Total int64
	// Dropped is how many bytes were left out of Data, from the middle.
	Dropped int64
	// Head is, when Dropped > 0, the length of Data's head part; the tail
	// starts at Head. Zero otherwise.
	Head int
}

// Truncated reports whether any output was dropped.
func (r *Result) Truncated() bool { return r.Stdout.Dropped > 0 || r.Stderr.Dropped > 0 }

// EnvNameError reports an environment variable name that is not a portable
// shell identifier.
type EnvNameError struct{ Name string }

func (e *EnvNameError) Error() string {
	return fmt.Sprintf("exec: invalid environment variable name %q (want [A-Za-z_][A-Za-z0-9_]*)", e.Name)
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
