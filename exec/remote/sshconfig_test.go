package remote_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec/remote"
)

// goldenConfig exercises first-value-wins, negation, wildcards, %-tokens,
// IdentityFile accumulation, Match host/originalhost/user, and ProxyJump.
// It runs no command, so `ssh -G` can evaluate it too.
const goldenConfig = `# rigout golden ssh_config
Host *.prod !bastion.prod
  User deploy
  ProxyJump bastion.prod
Host bastion.prod
  HostName 10.0.0.1
  User jump
  Port 2222
Host web?
  HostName %h.internal
  IdentityFile ~/.ssh/web_key
Host web1
  Port 2201
  User web1user
Host db* !db9
  User dbadmin
  IdentityFile %d/.ssh/db_%r
  IdentityFile ~/.ssh/db_%h
Host "quoted" alias-a alias-b
  HostName aliased.example.com
  Port=2300
Match host *.internal
  Port 2022
  User internal
Match originalhost app*,!app3
  User appuser
Match user dbadmin
  Port 5432
Host cache-*
  HostName 192.168.7.%h
  ProxyJump jump1,jump2@jumphost:2200
Host cache-10
  HostName ignored.example.com
Host *
  IdentityFile ~/.ssh/id_default
  ServerAliveInterval 30
`

var goldenHosts = []string{
	"web1", "web2", "web", "webx1", "app.prod", "bastion.prod", "api.prod", "db1", "db9", "dbx",
	"quoted", "alias-a", "alias-b", "alias-c", "app1", "app3", "app.prod.eu", "cache-10", "cache-x",
	"other", "WEB2", "x.internal", "db-web1", "10.0.0.7", "app", "prod", "a.prod", "webb",
	"deploy@web2", "root@db1", "nobody@app1", "web1:2000", "db2:2500", "u_x@cache-3", "appuser@bastion.prod",
	"cache-1", "db", "dbadmin", "alias-a.prod", "web9", "weba", "app9.prod", "host-1", "host_2", "h.example.org",
	"internal", "jump1", "jumphost", "db10", "app30",
}

// sshG runs `ssh -G` and returns its settings.
func sshG(t *testing.T, cfgPath, host string) map[string][]string {
	t.Helper()
	spec, err := remote.ParseHostSpec(host)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-G", "-F", cfgPath}
	if spec.User != "" {
		args = append(args, "-l", spec.User)
	}
	if spec.Port != 0 {
		args = append(args, "-p", fmt.Sprint(spec.Port))
	}
	args = append(args, spec.Host)
	cmd := osexec.Command("ssh", args...)
	cmd.Stdin = nil
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ssh %v: %v", args, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok {
			m[k] = append(m[k], v)
		}
	}
	return m
}

