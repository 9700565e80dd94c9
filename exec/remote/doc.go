// Package remote runs commands on SSH hosts for the gateway: the SSH side
// of package exec, which it imports (exec never imports it), so that a
// gateway that runs commands only on this machine links no SSH code.
//
// # Overview
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
// [SSH] implements [exec.Runner] over pooled connections: one multiplexed
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
// [exec.RemoteCommandLine] quotes every piece of data with syntax.Quote:
// directory, exported environment, argv word by word, or the shell command
// given to bash -c (sh -c where bash is missing). A timeout or cancellation
// sends SIGTERM then SIGKILL, as SSH signal requests and to the command's
// process group from a second channel, then closes the channel. Output is
// capped while it streams exactly as [exec.Local] caps it. [SSH.Start] starts a
// remote command without waiting for it: the returned [SSHProcess] holds
// its channel on the pooled connection, takes signals (the signal request
// and kill on its process group) and reports the exit status when waited
// for, so package sessions keeps SSH commands exactly as local ones.
// [Router.FanOut] runs a command on many hosts concurrently up to a limit, one [exec.FanResult] per
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
// Run one over SSH. A [Router] needs a [HostKeyPolicy] and the known_hosts
// files to check keys against (here the user's and rigout's own); [Router.Resolve] turns a host argument into
// an [exec.Target] whose Runner runs there. An argv reaches the remote program
// word for word, never expanded by the remote shell (from Example_ssh):
//
//	r, err := remote.NewRouter(remote.RouterConfig{
//		Local:               &exec.Local{UnsafeNoSandbox: true}, // for "local" (a gateway gives it a Sandbox)
//		Hosts:               []remote.HostConfig{{Name: "web1", Address: address, Port: port, Labels: []string{"web"}}},
//		UserKnownHostsFiles: []string{knownHosts},
//		KnownHostsFile:      filepath.Join(stateDir, "known_hosts"), // where Trust records keys
//		HostKeyPolicy:       remote.HostKeyStrict,
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
package remote
