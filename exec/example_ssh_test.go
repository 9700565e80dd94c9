package exec_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/sshtest"
)

func ExampleParseHostSpec() {
	for _, s := range []string{"deploy@web1:2222", "[::1]:22", "web1", "-oProxyCommand=id", "web1;id"} {
		spec, err := exec.ParseHostSpec(s)
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
	hops, err := exec.ParseProxyJump("bastion,ops@inner.example.com:2222")
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
	r, err := exec.NewRouter(exec.RouterConfig{
		Local:         &exec.Local{},
		Hosts:         []exec.HostConfig{{Name: "web1", Address: "10.0.0.5", User: "deploy", Labels: []string{"web"}}},
		HostKeyPolicy: exec.HostKeyStrict,
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

// Example_ssh runs a command on an in-process test server, as a program
// would on a real host: a Router with a host-key policy and known_hosts,
// then Resolve and Run.
func Example_ssh() {
	dir, _ := os.MkdirTemp("", "rigout-example")
	defer os.RemoveAll(dir)
	key, _ := sshtest.NewKey("ed25519")
	os.Mkdir(filepath.Join(dir, ".ssh"), 0o700)
	key.Write(filepath.Join(dir, ".ssh", "id_ed25519"), "")
	srv, _ := sshtest.NewServer(sshtest.Config{})
	defer srv.Close()
	known := filepath.Join(dir, ".ssh", "known_hosts")
	os.WriteFile(known, []byte(srv.KnownHostsLine()+"\n"), 0o600)

	r, err := exec.NewRouter(exec.RouterConfig{
		Hosts:               []exec.HostConfig{{Name: "test", Address: srv.Host(), Port: srv.Port()}},
		UserKnownHostsFiles: []string{known},
		HostKeyPolicy:       exec.HostKeyStrict,
		HomeDir:             dir,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	t, _ := r.Resolve(context.Background(), "test", "alice")
	res, err := t.Runner.Run(context.Background(), exec.Command{
		Argv:    []string{"printf", "%s|", "a b", "$HOME", "it's"},
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s exit=%d\n", res.Stdout.Data, res.ExitCode)
	// Output: a b|$HOME|it's| exit=0
}
