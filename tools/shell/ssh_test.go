package shell_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// sshFixture is a set of in-process SSH servers and a router config that
// reaches them as hosts "web1", "web2", … with a throwaway user key.
type sshFixture struct {
	servers    []*sshtest.Server
	cfg        remote.RouterConfig
	knownHosts string
}

func newSSHFixture(t *testing.T, n int, trusted bool) *sshFixture {
	return newSSHFixtureWith(t, n, trusted, sshtest.Config{})
}

// newSSHFixtureWith is newSSHFixture with a server configuration, such as
// RecordOnly for refusal tests.
func newSSHFixtureWith(t *testing.T, n int, trusted bool, sc sshtest.Config) *sshFixture {
	t.Helper()
	dir := t.TempDir()
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "id_ed25519")
	if err := key.Write(keyPath, ""); err != nil {
		t.Fatal(err)
	}
	f := &sshFixture{knownHosts: filepath.Join(dir, "known_hosts")}
	var known []string
	for i := 1; i <= n; i++ {
		s, err := sshtest.NewServer(sc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		f.servers = append(f.servers, s)
		label := "odd"
		if i%2 == 0 {
			label = "even"
		}
		f.cfg.Hosts = append(f.cfg.Hosts, remote.HostConfig{
			Name: "web" + strconv.Itoa(i), Address: s.Host(), Port: s.Port(), User: "agent", Key: keyPath,
			Labels: []string{"web", label},
		})
		known = append(known, s.KnownHostsLine())
	}
	if trusted {
		if err := os.WriteFile(f.knownHosts, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.cfg.KnownHostsFile = f.knownHosts
	f.cfg.HostKeyPolicy = remote.HostKeyStrict
	f.cfg.HomeDir = dir
	return f
}

func TestExecuteCommandOverSSH(t *testing.T) {
	f := newSSHFixture(t, 1, true)
	l := openLedger(t)
	c := connect(t, newGateway(t, setup{Config: rigout.Config{Audit: l}, SSH: &f.cfg}))

	res := callTool(t, c, "execute_command", map[string]any{
		"host": "web1", "argv": []any{"printf", "%s|", "it's $HOME", "a\nb"},
	})
	got := text(res)
	if res.IsError || !strings.Contains(got, "stdout:\nit's $HOME|a\nb|") || !strings.Contains(got, "via ssh(web1") {
		t.Fatalf("argv over ssh: %q", got)
	}
	sc := structured(t, res)
	if !strings.HasPrefix(sc["route"].(string), "ssh(web1") {
		t.Errorf("route = %v", sc["route"])
	}

	// Non-zero exit and the done row's route.
	res = callTool(t, c, "execute_command", map[string]any{"host": "web1", "command": "exit 5"})
	if !res.IsError || !strings.Contains(text(res), "exit code: 5") {
		t.Errorf("exit 5: %q", text(res))
	}
	var routes []string
	for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
		if e.Phase == audit.PhaseDone {
			routes = append(routes, e.Route)
		}
	}
	if len(routes) != 2 || !strings.HasPrefix(routes[1], "ssh(web1") {
		t.Errorf("done routes = %v", routes)
	}
}

// TestSSHRefusalsSendNothing sends destructive commands to hosts whose
// SSH servers only record what they receive and run nothing, so the test
// is harmless if the policy fails; it asserts nothing was even sent.
func TestSSHRefusalsSendNothing(t *testing.T) {
	f := newSSHFixtureWith(t, 2, true, sshtest.Config{RecordOnly: true})
	c := connect(t, newGateway(t, setup{SSH: &f.cfg}))
	for _, args := range []map[string]any{
		{"host": "web1", "command": "rm -rf --no-preserve-root /"},
		// Relative paths are judged against an absolute remote working directory.
		{"host": "web1", "command": "rm -rf .", "working_directory": "/"},
		{"host": "web1", "argv": []any{"rm", "-rf", "/etc"}},
		{"hosts": "web", "command": "rm -rf /"},
		{"hosts": []any{"web1", "web2"}, "command": "mkfs.ext4 /dev/sda"},
	} {
		res := callTool(t, c, "execute_command", args)
		if !res.IsError || !strings.Contains(text(res), "refused by policy rule") {
			t.Errorf("%v: %q", args, text(res))
		}
	}
	for i, s := range f.servers {
		if cmds := s.Commands(); len(cmds) != 0 {
			t.Errorf("web%d received %q", i+1, cmds)
		}
	}
	// The fixture does record what is allowed.
	if res := callTool(t, c, "execute_command", map[string]any{"host": "web1", "command": "echo ok"}); res.IsError || len(f.servers[0].Commands()) != 1 {
		t.Errorf("allowed command: %q, recorded %q", text(res), f.servers[0].Commands())
	}
}

func TestUnknownHostKeyIsRefusedAndAudited(t *testing.T) {
	f := newSSHFixture(t, 1, false)
	l := openLedger(t)
	c := connect(t, newGateway(t, setup{Config: rigout.Config{Audit: l}, SSH: &f.cfg}))
	res := callTool(t, c, "execute_command", map[string]any{"host": "web1", "command": "true"})
	if !res.IsError || !strings.Contains(text(res), "rigout hosts trust") || !strings.Contains(text(res), "SHA256:") {
		t.Errorf("unknown host: %q", text(res))
	}
	if n := f.servers[0].AuthAttempts(); n != 0 {
		t.Errorf("credentials were offered to an unverified host: %d attempts", n)
	}
	if rows := events(t, l, audit.Filter{Type: "ssh.hostkey.*"}); len(rows) != 1 || rows[0].Type != "ssh.hostkey.unknown" {
		t.Errorf("host key rows = %+v", rows)
	}

	// manage_hosts trust shows the key and records nothing without the
	// verified fingerprint; with it, the host becomes reachable.
	res = callTool(t, c, "manage_hosts", map[string]any{"action": "trust", "host": "web1"})
	got := text(res)
	i := strings.Index(got, "fingerprint SHA256:")
	if res.IsError || i < 0 || !strings.Contains(got, "Nothing was recorded") {
		t.Fatalf("trust without fingerprint: %q", got)
	}
	fp := strings.Fields(got[i+len("fingerprint "):])[0]
	fp = strings.TrimSuffix(fp, ".")
	// The next call, for the model, once a person checked the fingerprint.
	next, _ := structured(t, res)["next"].(map[string]any)
	if args, _ := next["arguments"].(map[string]any); next["tool"] != "manage_hosts" || args["fingerprint"] != fp || args["action"] != "trust" {
		t.Errorf("trust without fingerprint: next %v", next)
	}
	if b, _ := os.ReadFile(f.knownHosts); len(b) != 0 {
		t.Fatalf("trust without a fingerprint wrote known_hosts: %q", b)
	}
	res = callTool(t, c, "manage_hosts", map[string]any{"action": "trust", "host": "web1", "fingerprint": "SHA256:wrong"})
	if !res.IsError {
		t.Errorf("trust with a wrong fingerprint: %q", text(res))
	}
	res = callTool(t, c, "manage_hosts", map[string]any{"action": "trust", "host": "web1", "fingerprint": fp})
	if res.IsError || !strings.Contains(text(res), "trusted web1") {
		t.Fatalf("trust with the fingerprint %s: %q", fp, text(res))
	}
	if res := callTool(t, c, "execute_command", map[string]any{"host": "web1", "command": "echo ok"}); res.IsError {
		t.Errorf("after trust: %q", text(res))
	}
}

func TestFanOut(t *testing.T) {
	f := newSSHFixture(t, 3, true)
	f.servers[1].Close() // web2 is down
	l := openLedger(t)
	c := connect(t, newGateway(t, setup{Config: rigout.Config{Audit: l}, SSH: &f.cfg}))

	res := callTool(t, c, "execute_command", map[string]any{"hosts": []any{"web1", "web2", "web3"}, "command": "echo hello"})
	got := text(res)
	if !res.IsError || !strings.Contains(got, "2 of 3 hosts succeeded") || !strings.Contains(got, "=== web2") || strings.Count(got, "stdout:\nhello") != 2 {
		t.Errorf("fan-out with one host down:\n%s", got)
	}
	sc := structured(t, res)
	results, _ := sc["results"].([]any)
	if len(results) != 3 {
		t.Fatalf("results = %v", sc)
	}

	res = callTool(t, c, "execute_command", map[string]any{"hosts": "odd", "command": "echo hi"})
	if res.IsError || !strings.Contains(text(res), "2 of 2 hosts succeeded") || strings.Contains(text(res), "web2") {
		t.Errorf("selector odd:\n%s", text(res))
	}
	// Both rows of a fan-out name the hosts the selector resolved to.
	rows := events(t, l, audit.Filter{Tool: "execute_command"})
	if len(rows) != 4 {
		t.Fatalf("rows = %+v", rows)
	}
	for i, want := range []string{"web1,web2,web3", "web1,web2,web3", "web1,web3", "web1,web3"} {
		if rows[i].Host != want {
			t.Errorf("row %d (%s) host = %q, want %q", i, rows[i].Phase, rows[i].Host, want)
		}
	}
	res = callTool(t, c, "execute_command", map[string]any{"hosts": "nothing-has-this", "command": "true"})
	if !res.IsError || !strings.Contains(text(res), "matches no host") {
		t.Errorf("empty selector: %q", text(res))
	}
	res = callTool(t, c, "execute_command", map[string]any{"hosts": []any{"web1"}, "host": "web1", "command": "true"})
	if !res.IsError || !strings.Contains(text(res), "not both") {
		t.Errorf("host and hosts: %q", text(res))
	}
}

func TestHostScopes(t *testing.T) {
	f := newSSHFixture(t, 2, true)
	p := auth.Principal{Name: "web1-only", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"web1"}}}
	c := connect(t, newGateway(t, setup{Config: rigout.Config{Principal: &p}, SSH: &f.cfg}))
	if res := callTool(t, c, "execute_command", map[string]any{"host": "web1", "command": "true"}); res.IsError {
		t.Errorf("allowed host: %q", text(res))
	}
	for _, args := range []map[string]any{
		{"host": "web2", "command": "true"},
		{"command": "true"}, // local is a host too
		{"hosts": []any{"web1", "web2"}, "command": "true"},
		{"hosts": "web", "command": "true"}, // the selector picks web2 as well
	} {
		res := callTool(t, c, "execute_command", args)
		if !res.IsError || !strings.Contains(text(res), "hosts:") {
			t.Errorf("%v: %q", args, text(res))
		}
	}
	if f.servers[1].Accepted() != 0 {
		t.Error("a host outside the scopes was contacted")
	}
}

