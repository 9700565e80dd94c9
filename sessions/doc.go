// Package sessions keeps background processes — commands that outlive the
// tool call that started them — and terminal sessions — long-lived shells
// on a pseudo-terminal — each bound to the principal that started it.
//
// # Overview
//
// A [Manager] starts commands through an exec.Local ([Manager.Start]), or
// through any [Starter] ([Manager.StartOn]: [Manager.Local], or [SSH] for
// a remote host, whose command runs on its own channel of the Router's
// pooled connection), and keeps local and SSH processes in one table. [Manager.Run] is the hand-off: it runs a command,
// waits a while, and returns the Result if it ended by then, keeping
// nothing; otherwise the same running command, never restarted, becomes a
// background process ([Manager.RunOn] on a Starter). A process belongs to the principal name that
// started it: [Manager.Get] and [Manager.List] find only that principal's,
// and another principal's ID is [ErrNotFound], so its existence does not
// leak. Each process's stdout and stderr are kept apart, spooled from the
// start to owner-only files (0600, in a 0700 directory the Manager
// creates) up to a cap per process and in total, oldest dropped first,
// while the last bytes of each stay in memory. [Process.Read] reads by
// byte offset or the last lines and can wait, bounded, for new output or
// the exit; [Process.Write] and [Process.CloseInput] feed standard input;
// [Process.Signal] and [Process.Stop] act on the whole process tree
// (Stop: SIGTERM, then SIGKILL after the Local's grace).
//
// A process ends by itself, by its Command's Timeout, by Stop, by the
// gateway-wide ceiling ([Config].MaxLifetime), or by [Manager.Close].
// Finished processes stay readable for [Config].Retention, at most
// [Config].MaxFinished of them. The Manager's reaper goroutine, stopped by
// Close, enforces both ([Manager.Reap] runs a pass at once). With
// [Config].Audit set, each process writes a process.start and a
// process.exit event (exit code, signal, bytes).
//
// # Terminal sessions
//
// [Manager.OpenTerminal] starts bash on a pseudo-terminal: on this machine
// through the Manager's exec.Local (exec.Local.StartPTY: its sandbox,
// private environment and descendant tracking), or on an SSH host as a PTY
// channel of the router's pooled connection (remote.SSH.StartPTY). A
// [Terminal] runs one command at a time in that shell ([Terminal.Exec]), so
// the working directory and variables persist. Each command's end and exit
// code come from a marker carrying a fresh random nonce, printed by the
// shell itself before its next prompt, so output that prints a fake marker
// cannot end a command early. A command still running at the call's
// timeout keeps running; the next Exec waits for it first, and Interrupt
// sends Ctrl-C to the terminal's foreground process group. Sessions have
// their own caps ([Config].MaxTerminalsPerPrincipal, MaxTerminals) and idle
// expiry ([Config].TerminalIdle, default 1h), enforced by the same reaper;
// another principal's session is [ErrNotFound]; Close ends every session's
// process tree. With Audit set, each session writes session.open, a
// session.command per command (exit code, duration) and session.close.
//
// # Usage
//
//	m, err := sessions.New(sessions.Config{Local: &exec.Local{Sandbox: sb}}) // sb from exec.NewSandbox
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	p, err := m.Start(ctx, "alice", exec.Command{Shell: "sleep 0.2; echo built"})
//	if err != nil {
//		return err
//	}
//	// Later, perhaps in another tool call: the last lines, waiting up
//	// to 10s for new output or the exit.
//	p, err = m.Get("alice", p.ID())
//	if err != nil {
//		return err
//	}
//	rr, err := p.Read(ctx, sessions.ReadRequest{Tail: 20, Wait: 10 * time.Second})
package sessions
