package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rigout/rigout/exec/remote/sshtest"
)

// hostsEnv points HOME at a temp directory with a user key, and returns
// the state directory and the user's known_hosts path.
func hostsEnv(t *testing.T) (home, state, known string, key *sshtest.Key) {
	t.Helper()
	dir := t.TempDir()
	home = filepath.Join(dir, "home")
	state = filepath.Join(dir, "state")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	if err := key.Write(filepath.Join(home, ".ssh", "id_ed25519"), ""); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("RIGOUT_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "")
	known = filepath.Join(home, ".ssh", "known_hosts")
	return home, state, known, key
}

func hosts(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runHosts(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHostsUsage(t *testing.T) {
	hostsEnv(t)
	for _, args := range [][]string{
		nil,
		{"bogus"},
		{"trust"},
		{"test"},
		{"trust", "a", "b"},
		{"list", "extra"},
		{"list", "--no-such-flag"},
		{"test", "web1", "--expect", "SHA256:x"},
	} {
		if code, _, errOut := hosts(t, args...); code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
	if code, out, _ := hosts(t, "help"); code != 0 || !strings.Contains(out, "rigout hosts trust NAME") || !strings.Contains(out, "-state-dir") {
		t.Errorf("help: %d %q", code, out)
	}
}

func TestHostsTrustTestList(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
	home, state, known, key := hostsEnv(t)
	s, err := sshtest.NewServer(sshtest.Config{AuthorizedKeys: []ssh.PublicKey{key.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fp := ssh.FingerprintSHA256(s.HostKey())

	// Unknown: test fails and says how to trust it.
	code, _, errOut := hosts(t, "test", s.Addr(), "--state-dir", state)
	if code != 1 || !strings.Contains(errOut, "rigout hosts trust "+s.Addr()) || !strings.Contains(errOut, fp) {
		t.Fatalf("test before trust: %d %q", code, errOut)
	}
	if s.AuthAttempts() != 0 {
		t.Errorf("auth attempts %d", s.AuthAttempts())
	}

	// A wrong --expect records nothing, and shows the key the host offers.
	code, out, errOut := hosts(t, "trust", s.Addr(), "--state-dir", state, "--expect", "SHA256:wrong")
	if code != 1 || !strings.Contains(out, fp) || !strings.Contains(errOut, "Nothing was recorded") {
		t.Errorf("trust --expect wrong: %d %q %q", code, out, errOut)
	}
	// Something that is not a SHA256 fingerprint is refused before
	// connecting.
	accepted := s.Accepted()
	code, out, errOut = hosts(t, "trust", s.Addr(), "--state-dir", state, "--expect", "MD5:16:27:ac:a5")
	if code != 1 || out != "" || !strings.Contains(errOut, "SHA256:") || s.Accepted() != accepted {
		t.Errorf("trust --expect MD5: %d %q %q (connections %d)", code, out, errOut, s.Accepted()-accepted)
	}
	if _, err := os.Stat(filepath.Join(state, "known_hosts")); err == nil {
		t.Errorf("recorded despite --expect")
	}

	// Without --expect: the key is shown, nothing is recorded, and the
	// command that records it once checked is named. Flags go before or
	// after the name.
	code, out, errOut = hosts(t, "trust", "--state-dir", state, s.Addr())
	if code != 1 || strings.Count(out, fp) != 1 || !strings.Contains(out, "offers ssh-ed25519 key "+fp) ||
		!strings.Contains(errOut, "Nothing was recorded") || !strings.Contains(errOut, "--expect "+fp) {
		t.Fatalf("trust without --expect: %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(state, "known_hosts")); err == nil {
		t.Fatal("trust without --expect recorded the key")
	}
	code, out, errOut = hosts(t, "trust", "--state-dir", state, s.Addr(), "--expect", fp)
	if code != 0 || !strings.Contains(out, "offers ssh-ed25519 key "+fp) || !strings.Contains(out, "Recorded") || !strings.Contains(out, "ssh-keygen -R") {
		t.Fatalf("trust --expect: %d %q %q", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(state, "known_hosts"))
	if err != nil || !strings.HasPrefix(string(data), "|1|") || strings.Count(string(data), "\n") != 1 {
		t.Fatalf("known_hosts %q %v", data, err)
	}
	if fi, _ := os.Stat(state); fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode %v", fi.Mode().Perm())
	}
	code, out, _ = hosts(t, "trust", s.Addr(), "--state-dir", state, "--expect", fp)
	if code != 0 || !strings.Contains(out, "Already trusted") {
		t.Errorf("second trust: %d %q", code, out)
	}
	code, out, _ = hosts(t, "trust", s.Addr(), "--state-dir", state)
	if code != 0 || !strings.Contains(out, "Already trusted") || strings.Contains(out, "Recorded") {
		t.Errorf("second trust without --expect: %d %q", code, out)
	}
	if again, _ := os.ReadFile(filepath.Join(state, "known_hosts")); string(again) != string(data) {
		t.Errorf("a second trust wrote %q", again)
	}

	// A host whose key changed is refused, with or without --expect.
	s2, err := sshtest.NewServer(sshtest.Config{AuthorizedKeys: []ssh.PublicKey{key.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	fp2 := ssh.FingerprintSHA256(s2.HostKey())
	if err := os.WriteFile(known, []byte(knownhosts.Line([]string{s2.Addr()}, s.HostKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"trust", s2.Addr()}, {"trust", s2.Addr(), "--expect", fp2}} {
		code, out, errOut = hosts(t, append(args, "--state-dir", state, "--known-hosts", known)...)
		if code != 1 || !strings.Contains(out, fp2) || !strings.Contains(errOut, "HOST KEY CHANGED") || strings.Contains(out, "Recorded") {
			t.Errorf("%q over a changed key: %d %q %q", args, code, out, errOut)
		}
	}
	if again, _ := os.ReadFile(filepath.Join(state, "known_hosts")); string(again) != string(data) {
		t.Errorf("a changed key was recorded: %q", again)
	}
	os.Remove(known)
	if s2.AuthAttempts() != 0 || s.AuthAttempts() != 0 {
		t.Errorf("trust tried to log in: %d, %d", s.AuthAttempts(), s2.AuthAttempts())
	}

	// Now it answers.
	code, out, errOut = hosts(t, "test", s.Addr(), "--state-dir", state, "--known-hosts", known)
	if code != 0 || !strings.Contains(out, "reachable via ssh(") || !strings.Contains(out, fp) || !strings.Contains(out, fmt.Sprintf("-p %d root@127.0.0.1", s.Port())) && !strings.Contains(out, fmt.Sprintf("-p %d ", s.Port())) {
		t.Errorf("test after trust: %d %q %q", code, out, errOut)
	}
	if code, out, _ := hosts(t, "test", "local"); code != 0 || !strings.Contains(out, "this machine") {
		t.Errorf("test local: %d %q", code, out)
	}

	// list shows ssh_config aliases.
	cfg := fmt.Sprintf("Host box\n  HostName 127.0.0.1\n  Port %d\nHost *.lan\n  User x\n", s.Port())
	os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(cfg), 0o600)
	code, out, _ = hosts(t, "list", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "box") || !strings.Contains(out, s.Addr()) || strings.Contains(out, "*.lan") {
		t.Errorf("list: %d %q", code, out)
	}
	code, out, _ = hosts(t, "test", "box", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "interactive: ssh ") || !strings.HasSuffix(strings.TrimSpace(out), " box") || !strings.Contains(out, "helper: none: no rigout helper shipped") {
		t.Errorf("test box: %d %q", code, out)
	}
	// An empty config lists nothing, helpfully.
	os.Remove(filepath.Join(home, ".ssh", "config"))
	if code, out, _ := hosts(t, "list", "--state-dir", state); code != 0 || !strings.Contains(out, "No hosts") {
		t.Errorf("empty list: %d %q", code, out)
	}
	// A bad host name is refused.
	if code, _, errOut := hosts(t, "trust", "--state-dir", state, "--", "-oProxyCommand=id"); code != 1 || !strings.Contains(errOut, "invalid host") {
		t.Errorf("bad name: %d %q", code, errOut)
	}
	if code, _, _ := hosts(t, "trust", "-oProxyCommand=id"); code != 2 {
		t.Errorf("flag-like name without --: %d", code)
	}
}