func TestManageHosts(t *testing.T) {
	f := newSSHFixture(t, 1, true)
	l := openLedger(t)
	c := connect(t, newGateway(t, setup{SSH: &f.cfg, Config: rigout.Config{Audit: l}}))
	res := callTool(t, c, "manage_hosts", map[string]any{"action": "list"})
	if res.IsError || !strings.Contains(text(res), `"name": "web1"`) {
		t.Errorf("list: %q", text(res))
	}
	res = callTool(t, c, "manage_hosts", map[string]any{"action": "test", "host": "web1"})
	if res.IsError || !strings.Contains(text(res), `"reachable": true`) {
		t.Errorf("test: %q", text(res))
	}
	res = callTool(t, c, "manage_hosts", map[string]any{"action": "describe", "host": "web1"})
	if res.IsError || !strings.Contains(text(res), `"ssh_command": "ssh `) {
		t.Errorf("describe: %q", text(res))
	}
	if strings.Contains(text(res), `"latency":`) || !strings.Contains(text(res), `"latency_ms":`) {
		t.Errorf("describe reports latency in other units than ms: %q", text(res))
	}
	res = callTool(t, c, "manage_hosts", map[string]any{"action": "add", "host": "db1", "address": "127.0.0.1", "port": 1, "labels": []any{"db"}})
	if res.IsError {
		t.Errorf("add: %q", text(res))
	}
	// A failed test is recorded with its error, not the result's first line.
	if res = callTool(t, c, "manage_hosts", map[string]any{"action": "test", "host": "db1"}); !res.IsError {
		t.Errorf("test of a closed port: %q", text(res))
	}
	rows := events(t, l, audit.Filter{Tool: "manage_hosts"})
	if last := rows[len(rows)-1]; last.Status != audit.StatusError || len(last.Error) < 10 || strings.HasPrefix(last.Error, "{") {
		t.Errorf("failed test recorded as %q / %q", last.Status, last.Error)
	}
	if res = callTool(t, c, "manage_hosts", map[string]any{"action": "add", "host": "db1", "address": "127.0.0.1"}); !res.IsError {
		t.Error("adding a host twice succeeded")
	}
	if res = callTool(t, c, "manage_hosts", map[string]any{"action": "add", "host": "-oProxyCommand=x"}); !res.IsError {
		t.Error("a host name starting with - was accepted")
	}
	if res = callTool(t, c, "manage_hosts", map[string]any{"action": "remove", "host": "db1"}); res.IsError {
		t.Errorf("remove: %q", text(res))
	}
	if res = callTool(t, c, "manage_hosts", map[string]any{"action": "test"}); !res.IsError || !strings.Contains(text(res), "needs `host`") {
		t.Errorf("test without host: %q", text(res))
	}
	// The whole list, with SSH on, stays within the tools/list budget.
	full, err := c.ListTools(context.Background(), mcpListTools())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(full); len(b) > 10<<10 {
		t.Errorf("tools/list with SSH is %d bytes, budget 10 KiB", len(b))
	} else {
		t.Logf("tools/list with SSH: %d tools, %d bytes", len(full.Tools), len(b))
	}
	// A read-only token may list hosts, not add one.
	ro := auth.Principal{Name: "reader", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}}
	cr := connect(t, newGateway(t, setup{Config: rigout.Config{Principal: &ro}, SSH: &f.cfg}))
	if res := callTool(t, cr, "manage_hosts", map[string]any{"action": "list"}); res.IsError {
		t.Errorf("read-only list: %q", text(res))
	}
	if res := callTool(t, cr, "manage_hosts", map[string]any{"action": "add", "host": "db2", "address": "127.0.0.1"}); !res.IsError || !strings.Contains(text(res), "missing scope write") {
		t.Errorf("read-only add: %q", text(res))
	}
	// Without SSH the tool is not listed at all.
	c2 := connect(t, newGateway(t, setup{}))
	list, _ := c2.ListTools(context.Background(), mcpListTools())
	for _, tool := range list.Tools {
		if tool.Name == "manage_hosts" {
			t.Error("manage_hosts listed without SSH")
		}
	}
}

func mcpListTools() mcp.ListToolsRequest { return mcp.ListToolsRequest{} }
