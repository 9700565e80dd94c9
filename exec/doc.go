// Package exec runs commands for the gateway: on this machine, and (in its
// own issue) over SSH, behind one small interface.
//
// # Overview
//
// A [Runner] takes a [Command] — a shell command line or an exact argv, a
// working directory, environment, stdin, timeout and output cap — and
// returns a [Result]: exit code or signal, duration, whether it timed out,
// the captured output and how much of it was dropped, and the route taken.
// A command that ran and exited non-zero is a Result, never an error; an
// error means it could not run at all.
//
// [Local] runs each command in its own process group and ends the whole
// group on timeout or cancellation (SIGTERM, then SIGKILL after a grace
// period), so no grandchild survives. Output is capped per stream while it
// streams: a longer stream keeps its head and its tail, and memory stays
// bounded however much a command prints.
//
// # Usage
//
//	var local exec.Local
//	res, err := local.Run(ctx, exec.Command{Shell: "make test", Dir: "/src", Timeout: time.Minute})
//	if err != nil {
//		return err // could not start
//	}
//	fmt.Println(res.ExitCode, string(res.Stdout.Data))
package exec
