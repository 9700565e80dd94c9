package remote_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

func TestRouterLadder(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	e.writeConfig("Host cfgalias\n  HostName 10.9.9.9\n  User ops\nHost *.lan\n  User lanuser\n")
	r := e.router(func(c *remote.RouterConfig) {
		c.Hosts = []remote.HostConfig{{Name: "web1", Address: "10.0.0.5", User: "deploy", Labels: []string{"web"}},
			{Name: "localhost", Address: "127.0.0.1", Port: 2222}}
	})
	ctx := context.Background()
	tests := []struct {
		host      string
		wantLocal bool
		wantRoute string
		wantUser  string
		wantErr   bool
	}{
		{"local", true, "local", "", false},
		{"self", true, "local", "", false},
		{"", true, "local", "", false},
		{"LOCAL", true, "local", "", false},
		{"web1", false, "ssh(web1 → 10.0.0.5:22)", "deploy", false},
		{"root@web1", false, "ssh(web1 → 10.0.0.5:22)", "root", false},
		{"web1:2200", false, "ssh(web1:2200 → 10.0.0.5:2200)", "deploy", false},
		{"cfgalias", false, "ssh(cfgalias → 10.9.9.9:22)", "ops", false},
		{"box.lan", false, "ssh(box.lan → box.lan:22)", "lanuser", false},
		// A configured host named like this machine is the configured host.
		{"localhost", false, "ssh(localhost → 127.0.0.1:2222)", "tester", false},
		{"this-machine", true, "local", "", false},
		{"me@this-machine", false, "ssh(this-machine → this-machine:22)", "me", false},
		{"unknown.example.com", false, "ssh(unknown.example.com → unknown.example.com:22)", "tester", false},
		{"-oProxyCommand=id", false, "", "", true},
		{"web1;id", false, "", "", true},
		{"Root@web1", false, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			tg, err := r.Resolve(ctx, tt.host, "p")
			if tt.wantErr {
				var he *remote.HostSpecError
				if !errors.As(err, &he) {
					t.Errorf("err = %v, want HostSpecError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.Local != tt.wantLocal || tg.Route != tt.wantRoute {
				t.Errorf("local=%v route=%q, want %v %q", tg.Local, tg.Route, tt.wantLocal, tt.wantRoute)
			}
			if !tt.wantLocal && endpointOf(tg).User != tt.wantUser {
				t.Errorf("user %q, want %q", endpointOf(tg).User, tt.wantUser)
			}
			if tt.wantLocal && endpointOf(tg) != nil {
				t.Errorf("local target with endpoint")
			}
		})
	}
	// The default detection knows loopback and this machine's name.
	r2 := e.router(func(c *remote.RouterConfig) { c.IsLocal = nil })
	hn, _ := os.Hostname()
	for _, h := range []string{"127.0.0.1", "::1", "localhost", strings.ToLower(hn)} {
		if tg, err := r2.Resolve(ctx, h, "p"); err != nil || !tg.Local {
			t.Errorf("%s: local=%v err=%v", h, tg.Local, err)
		}
	}
	if tg, err := r2.Resolve(ctx, "192.0.2.1", "p"); err != nil || tg.Local {
		t.Errorf("192.0.2.1 resolved local")
	}
	// Without a Local runner, local routes are refused.
	r3 := e.router(func(c *remote.RouterConfig) { c.Local = nil })
	if _, err := r3.Resolve(ctx, "local", "p"); !errors.Is(err, remote.ErrLocalDisabled) {
		t.Errorf("err = %v", err)
	}
	// A local target runs.
	tg, _ := r.Resolve(ctx, "local", "p")
	res, err := tg.Runner.Run(ctx, exec.Command{Shell: "echo here"})
	if err != nil || string(res.Stdout.Data) != "here\n" || res.Route != "local" {
		t.Errorf("local run: %+v %v", res, err)
	}
}

func TestRouterAddRemoveListSelect(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	e.writeConfig("Host fromssh\n  HostName 10.1.1.1\nHost *.wild\n  User w\n")
	r := e.router(func(c *remote.RouterConfig) {
		c.Hosts = []remote.HostConfig{
			{Name: "web1", Address: "10.0.0.1", Labels: []string{"web", "env=prod"}},
			{Name: "web2", Address: "10.0.0.2", Labels: []string{"web", "env=staging"}},
			{Name: "db1", Address: "10.0.0.3", Labels: []string{"db", "env=prod"}},
		}
	})
	for sel, want := range map[string]string{
		"web":             "web1,web2",
		"env=prod":        "web1,db1",
		"web,env=prod":    "web1",
		"web,!env=prod":   "web2",
		"*":               "web1,web2,db1",
		"nothing":         "",
		" web , env=prod": "web1",
	} {
		got, err := r.Select(sel)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("Select(%q) = %v, %v; want %s", sel, got, err, want)
		}
	}
	for _, bad := range []string{"", "a;b", "!", "-x"} {
		if _, err := r.Select(bad); err == nil {
			t.Errorf("Select(%q) accepted", bad)
		}
	}
	if err := r.Add(remote.HostConfig{Name: "web3", Address: "10.0.0.9", Port: 2222, Labels: []string{"web"}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(remote.HostConfig{Name: "web3"}); !errors.Is(err, remote.ErrHostExists) {
		t.Errorf("duplicate add: %v", err)
	}
	for _, bad := range []remote.HostConfig{
		{Name: ""}, {Name: "-x"}, {Name: "a b"}, {Name: "local"}, {Name: "auto"},
		{Name: "x", Address: "a;b"}, {Name: "x", User: "-o"}, {Name: "x", Port: 70000},
		{Name: "x", ProxyJump: "a,,b"}, {Name: "x", Labels: []string{"a b"}}, {Name: "x", Key: "-i"},
	} {
		if err := r.Add(bad); err == nil {
			t.Errorf("Add(%+v) accepted", bad)
		}
	}
	got, _ := r.Select("web")
	if strings.Join(got, ",") != "web1,web2,web3" {
		t.Errorf("after add: %v", got)
	}
	tg, err := r.Resolve(context.Background(), "web3", "p")
	if err != nil || endpointOf(tg).Address() != "10.0.0.9:2222" {
		t.Errorf("web3: %+v %v", endpointOf(tg), err)
	}
	var names []string
	for _, ep := range r.List() {
		names = append(names, ep.Name+"/"+ep.Source)
	}
	if want := "web1/config,web2/config,db1/config,web3/config,fromssh/ssh_config"; strings.Join(names, ",") != want {
		t.Errorf("List = %v, want %s", names, want)
	}
	if err := r.Remove("web3"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove("web3"); !errors.Is(err, remote.ErrHostNotFound) {
		t.Errorf("second remove: %v", err)
	}
	if err := r.Remove("fromssh"); !errors.Is(err, remote.ErrHostNotFound) {
		t.Errorf("removing an ssh_config host: %v", err)
	}
	// web3 is now a plain name.
	tg, _ = r.Resolve(context.Background(), "web3", "p")
	if endpointOf(tg).Source != "direct" || endpointOf(tg).Host != "web3" {
		t.Errorf("after remove: %+v", endpointOf(tg))
	}
}

func TestRouterFanOut(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	var hosts []remote.HostConfig
	for i := range 3 {
		s := e.trustedServer(sshtest.Config{})
		hosts = append(hosts, remote.HostConfig{Name: fmt.Sprintf("web%d", i+1), Address: "127.0.0.1", Port: s.Port(), Labels: []string{"web"}})
	}
	down := e.server(sshtest.Config{})
	downAddr := down.Port()
	down.Close()
	hosts = append(hosts, remote.HostConfig{Name: "web4", Address: "127.0.0.1", Port: downAddr, Labels: []string{"web"}})
	unknown := e.server(sshtest.Config{}) // key not on file
	hosts = append(hosts, remote.HostConfig{Name: "db1", Address: "127.0.0.1", Port: unknown.Port(), Labels: []string{"db"}})
	r := e.router(func(c *remote.RouterConfig) { c.Hosts = hosts })

	res, err := r.FanOut(context.Background(), exec.FanOutRequest{
		Hosts:     []string{"local", "db1"},
		Selector:  "web",
		Principal: "alice",
		Command:   exec.Command{Shell: `echo "$(cat) $HOSTVAR"`, Env: map[string]string{"HOSTVAR": "x"}, Stdin: strings.NewReader("in"), Timeout: 20 * time.Second},
		Limit:     2,
	})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, fr := range res {
		order = append(order, fr.Host)
	}
	if want := "local,db1,web1,web2,web3,web4"; strings.Join(order, ",") != want {
		t.Fatalf("hosts %v, want %s", order, want)
	}
	for _, fr := range res {
		switch fr.Host {
		case "db1":
			if !errors.Is(fr.Err, remote.ErrHostKeyUnknown) {
				t.Errorf("db1: %v", fr.Err)
			}
		case "web4":
			var de *remote.DialError
			if !errors.As(fr.Err, &de) {
				t.Errorf("web4: %v", fr.Err)
			}
		default:
			if fr.Err != nil || string(fr.Result.Stdout.Data) != "in x\n" {
				t.Errorf("%s: %q %v", fr.Host, fr.Result.Stdout.Data, fr.Err)
			}
			if fr.Host != "local" && !strings.HasPrefix(fr.Route, "ssh("+fr.Host) {
				t.Errorf("%s: route %q", fr.Host, fr.Route)
			}
		}
	}

	if _, err := r.FanOut(context.Background(), exec.FanOutRequest{Selector: "nothing", Command: exec.Command{Shell: "true"}}); !errors.Is(err, remote.ErrNoHosts) {
		t.Errorf("empty fan-out: %v", err)
	}
	if _, err := r.FanOut(context.Background(), exec.FanOutRequest{Hosts: []string{"web1"}}); !errors.Is(err, exec.ErrNoCommand) {
		t.Errorf("no command: %v", err)
	}
}

func TestRouterFanOutConcurrencyLimit(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	var hosts []string
	for range 4 {
		s := e.trustedServer(sshtest.Config{})
		hosts = append(hosts, s.Addr())
	}
	r := e.router(nil)
	took := map[int]time.Duration{}
	for _, limit := range []int{4, 1, 4} { // the first round warms the connections
		start := time.Now()
		res, err := r.FanOut(context.Background(), exec.FanOutRequest{Hosts: hosts, Principal: "p", Limit: limit,
			Command: exec.Command{Shell: "sleep 0.3", Timeout: 10 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range res {
			if fr.Err != nil {
				t.Fatal(fr.Err)
			}
		}
		took[limit] = time.Since(start)
	}
	t.Logf("limit 1: %v, limit 4: %v", took[1], took[4])
	if took[1] < 1200*time.Millisecond {
		t.Errorf("limit 1 ran 4×300ms in %v: runs overlapped", took[1])
	}
	if took[4] > took[1]-500*time.Millisecond {
		t.Errorf("limit 4 took %v, limit 1 %v: not concurrent", took[4], took[1])
	}
}

func TestRouterAuto(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	a := e.trustedServer(sshtest.Config{})
	b := e.trustedServer(sshtest.Config{})
	tp, err := sshtest.NewTarpit()
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	hosts := []remote.HostConfig{
		{Name: "stuck", Address: "127.0.0.1", Port: tp.Port()},
		{Name: "a", Address: "127.0.0.1", Port: a.Port()},
		{Name: "b", Address: "127.0.0.1", Port: b.Port()},
	}
	r := e.router(func(c *remote.RouterConfig) { c.Hosts = hosts; c.ConnectTimeout = 500 * time.Millisecond })
	ctx := context.Background()
	tg, err := r.Resolve(ctx, "auto", "p")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Host != "a" && tg.Host != "b" {
		t.Fatalf("auto chose %q", tg.Host)
	}
	first := tg.Host
	// The active host is kept while it answers.
	for range 3 {
		tg, err = r.Resolve(ctx, "auto", "p")
		if err != nil || tg.Host != first {
			t.Fatalf("auto moved to %q (%v)", tg.Host, err)
		}
	}
	// When it goes away, the other one is chosen.
	if first == "a" {
		a.Close()
	} else {
		b.Close()
	}
	tg, err = r.Resolve(ctx, "auto", "p")
	if err != nil || tg.Host == first {
		t.Fatalf("after %s went away: %q %v", first, tg.Host, err)
	}
	res, err := tg.Runner.Run(ctx, exec.Command{Shell: "echo auto", Timeout: 10 * time.Second})
	if err != nil || string(res.Stdout.Data) != "auto\n" {
		t.Errorf("run: %q %v", res.Stdout.Data, err)
	}

	// No candidate answers: local if enabled, else an error.
	r2 := e.router(func(c *remote.RouterConfig) {
		c.Hosts = hosts[:1]
		c.ConnectTimeout = 300 * time.Millisecond
		c.AutoLocal = true
	})
	if tg, err := r2.Resolve(ctx, "auto", "p"); err != nil || !tg.Local {
		t.Errorf("fallback: %+v %v", tg, err)
	}
	r3 := e.router(func(c *remote.RouterConfig) { c.Hosts = hosts[:1]; c.ConnectTimeout = 300 * time.Millisecond })
	if _, err := r3.Resolve(ctx, "auto", "p"); !errors.Is(err, remote.ErrNoHostAvailable) || !strings.Contains(err.Error(), "stuck") {
		t.Errorf("no host: %v", err)
	}
}

func TestRouterTestAndDescribe(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	e.writeConfig(fmt.Sprintf("Host viassh\n  HostName 127.0.0.1\n  Port %d\n  ProxyCommand nc %%h %%p\n", s.Port()))
	key := e.home + "/.ssh/id_ed25519"
	r := e.router(func(c *remote.RouterConfig) {
		c.Hosts = []remote.HostConfig{
			{Name: "web1", Address: "127.0.0.1", Port: s.Port(), User: "deploy", Key: key},
			{Name: "jumped", Address: "10.0.0.9", ProxyJump: "web1"},
		}
	})
	ctx := context.Background()
	tr := r.Test(ctx, "web1", "p")
	if !tr.Reachable || tr.Err != nil || tr.Latency <= 0 || !strings.Contains(tr.HostKey, ssh.FingerprintSHA256(s.HostKey())) {
		t.Errorf("Test = %+v", tr)
	}
	if tr := r.Test(ctx, "local", "p"); !tr.Reachable || !tr.Local {
		t.Errorf("Test(local) = %+v", tr)
	}

	d, err := r.Describe(ctx, "web1", "p")
	if err != nil {
		t.Fatal(err)
	}
	wantCmd := fmt.Sprintf("ssh -p %d -i %s deploy@127.0.0.1", s.Port(), key)
	if d.SSHCommand != wantCmd || !d.Reachable || d.HostKeyPolicy != "strict" || len(d.KnownKeys) != 1 {
		t.Errorf("Describe = %+v\nwant command %q", d, wantCmd)
	}
	d, err = r.Describe(ctx, "viassh", "p")
	if err != nil {
		t.Fatal(err)
	}
	if d.SSHCommand != "ssh viassh" || !strings.Contains(strings.Join(d.Notes, " "), "ProxyCommand ignored") {
		t.Errorf("Describe(viassh) = %+v", d)
	}
	d, _ = r.Describe(ctx, "jumped", "p")
	if want := fmt.Sprintf("ssh -J deploy@127.0.0.1:%d tester@10.0.0.9", s.Port()); d.SSHCommand != want {
		t.Errorf("jumped command %q, want %q", d.SSHCommand, want)
	}
	d, _ = r.Describe(ctx, "local", "p")
	if !d.Local || d.SSHCommand != "" || !d.Reachable {
		t.Errorf("Describe(local) = %+v", d)
	}
	// An unknown host: the guide says how to trust it.
	u := e.server(sshtest.Config{})
	d, err = r.Describe(ctx, u.Addr(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if d.Reachable || !strings.Contains(d.Error, "not in known_hosts") || !strings.Contains(strings.Join(d.Notes, " "), "rigout hosts trust "+u.Addr()) {
		t.Errorf("Describe(unknown) = %+v", d)
	}
}

func TestRouterHostKeyThenTrust(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.server(sshtest.Config{HostKeys: []ssh.Signer{testKey(t, "ecdsa").Signer, testKey(t, "ed25519").Signer}})
	r := e.router(nil)
	ctx := context.Background()
	fp := ssh.FingerprintSHA256(testKey(t, "ecdsa").Public())
	if _, err := runErr(r, s.Addr(), "p", exec.Command{Shell: "true"}); !errors.Is(err, remote.ErrHostKeyUnknown) {
		t.Fatalf("before trust: %v", err)
	}
	notRecorded := func(when string) {
		t.Helper()
		if _, err := os.Stat(e.ownKnown); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: known_hosts was written (%v)", when, err)
		}
		if slices.Contains(e.eventKinds(), remote.HostKeyLearned) {
			t.Errorf("%s: events %v", when, e.eventKinds())
		}
	}

	// Step one reads the key and records nothing.
	hk, err := r.HostKey(ctx, s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	want := remote.TrustResult{Host: s.Addr(), Address: s.Addr(), KeyType: "ecdsa-sha2-nistp256", Fingerprint: fp, File: e.ownKnown}
	if !reflect.DeepEqual(hk, want) {
		t.Errorf("HostKey = %+v, want %+v", hk, want)
	}
	notRecorded("HostKey")

	// Trust refuses to record without a well-formed fingerprint, before
	// connecting.
	accepted := s.Accepted()
	for _, bad := range []string{"", "SHA256:", "MD5:16:27:ac:a5", fp[len("SHA256:"):]} {
		_, err := r.Trust(ctx, s.Addr(), bad)
		if !errors.Is(err, remote.ErrFingerprintRequired) {
			t.Errorf("Trust(%q) = %v, want ErrFingerprintRequired", bad, err)
		}
		if bad == "" && (err == nil || !strings.Contains(err.Error(), "HostKey") || !strings.Contains(err.Error(), "rigout hosts trust "+s.Addr()+" --expect SHA256:")) {
			t.Errorf("Trust without a fingerprint does not say what to do: %v", err)
		}
	}
	if s.Accepted() != accepted {
		t.Errorf("Trust without a fingerprint connected")
	}
	// A fingerprint the host does not show records nothing, and says
	// which key the host showed.
	tr, err := r.Trust(ctx, s.Addr(), "SHA256:nope")
	if !errors.Is(err, remote.ErrFingerprintMismatch) || tr.Fingerprint != fp || tr.Recorded {
		t.Errorf("wrong fingerprint: %+v %v", tr, err)
	}
	notRecorded("mismatch")

	// Step two, with the fingerprint HostKey showed.
	tr, err = r.Trust(ctx, s.Addr(), hk.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Recorded || tr.AlreadyKnown || tr.File != e.ownKnown || tr.KeyType != "ecdsa-sha2-nistp256" || tr.Fingerprint != fp {
		t.Errorf("Trust = %+v", tr)
	}
	if s.AuthAttempts() != 0 {
		t.Errorf("HostKey or Trust tried to log in: %d", s.AuthAttempts())
	}
	data, _ := os.ReadFile(e.ownKnown)
	if !strings.HasPrefix(string(data), "|1|") || strings.Count(string(data), "\n") != 1 {
		t.Errorf("known_hosts %q", data)
	}
	if kinds := e.eventKinds(); len(kinds) < 2 || kinds[len(kinds)-1] != remote.HostKeyLearned {
		t.Errorf("events %v", kinds)
	}
	// Now the router connects (it reloads the file), and both steps say
	// the key is known.
	if _, err := runErr(r, s.Addr(), "p", exec.Command{Shell: "true"}); err != nil {
		t.Errorf("after trust: %v", err)
	}
	if hk, err := r.HostKey(ctx, s.Addr()); err != nil || !hk.AlreadyKnown || hk.Changed {
		t.Errorf("HostKey after trust: %+v %v", hk, err)
	}
	tr, err = r.Trust(ctx, s.Addr(), fp)
	if err != nil || !tr.AlreadyKnown || tr.Recorded {
		t.Errorf("second trust: %+v %v", tr, err)
	}
	if again, _ := os.ReadFile(e.ownKnown); string(again) != string(data) {
		t.Errorf("second trust wrote %q", again)
	}

	// A changed key: HostKey shows it with the refusal, and Trust does not
	// record it over the old one, whichever fingerprint it is given.
	s2 := e.server(sshtest.Config{HostKeys: []ssh.Signer{testKey(t, "ed25519-b").Signer}})
	old := testKey(t, "ed25519").Public()
	e.appendKnown(knownLine(s2.Addr(), old))
	newFP := ssh.FingerprintSHA256(s2.HostKey())
	hk, err = r.HostKey(ctx, s2.Addr())
	var he *remote.HostKeyError
	if !errors.As(err, &he) || !errors.Is(err, remote.ErrHostKeyChanged) || !hk.Changed || hk.AlreadyKnown || hk.Fingerprint != newFP ||
		len(hk.Known) != 1 || hk.Known[0].Fingerprint != ssh.FingerprintSHA256(old) {
		t.Errorf("HostKey over a changed key: %+v %v", hk, err)
	}
	if _, err := r.Trust(ctx, s2.Addr(), newFP); !errors.Is(err, remote.ErrHostKeyChanged) {
		t.Errorf("trust over a changed key: %v", err)
	}
	if _, err := r.Trust(ctx, s2.Addr(), ssh.FingerprintSHA256(old)); !errors.Is(err, remote.ErrFingerprintMismatch) {
		t.Errorf("trust of the old key: %v", err)
	}
	if again, _ := os.ReadFile(e.ownKnown); string(again) != string(data) {
		t.Errorf("a changed key was recorded: %q", again)
	}

	// This machine has no host key.
	if _, err := r.HostKey(ctx, "local"); err == nil {
		t.Errorf("HostKey(local) succeeded")
	}
	if _, err := r.Trust(ctx, "local", fp); err == nil {
		t.Errorf("trusted local")
	}
}

func TestRouterHostKeyWithoutOwnFile(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.server(sshtest.Config{})
	r := e.router(func(c *remote.RouterConfig) { c.KnownHostsFile = "" })
	ctx := context.Background()
	hk, err := r.HostKey(ctx, s.Addr())
	if err != nil || hk.Fingerprint != ssh.FingerprintSHA256(s.HostKey()) || hk.File != "" {
		t.Errorf("HostKey = %+v %v", hk, err)
	}
	if _, err := r.Trust(ctx, s.Addr(), hk.Fingerprint); err == nil || !strings.Contains(err.Error(), "KnownHostsFile") {
		t.Errorf("Trust without a file to record in: %v", err)
	}
}
