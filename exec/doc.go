// Package exec runs commands for the gateway on this machine, behind one
// small interface that package exec/remote implements over SSH.
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
// [Local] runs each command in its own process group and, where the kernel
// allows, a cgroup v2 of its own ([TrackMode]): when the command's leader
// exits or its timeout passes, every process it started ends, setsid and
// double-forked daemons included, and [Result].Orphans counts what was
// left behind. Output is capped per stream while it streams: a longer
// stream keeps its head and its tail, and memory stays bounded however much
// a command prints. [Local.Start] starts a command the same way without
// waiting for it: the returned [Process] can be signalled as a whole tree
// and waited for, which is how package sessions keeps commands that
// outlive their call. [Local.StartPTY] starts one on a new pseudo-terminal,
// as its controlling terminal in a session of its own, and
// package exec/remote's SSH.StartPTY on an SSH host's pooled connection
// (RequestPty): both return a [PTY], which terminal sessions are built on.
//
// With a [Sandbox], each local command runs in a Landlock domain of its own
// that keeps protected roots, critical files and the gateway's state out of
// reach whatever the command's spelling, and stops it from signalling or
// tracing the gateway. [Sandbox.Status] says what this kernel enforces;
// [Result].Sandboxed and [Result].Unsandboxed say, for each call, whether
// it ran confined and why not.
//
// # Remote hosts
//
// This package runs nothing over the network and links no SSH code. A
// tool family reaches hosts through [Hosts]: [LocalHosts] leads this
// machine's names to a [Local] and refuses every other host with a
// *[LocalOnlyError]; package exec/remote's Router runs commands on SSH
// hosts too, and implements Hosts and the optional capabilities
// ([FanOuter], and on its Targets' runners [ShellDetector], [PTYStarter],
// [HandleStarter], [PolicyReadlinker]). What both sides share lives here:
// [Command] and [Result], output capture ([Capture]), PID markers
// ([PIDFilter]), the shells' dialects ([Shell], [RemoteCommandLine],
// [CmdCommandLine], [PowerShellCommandLine]) and the rigout helper's wire
// protocol ([HelperRequest], [HelperReply], [ServeHelper]).
//
// # Usage
//
// Each block below is taken from an Example function of this package; the
// tests check that the two stay the same.
//
// Run a command on this machine. A non-zero exit is in the [Result]; an
// error means the command could not run at all (from Example):
//
//	var local exec.Local
//	res, err := local.Run(ctx, exec.Command{Shell: "echo hello; exit 3", Timeout: time.Minute})
//	if err != nil {
//		log.Fatal(err) // it could not run at all
//	}
//	fmt.Printf("exit %d: %s", res.ExitCode, res.Stdout.Data)
package exec
