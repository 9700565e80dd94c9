package remote_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

func ExampleParseHostSpec() {
	for _, s := range []string{"deploy@web1:2222", "[::1]:22", "web1", "-oProxyCommand=id", "web1;id"} {
		spec, err := remote.ParseHostSpec(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("user=%q host=%q port=%d\n", spec.User, spec.Host, spec.Port)
	}
	// Output:
	// user="deploy" host="web1" port=2222
	// user="" host="::1" port=22
	// user="" host="web1" port=0
	// exec: invalid host "-oProxyCommand=id": host name starts with '-'
	// exec: invalid host "web1;id": character ';' is not allowed in a host name
}

func ExampleParseProxyJump() {
	hops, err := remote.ParseProxyJump("bastion,ops@inner.example.com:2222")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hops {
		fmt.Println(h)
	}
	// Output:
	// bastion
	// ops@inner.example.com:2222
}

func ExampleRemoteCommandLine() {
	line, _ := exec.RemoteCommandLine(exec.Command{
		Argv: []string{"grep", "-r", "it's $HOME", "."},
		Dir:  "/srv/my app",
		Env:  map[string]string{"LC_ALL": "C"},
	}, "")
	fmt.Println(line)

	line, _ = exec.RemoteCommandLine(exec.Command{Shell: "echo one\necho two"}, "bash")
	fmt.Println(line)
	// Output:
	// cd -- '/srv/my app' && export LC_ALL=C && exec grep -r "it's \$HOME" .
	// exec bash -c $'echo one\necho two'
}

func ExampleRouter_Resolve() {
	home, _ := os.MkdirTemp("", "rigout-example")
	defer os.RemoveAll(home)
	r, err := remote.NewRouter(remote.RouterConfig{
		Local:         &exec.Local{UnsafeNoSandbox: true},
		Hosts:         []remote.HostConfig{{Name: "web1", Address: "10.0.0.5", User: "deploy", Labels: []string{"web"}}},
		HostKeyPolicy: remote.HostKeyStrict,
		HomeDir:       home,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for _, host := range []string{"local", "web1", "ops@web1:2222", "web1$(id)"} {
		t, err := r.Resolve(context.Background(), host, "alice")
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(host, "→", t.Route)
	}
	// Output:
	// local → local
	// web1 → ssh(web1 → 10.0.0.5:22)
	// ops@web1:2222 → ssh(web1:2222 → 10.0.0.5:2222)
	// exec: invalid host "web1$(id)": character '$' is not allowed in a host name
}

// exampleHost starts an in-process SSH server standing in for a real host,
// and a home directory with a user key it accepts. With trusted, the
// server's key is in home/.ssh/known_hosts, as if the user had connected
// before. done stops the server and removes the directory.
func exampleHost(trusted bool) (home, knownHosts string, srv *sshtest.Server, done func()) {
	home, err := os.MkdirTemp("", "rigout-example")
	if err != nil {
		log.Fatal(err)
	}
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		log.Fatal(err)
	}
	if err := key.Write(filepath.Join(home, ".ssh", "id_ed25519"), ""); err != nil {
		log.Fatal(err)
	}
	srv, err = sshtest.NewServer(sshtest.Config{AuthorizedKeys: []ssh.PublicKey{key.Public()}, Dir: home})
	if err != nil {
		log.Fatal(err)
	}
	knownHosts = filepath.Join(home, ".ssh", "known_hosts")
	if trusted {
		if err := os.WriteFile(knownHosts, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
			log.Fatal(err)
		}
	}
	return home, knownHosts, srv, func() {
		srv.Close()
		os.RemoveAll(home)
	}
}

// Example_ssh runs a command over SSH, as a program would on a real host:
// a Router with a host key policy and known_hosts, then Resolve and Run.
func Example_ssh() {
	home, knownHosts, srv, done := exampleHost(true)
	defer done()
	address, port, stateDir := srv.Host(), srv.Port(), filepath.Join(home, "state")
	ctx := context.Background()

	r, err := remote.NewRouter(remote.RouterConfig{
		Local:               &exec.Local{UnsafeNoSandbox: true}, // for "local" (a gateway gives it a Sandbox)
		Hosts:               []remote.HostConfig{{Name: "web1", Address: address, Port: port, Labels: []string{"web"}}},
		UserKnownHostsFiles: []string{knownHosts},
		KnownHostsFile:      filepath.Join(stateDir, "known_hosts"), // where Trust records keys
		HostKeyPolicy:       remote.HostKeyStrict,
		HomeDir:             home,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	t, err := r.Resolve(ctx, "web1", "alice")
	if err != nil {
		log.Fatal(err) // a malformed host argument
	}
	res, err := t.Runner.Run(ctx, exec.Command{Argv: []string{"printf", "%s|", "a b", "$HOME", "it's"}, Timeout: time.Minute})
	if err != nil {
		log.Fatal(err) // refused, or no connection: nothing ran
	}
	fmt.Printf("%s exit=%d\n", res.Stdout.Data, res.ExitCode)
	// Output: a b|$HOME|it's| exit=0
}

// Example_fanOut runs one command on this machine and on every host
// labelled "web".
func Example_fanOut() {
	home, knownHosts, srv, done := exampleHost(true)
	defer done()
	address, port, stateDir := srv.Host(), srv.Port(), filepath.Join(home, "state")
	ctx := context.Background()
	r, err := remote.NewRouter(remote.RouterConfig{
		Local:               &exec.Local{UnsafeNoSandbox: true}, // for "local" (a gateway gives it a Sandbox)
		Hosts:               []remote.HostConfig{{Name: "web1", Address: address, Port: port, Labels: []string{"web"}}},
		UserKnownHostsFiles: []string{knownHosts},
		KnownHostsFile:      filepath.Join(stateDir, "known_hosts"), // where Trust records keys
		HostKeyPolicy:       remote.HostKeyStrict,
		HomeDir:             home,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	results, err := r.FanOut(ctx, exec.FanOutRequest{
		Hosts:     []string{"local"},
		Selector:  "web",
		Principal: "alice",
		Command:   exec.Command{Shell: "echo up", Timeout: time.Minute},
	})
	if err != nil {
		log.Fatal(err) // a bad selector, or no hosts
	}
	for _, fr := range results {
		if fr.Err != nil {
			fmt.Printf("%s: %v\n", fr.Host, fr.Err)
			continue
		}
		fmt.Printf("%s: %s", fr.Host, fr.Result.Stdout.Data)
	}
	// Output:
	// local: up
	// web1: up
}

// Example_trust trusts a new host's key in two steps, then runs a command
// there. The host is unknown at first: under HostKeyStrict a command is
// refused until its key is on file.
func Example_trust() {
	home, knownHosts, srv, done := exampleHost(false)
	defer done()
	address, port, stateDir := srv.Host(), srv.Port(), filepath.Join(home, "state")
	ctx := context.Background()
	r, err := remote.NewRouter(remote.RouterConfig{
		Local:               &exec.Local{UnsafeNoSandbox: true}, // for "local" (a gateway gives it a Sandbox)
		Hosts:               []remote.HostConfig{{Name: "web1", Address: address, Port: port, Labels: []string{"web"}}},
		UserKnownHostsFiles: []string{knownHosts},
		KnownHostsFile:      filepath.Join(stateDir, "known_hosts"), // where Trust records keys
		HostKeyPolicy:       remote.HostKeyStrict,
		HomeDir:             home,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	hk, err := r.HostKey(ctx, "web1")
	if err != nil {
		log.Fatal(err) // unreachable, or its key differs from the one on file
	}
	fmt.Println("web1 shows a", hk.KeyType, "key; on file:", hk.AlreadyKnown)
	// A person checks hk.Fingerprint against ssh-keygen -lf on the host, then:
	tr, err := r.Trust(ctx, "web1", hk.Fingerprint)
	if err != nil {
		log.Fatal(err) // the host showed another key this time: nothing recorded
	}
	fmt.Println("recorded:", tr.Recorded)

	t, err := r.Resolve(ctx, "web1", "alice")
	if err != nil {
		log.Fatal(err)
	}
	res, err := t.Runner.Run(ctx, exec.Command{Shell: "echo trusted", Timeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", res.Stdout.Data)
	// Output:
	// web1 shows a ssh-ed25519 key; on file: false
	// recorded: true
	// trusted
}
