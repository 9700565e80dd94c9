package remote_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
)

// ExampleSSH_Start starts a remote command without waiting for it, as
// package sessions does for a command handed off to the background: the
// command keeps its channel on the pooled connection until it exits.
func ExampleSSH_Start() {
	home, knownHosts, srv, done := exampleHost(true)
	defer done()
	ctx := context.Background()
	r, err := remote.NewRouter(remote.RouterConfig{
		Hosts:          []remote.HostConfig{{Name: "web1", Address: srv.Host(), Port: srv.Port()}},
		KnownHostsFile: knownHosts,
		HostKeyPolicy:  remote.HostKeyStrict,
		HomeDir:        home,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	t, err := r.Resolve(ctx, "web1", "alice")
	if err != nil {
		log.Fatal(err)
	}
	p, err := t.Runner.(*remote.SSH).Start(ctx, exec.Command{Shell: "sleep 0.2; echo built; exit 3"})
	if err != nil {
		log.Fatal(err) // refused, or no connection: nothing runs
	}
	// … the caller returns; later, someone waits for the end.
	res, err := p.Wait()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q exit=%d over ssh: %v\n", res.Stdout.Data, res.ExitCode, strings.HasPrefix(p.Route(), "ssh("))
	// Output: "built\n" exit=3 over ssh: true
}
