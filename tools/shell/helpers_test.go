package shell_test

import (
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/hosts"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/validate"
)

// setup is what a test gateway is built from: the gateway's own config,
// the shell family's, its policy, and SSH hosts (which add the hosts
// family).
type setup struct {
	Config rigout.Config
	Shell  shell.Config
	Policy *validate.Policy
	SSH    *remote.RouterConfig
}

func newGateway(t *testing.T, s setup) *rigout.Gateway {
	t.Helper()
	g, err := gate.New(gate.Config{Policy: s.Policy})
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Shell
	sc.Gate = g
	if sc.Local == nil {
		sc.Local = &exec.Local{UnsafeNoSandbox: true} // these tests are about the policy, not the sandbox
	}
	cfg := s.Config
	if s.SSH != nil {
		rc := *s.SSH
		if rc.Local == nil {
			rc.Local = &exec.Local{UnsafeNoSandbox: true}
		}
		if cfg.Audit != nil {
			rc.OnHostKey = hosts.HostKeyRecorder(cfg.Audit)
		}
		r, err := remote.NewRouter(rc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		sc.Hosts, sc.Local = r, rc.Local
		hf, err := hosts.New(hosts.Config{Router: r})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = append(cfg.Tools, hf.Tools()...)
	}
	sh, err := shell.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools = append(sh.Tools(), cfg.Tools...)
	return rigouttest.New(t, cfg)
}

func connect(t testing.TB, gw *rigout.Gateway) *client.Client { return rigouttest.Connect(t, gw) }

func serveHTTP(t *testing.T, gw *rigout.Gateway) string { return rigouttest.ServeHTTP(t, gw) }

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return rigouttest.Call(t, c, name, args)
}

func text(res *mcp.CallToolResult) string { return rigouttest.Text(res) }

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	return rigouttest.Structured(t, res)
}

func openLedger(t *testing.T) *sqlite.Ledger { return rigouttest.OpenLedger(t) }

func events(t *testing.T, l audit.Querier, f audit.Filter) []audit.Event {
	t.Helper()
	return rigouttest.Events(t, l, f)
}
