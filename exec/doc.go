// Package exec runs commands for the gateway, on this machine and over SSH,
// behind one small interface.
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
// [SSH.StartPTY] on an SSH host's pooled connection (RequestPty): both
// return a [PTY], which terminal sessions are built on.
//
// With a [Sandbox], each local command runs in a Landlock domain of its own
// that keeps protected roots, critical files and the gateway's state out of
// reach whatever the command's spelling, and stops it from signalling or
// tracing the gateway. [Sandbox.Status] says what this kernel enforces;
// [Result].Sandboxed and [Result].Unsandboxed say, for each call, whether
// it ran confined and why not.
//
// # SSH
//
// [Router] turns the host argument of a tool into a place to run
// ([Router.Resolve]): "local"/"self"; "auto" (the host that answered last,
// else the fastest configured host, else this machine if enabled);
// "user@host" and "host:port"; an inventory alias (a [HostConfig] or a
// literal Host in ~/.ssh/config); a name or address of this machine;
// otherwise a plain SSH attempt. Host and user strings are validated first
// ([ParseHostSpec]): no leading '-', no shell metacharacters (OpenSSH's fix
// for CVE-2023-51385).
//
// [SSH] implements [Runner] over pooled connections: one multiplexed
// connection per (principal, login, transport), never shared between
// principals, opened on demand, probed with keepalive@openssh.com, closed
// when probes go unanswered or after an idle TTL, carrying at most
// MaxChannels sessions. A connect deadline covers TCP, handshake and login.
// ProxyJump hops are each checked against their own known_hosts entry.
// Logins use keys only (files, the agent, a passphrase from the
// environment) and never prompt: a host that wants a password fails with
// [ErrPasswordRequired].
//
// Host keys are checked against the user's known_hosts and rigout's own
// file under a [HostKeyPolicy] that has no default. A changed key is
// refused during key exchange, before any credential is sent, with both
// fingerprints and the fix ([ErrHostKeyChanged]); an unknown host is
// refused under [HostKeyStrict] with its fingerprint and the command that
// trusts it, or recorded as a hashed line under [HostKeyAcceptNew]. Offered
// host key algorithms follow the key types on file; @cert-authority and
// @revoked are honoured; every learned, refused or ignored key is reported
// through RouterConfig.OnHostKey.
//
// [RemoteCommandLine] quotes every piece of data with syntax.Quote:
// directory, exported environment, argv word by word, or the shell command
// given to bash -c (sh -c where bash is missing). A timeout or cancellation
// sends SIGTERM then SIGKILL, as SSH signal requests and to the command's
// process group from a second channel, then closes the channel. Output is
// capped while it streams exactly as [Local] caps it. [SSH.Start] starts a
// remote command without waiting for it: the returned [SSHProcess] holds
// its channel on the pooled connection, takes signals (the signal request
// and kill on its process group) and reports the exit status when waited
// for, so package sessions keeps SSH commands exactly as local ones.
// [Router.FanOut] runs a
// command on many hosts concurrently up to a limit, one [FanResult] per
// host. [Router.List], [Router.Test], [Router.Describe], [Router.Add],
// [Router.Remove], [Router.HostKey] and [Router.Trust] serve manage_hosts.
// Trusting a key takes two explicit steps: [Router.HostKey] reads the key a
// host shows and records nothing; [Router.Trust] records it only when given
// its fingerprint and the host shows exactly that key. Package sshtest has
// an in-process SSH server for tests.
//
// # Usage
//
// Each block below is taken from an Example function of this package, where
// it runs against the in-process server of package sshtest; the tests check
// that the two stay the same.
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
//
// Run one over SSH. A [Router] needs a [HostKeyPolicy] and the known_hosts
// files to check keys against (here the user's and rigout's own); [Router.Resolve] turns a host argument into
// a [Target] whose Runner runs there. An argv reaches the remote program
// word for word, never expanded by the remote shell (from Example_ssh):
//
//	r, err := exec.NewRouter(exec.RouterConfig{
//		Local:               &exec.Local{UnsafeNoSandbox: true}, // for "local" (a gateway gives it a Sandbox)
//		Hosts:               []exec.HostConfig{{Name: "web1", Address: address, Port: port, Labels: []string{"web"}}},
//		UserKnownHostsFiles: []string{knownHosts},
//		KnownHostsFile:      filepath.Join(stateDir, "known_hosts"), // where Trust records keys
//		HostKeyPolicy:       exec.HostKeyStrict,
//		HomeDir:             home,
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer r.Close()
//	t, err := r.Resolve(ctx, "web1", "alice")
//	if err != nil {
//		log.Fatal(err) // a malformed host argument
//	}
//	res, err := t.Runner.Run(ctx, exec.Command{Argv: []string{"printf", "%s|", "a b", "$HOME", "it's"}, Timeout: time.Minute})
//	if err != nil {
//		log.Fatal(err) // refused, or no connection: nothing ran
//	}
//	fmt.Printf("%s exit=%d\n", res.Stdout.Data, res.ExitCode)
//
// Run it on several hosts at once with the same Router, named or picked by
// label; each host has its own result or error (from Example_fanOut):
//
//	results, err := r.FanOut(ctx, exec.FanOutRequest{
//		Hosts:     []string{"local"},
//		Selector:  "web",
//		Principal: "alice",
//		Command:   exec.Command{Shell: "echo up", Timeout: time.Minute},
//	})
//	if err != nil {
//		log.Fatal(err) // a bad selector, or no hosts
//	}
//	for _, fr := range results {
//		if fr.Err != nil {
//			fmt.Printf("%s: %v\n", fr.Host, fr.Err)
//			continue
//		}
//		fmt.Printf("%s: %s", fr.Host, fr.Result.Stdout.Data)
//	}
//
// Trust a new host's key, with the same Router, in two explicit steps: [Router.HostKey] shows the
// key and records nothing; a person compares its fingerprint with the
// host's own; [Router.Trust] then records that key, and only that key
// (from Example_trust):
//
//	hk, err := r.HostKey(ctx, "web1")
//	if err != nil {
//		log.Fatal(err) // unreachable, or its key differs from the one on file
//	}
//	fmt.Println("web1 shows a", hk.KeyType, "key; on file:", hk.AlreadyKnown)
//	// A person checks hk.Fingerprint against ssh-keygen -lf on the host, then:
//	tr, err := r.Trust(ctx, "web1", hk.Fingerprint)
//	if err != nil {
//		log.Fatal(err) // the host showed another key this time: nothing recorded
//	}
//	fmt.Println("recorded:", tr.Recorded)
package exec