func TestSSHConfigMatchesOpenSSH(t *testing.T) {
	if _, err := osexec.LookPath("ssh"); err != nil {
		t.Skip("ssh not installed: apt-get install openssh-client")
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config")
	if err := os.WriteFile(cfgPath, []byte(goldenConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := remote.NewRouter(remote.RouterConfig{
		SSHConfigFiles: []string{cfgPath},
		HostKeyPolicy:  remote.HostKeyStrict,
		HomeDir:        u.HomeDir, // ssh expands ~ and %d with the passwd entry
		LocalUser:      u.Username,
		IsLocal:        func(string) bool { return false },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(goldenHosts) < 50 {
		t.Fatalf("only %d golden cases", len(goldenHosts))
	}
	for _, host := range goldenHosts {
		t.Run(host, func(t *testing.T) {
			want := sshG(t, cfgPath, host)
			tg, err := r.Resolve(context.Background(), host, "p")
			if err != nil {
				t.Fatal(err)
			}
			ep := endpointOf(tg)
			if got := ep.Host; got != want["hostname"][0] {
				t.Errorf("hostname %q, ssh -G %q", got, want["hostname"][0])
			}
			if got := ep.User; got != want["user"][0] {
				t.Errorf("user %q, ssh -G %q", got, want["user"][0])
			}
			if got := fmt.Sprint(ep.Port); got != want["port"][0] {
				t.Errorf("port %s, ssh -G %s", got, want["port"][0])
			}
			var wantIDs []string
			for _, f := range want["identityfile"] {
				f = strings.NewReplacer("%d", u.HomeDir, "%r", ep.User, "%h", ep.Host, "%u", u.Username).Replace(f)
				if strings.HasPrefix(f, "~/") {
					f = filepath.Join(u.HomeDir, f[2:])
				}
				if !slices.Contains(wantIDs, f) { // ssh -G repeats duplicates; they are offered once
					wantIDs = append(wantIDs, f)
				}
			}
			if !slices.Equal(ep.IdentityFiles, wantIDs) {
				t.Errorf("identity files %q, ssh -G %q", ep.IdentityFiles, wantIDs)
			}
			var hops []string
			for _, j := range ep.Jumps {
				hops = append(hops, j.Name)
			}
			wantJump := ""
			if v := want["proxyjump"]; len(v) > 0 {
				wantJump = v[0]
			}
			gotJump := ""
			if len(hops) > 0 {
				// Reassemble as written: user@ and :port come from the
				// ProxyJump line, which the Name keeps for the port only.
				gotJump = jumpString(ep)
			}
			if gotJump != wantJump {
				t.Errorf("proxyjump %q, ssh -G %q", gotJump, wantJump)
			}
		})
	}
}

// jumpString renders an endpoint's hops as a ProxyJump value, naming the
// user only where it differs from what the hop's own config gives.
func jumpString(ep *remote.Endpoint) string {
	var parts []string
	for _, j := range ep.Jumps {
		s := j.Name
		if j.User == "jump2" {
			s = j.User + "@" + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

func TestSSHConfigRefusesLocalCommands(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	cfgPath := filepath.Join(dir, "config")
	text := fmt.Sprintf(`Match exec "touch %[1]s"
  User fromexec
Match host x !exec "touch %[1]s"
  User fromnegexec
Host pc
  ProxyCommand touch %[1]s; nc %%h %%p
  LocalCommand touch %[1]s
  PermitLocalCommand yes
  KnownHostsCommand touch %[1]s
Host pj
  ProxyCommand none
  ProxyJump bastion
Host pj2
  ProxyJump bastion
  ProxyCommand nc %%h %%p
Match localnetwork 10.0.0.0/8
  User fromnet
Host *
  User plain
`, marker)
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	r, err := remote.NewRouter(remote.RouterConfig{
		SSHConfigFiles: []string{cfgPath},
		HostKeyPolicy:  remote.HostKeyStrict,
		HomeDir:        dir,
		LocalUser:      "me",
		Logger:         slog.New(slog.NewTextHandler(&logs, nil)),
		IsLocal:        func(string) bool { return false },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for host, wantUser := range map[string]string{"x": "plain", "pc": "plain", "other": "plain"} {
		tg, err := r.Resolve(context.Background(), host, "p")
		if err != nil {
			t.Fatal(err)
		}
		if endpointOf(tg).User != wantUser {
			t.Errorf("%s: user %q, want %q (Match exec must never match)", host, endpointOf(tg).User, wantUser)
		}
	}
	tg, _ := r.Resolve(context.Background(), "pc", "p")
	if endpointOf(tg).ProxyCommand != "" {
		t.Errorf("ProxyCommand honoured without UnsafeProxyCommand")
	}
	notes := strings.Join(endpointOf(tg).Notes, "\n")
	for _, want := range []string{"ProxyCommand ignored", "localcommand ignored", "knownhostscommand ignored"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q: %s", want, notes)
		}
	}
	// ProxyCommand none, then ProxyJump: the first one wins in OpenSSH, and
	// "none" disables both.
	tg, _ = r.Resolve(context.Background(), "pj", "p")
	if len(endpointOf(tg).Jumps) != 0 {
		t.Errorf("pj: jumps %v after ProxyCommand none", endpointOf(tg).Jumps)
	}
	tg, _ = r.Resolve(context.Background(), "pj2", "p")
	if len(endpointOf(tg).Jumps) != 1 || endpointOf(tg).Jumps[0].Name != "bastion" {
		t.Errorf("pj2: jumps %+v", endpointOf(tg).Jumps)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a local command ran")
	}
	for _, want := range []string{"Match block ignored", "directive ignored"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}

	// With UnsafeProxyCommand the command is kept, tokens expanded.
	r2, err := remote.NewRouter(remote.RouterConfig{SSHConfigFiles: []string{cfgPath}, HostKeyPolicy: remote.HostKeyStrict,
		HomeDir: dir, LocalUser: "me", UnsafeProxyCommand: true, IsLocal: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	tg, _ = r2.Resolve(context.Background(), "pc", "p")
	if want := "touch " + marker + "; nc pc 22"; endpointOf(tg).ProxyCommand != want {
		t.Errorf("ProxyCommand %q, want %q", endpointOf(tg).ProxyCommand, want)
	}
}

func TestSSHConfigInclude(t *testing.T) {
	home := t.TempDir()
	sshDir := filepath.Join(home, ".ssh")
	os.MkdirAll(filepath.Join(sshDir, "conf.d"), 0o700)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(sshDir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("config", "Host a\n  Include conf.d/*.conf\n  Port 1000\nHost *\n  User top\nInclude ~/.ssh/tail\n")
	// The included file's Host line is scoped to it; its values come
	// first for host a because the Include comes first in a's block.
	write("conf.d/10.conf", "User from10\nHost b\n  User b10\n")
	write("conf.d/20.conf", "Port 2000\nHostName a.example.com\n")
	write("tail", "Host *\n  Port 3000\n  User tail\n")
	r, err := remote.NewRouter(remote.RouterConfig{SSHConfigFiles: []string{filepath.Join(sshDir, "config")},
		HostKeyPolicy: remote.HostKeyStrict, HomeDir: home, LocalUser: "me", IsLocal: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tests := map[string][3]string{
		"a": {"a.example.com", "from10", "2000"},
		"b": {"b", "top", "3000"}, // conf.d is only read inside Host a
		"c": {"c", "top", "3000"},
	}
	for host, want := range tests {
		tg, err := r.Resolve(context.Background(), host, "p")
		if err != nil {
			t.Fatal(err)
		}
		got := [3]string{endpointOf(tg).Host, endpointOf(tg).User, fmt.Sprint(endpointOf(tg).Port)}
		if got != want {
			t.Errorf("%s: %v, want %v", host, got, want)
		}
	}
}

func TestSSHConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"bad port":        "Host x\n  Port abc\n",
		"include-loop":    "Include " + filepath.Join(dir, "include-loop") + "\n",
		"bad host":        "Host x\n  HostName a;id\n",
		"bad config user": "Host x\n  User -oProxyCommand=id\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			os.WriteFile(p, []byte(text), 0o600)
			r, err := remote.NewRouter(remote.RouterConfig{SSHConfigFiles: []string{p}, HostKeyPolicy: remote.HostKeyStrict, HomeDir: dir, LocalUser: "me"})
			if err != nil {
				return // refused at load: fine
			}
			defer r.Close()
			if _, err := r.Resolve(context.Background(), "x", "p"); err == nil {
				t.Errorf("resolved x under %q", text)
			}
		})
	}
	// A missing file is skipped, like OpenSSH's missing ~/.ssh/config.
	r, err := remote.NewRouter(remote.RouterConfig{SSHConfigFiles: []string{filepath.Join(dir, "none")}, HostKeyPolicy: remote.HostKeyStrict, HomeDir: dir, LocalUser: "me"})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

func FuzzSSHConfig(f *testing.F) {
	f.Add(goldenConfig, "web1")
	f.Add("Host *\n  User x\nMatch exec \"x\"\n  Port 1\n", "h")
	f.Add("Match host a,!b originalhost c user d localuser e\n  Port 2\nInclude nope\n", "a")
	f.Add("Host =a\n\tHostName=%h.%%\n  IdentityFile %d/%u/%r/%h/%p/%n\n", "a")
	f.Add("Host a\n  ProxyJump b\nHost b\n  ProxyJump a\n", "a")
	f.Fuzz(func(t *testing.T, text, host string) {
		ep, err := remote.ResolveSSHConfig(text, host)
		ep2, err2 := remote.ResolveSSHConfig(text, host)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		if ep.Host != ep2.Host || ep.User != ep2.User || ep.Port != ep2.Port || len(ep.Jumps) != len(ep2.Jumps) {
			t.Fatalf("not deterministic: %+v / %+v", ep, ep2)
		}
		for _, e := range append([]remote.Endpoint{*ep}, ep.Jumps...) {
			if strings.HasPrefix(e.Host, "-") || strings.HasPrefix(e.User, "-") || e.Port < 1 || e.Port > 65535 {
				t.Fatalf("unsafe endpoint %+v", e)
			}
			if strings.ContainsAny(e.Host+e.User, " ;|&`()<>\n'\"\\*?") {
				t.Fatalf("metacharacters in %+v", e)
			}
		}
		if len(ep.Jumps) > 8 {
			t.Fatalf("%d jumps", len(ep.Jumps))
		}
	})
}
