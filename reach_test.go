package rigout_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/shell"
)

// countingListener accepts on a loopback address, counts and closes every
// connection: it stands for an SSH server the gateway must not reach.
func countingListener(t *testing.T, addr string) (port int, dials *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	dials = new(atomic.Int64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().(*net.TCPAddr).Port, dials
}

// reachRouter is a router whose configured host web1 is 127.0.0.2:port,
// behind the gateway's ResolveHost as the reference binary wires it.
func reachRouter(t *testing.T, port int) (*remote.Router, func(context.Context, string) ([]rigout.HostReach, error)) {
	t.Helper()
	r, err := remote.NewRouter(remote.RouterConfig{
		HostKeyPolicy: remote.HostKeyStrict, HomeDir: t.TempDir(), LocalUser: "tester", Local: &exec.Local{UnsafeNoSandbox: true},
		Hosts: []remote.HostConfig{{Name: "web1", Address: "127.0.0.2", Port: port, User: "deploy"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, func(_ context.Context, host string) ([]rigout.HostReach, error) {
		rs, err := r.Reaches(host)
		out := make([]rigout.HostReach, len(rs))
		for i, x := range rs {
			out[i] = rigout.HostReach{Name: x.Name, AdHoc: x.AdHoc}
		}
		return out, err
	}
}

// TestHostScopesJudgeWhatIsReached gives a token hosts ["web*"] and calls
// execute_command over HTTP: the configured web1 is admitted (and dialled,
// on loopback), but web@127.0.0.2:PORT, the same address named ad hoc, is
// refused before any dial, with or without the router's resolution; a
// token that names the address exactly reaches it.
func TestHostScopesJudgeWhatIsReached(t *testing.T) {
	port, dials := countingListener(t, "127.0.0.2:0")
	adHoc := fmt.Sprintf("web@127.0.0.2:%d", port)
	r, resolve := reachRouter(t, port)
	tests := []struct {
		name       string
		hosts      []string
		resolve    bool
		host       string
		wantDenied bool
	}{
		{"glob admits a configured name", []string{"web*"}, true, "web1", false},
		{"glob does not admit an address", []string{"web*"}, true, adHoc, true},
		{"glob does not admit an address, without a router's resolution", []string{"web*"}, false, adHoc, true},
		{"glob does not admit a configured name with another user", []string{"web*"}, true, "root@web1", true},
		{"glob does not admit a configured name as an address", []string{"web1*"}, true, fmt.Sprintf("web1:%d", port), true},
		{"the exact address is admitted", []string{adHoc}, true, adHoc, false},
		{"the exact address in another case", []string{strings.ToUpper(adHoc)}, true, adHoc, false},
		{"local is not web*", []string{"web*"}, true, "localhost", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := auth.Principal{Name: "narrow", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: tt.hosts}}
			cfg := rigout.Config{Principal: &p}
			if tt.resolve {
				cfg.ResolveHost = resolve
			}
			gw := newGateway(t, withShell(t, cfg, shell.Config{Hosts: r}))
			c := httpClient(t, serveHTTP(t, gw))
			before := dials.Load()
			res := callTool(t, c, "execute_command", map[string]any{"command": "true", "host": tt.host})
			denied := res.IsError && strings.Contains(text(res), "missing scope hosts:")
			if denied != tt.wantDenied {
				t.Fatalf("host %q with scopes %v: denied %v, want %v: %s", tt.host, tt.hosts, denied, tt.wantDenied, text(res))
			}
			dialled := dials.Load() > before
			if tt.wantDenied && dialled {
				t.Errorf("a refused call dialled %s", tt.host)
			}
			if !tt.wantDenied && !dialled {
				t.Errorf("an admitted call to %s did not dial it", tt.host)
			}
		})
	}
}

// httpClient is an initialized MCP client over streamable HTTP.
func httpClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	return rigouttest.Initialize(t, c, "test")
}
