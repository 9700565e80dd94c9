package remote_test

import (
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// TestConnections counts live pooled connections per configured host
// name: none before a call, one after (reused), none after Close.
func TestConnections(t *testing.T) {
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(func(c *remote.RouterConfig) {
		c.Hosts = []remote.HostConfig{{Name: "web1", Address: "127.0.0.1", Port: s.Port()}}
	})
	if n := r.Connections(); len(n) != 0 {
		t.Fatalf("before any call: %v", n)
	}
	for range 3 {
		runOn(t, r, "web1", exec.Command{Argv: []string{"true"}})
	}
	if n := r.Connections(); len(n) != 1 || n["web1"] != 1 {
		t.Fatalf("after three calls on web1: %v, want map[web1:1]", n)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := r.Connections(); len(n) != 0 {
		t.Errorf("after Close: %v", n)
	}
}
