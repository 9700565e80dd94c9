package remote_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

func TestSSHRunBasics(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	remoteHome := t.TempDir()
	s := e.trustedServer(sshtest.Config{Env: append(os.Environ(), "HOME="+remoteHome)})
	r := e.router(nil)
	dir := t.TempDir()
	sandbox := sentinelDir(t)
	homeSub := filepath.Join(remoteHome, "test dir $x")
	if err := os.Mkdir(homeSub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		cmd        exec.Command
		wantOut    string
		wantErrOut string
		wantCode   int
	}{
		{"echo", exec.Command{Shell: "echo hi"}, "hi\n", "", 0},
		{"exit code", exec.Command{Shell: "echo oops >&2; exit 3"}, "", "oops\n", 3},
		{"argv is not a shell", exec.Command{Argv: []string{"printf", "%s", "$HOME; rm x"}, Dir: sandbox}, "$HOME; rm x", "", 0},
		{"argv exit code", exec.Command{Argv: []string{"sh", "-c", "exit 7"}}, "", "", 7},
		{"dir", exec.Command{Shell: "pwd", Dir: dir}, dir + "\n", "", 0},
		{"home dir", exec.Command{Shell: "pwd", Dir: "~"}, remoteHome + "\n", "", 0},
		{"home subdir", exec.Command{Shell: "pwd", Dir: "~/" + filepath.Base(homeSub)}, homeSub + "\n", "", 0},
		{"env", exec.Command{Shell: `echo "$EXTRA"`, Env: map[string]string{"EXTRA": "a b"}}, "a b\n", "", 0},
		{"env argv", exec.Command{Argv: []string{"sh", "-c", `printf %s "$X"`}, Env: map[string]string{"X": "it's $y"}}, "it's $y", "", 0},
		{"stdin", exec.Command{Argv: []string{"cat"}, Stdin: strings.NewReader("fed")}, "fed", "", 0},
		{"no stdin reads empty", exec.Command{Argv: []string{"cat"}}, "", "", 0},
		{"bash features", exec.Command{Shell: `a=(x y); echo ${#a[@]}`}, "2\n", "", 0},
		{"missing dir", exec.Command{Shell: "true", Dir: filepath.Join(dir, "nope")}, "", "", 1},
		{"missing program", exec.Command{Argv: []string{"no-such-program-rigout"}}, "", "", 127},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runOn(t, r, addr(s), tt.cmd)
			if got := string(res.Stdout.Data); got != tt.wantOut {
				t.Errorf("stdout = %q, want %q", got, tt.wantOut)
			}
			if tt.wantErrOut != "" || tt.wantCode == 0 {
				if got := string(res.Stderr.Data); got != tt.wantErrOut {
					t.Errorf("stderr = %q, want %q", got, tt.wantErrOut)
				}
			}
			if res.ExitCode != tt.wantCode {
				t.Errorf("exit = %d, want %d (stderr %q)", res.ExitCode, tt.wantCode, res.Stderr.Data)
			}
			if want := "ssh(" + addr(s) + " → " + addr(s) + ")"; res.Route != want {
				t.Errorf("route = %q, want %q", res.Route, want)
			}
		})
	}
	if s.Accepted() != 1 {
		t.Errorf("accepted %d connections, want 1", s.Accepted())
	}
	checkSentinel(t, sandbox)
}

// weird holds strings that must arrive byte-exact. Run commands that carry
// them in a sentinelDir: mangled quoting would run "redirect > x".
var weird = []string{
	"it's",
	`say "hi"`,
	"two  spaces",
	"$HOME $(id) ${PATH}",
	"`id`",
	"line1\nline2",
	"tab\there",
	"back\\slash",
	"glob * ? [a]",
	"semi; amp & pipe | redirect > x",
	"-n",
	"",
	"ünïcødé ✓",
	"trailing newline\n",
	"!bang !!",
	"\r\x01\x7f",
	"'",
	"\"",
	"~",
	"a=b",
}

func TestSSHQuotingByteExact(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(nil)
	sandbox := sentinelDir(t)
	defer checkSentinel(t, sandbox)

	// argv: printf prints each argument followed by a NUL.
	argv := append([]string{"printf", `%s\0`}, weird...)
	res := runOn(t, r, addr(s), exec.Command{Argv: argv, Dir: sandbox})
	got := strings.Split(strings.TrimSuffix(string(res.Stdout.Data), "\x00"), "\x00")
	if len(got) != len(weird) {
		t.Fatalf("got %d args, want %d: %q (stderr %q)", len(got), len(weird), got, res.Stderr.Data)
	}
	for i := range weird {
		if got[i] != weird[i] {
			t.Errorf("arg %d = %q, want %q", i, got[i], weird[i])
		}
	}

	// A shell command holding every one of them in single quotes would be
	// hand-quoting; instead pass each through the environment and read it.
	env := map[string]string{}
	var sh strings.Builder
	for i, w := range weird {
		k := fmt.Sprintf("W%d", i)
		env[k] = w
		fmt.Fprintf(&sh, `printf '%%s\0' "$%s"; `, k)
	}
	res = runOn(t, r, addr(s), exec.Command{Shell: sh.String(), Env: env, Dir: sandbox})
	got = strings.Split(strings.TrimSuffix(string(res.Stdout.Data), "\x00"), "\x00")
	for i := range weird {
		if i >= len(got) || got[i] != weird[i] {
			t.Errorf("env %d: got %q, want %q", i, got, weird[i])
			break
		}
	}

	// The shell command text itself arrives byte-exact.
	script := "printf '%s' \"$0\" >/dev/null; cat <<'EOF'\n$HOME `id` \"q\" 'q'\n\ttab\nEOF\n"
	res = runOn(t, r, addr(s), exec.Command{Shell: script})
	if want := "$HOME `id` \"q\" 'q'\n\ttab\n"; string(res.Stdout.Data) != want {
		t.Errorf("heredoc = %q, want %q (stderr %q)", res.Stdout.Data, want, res.Stderr.Data)
	}

	// Directories with the same characters (those a file name can hold).
	for _, name := range []string{"it's", `dq"x`, "sp ace", "$HOME", "`id`", "nl\nx", "tab\tx", "semi;amp&", "-dash", "ünï"} {
		d := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		res := runOn(t, r, addr(s), exec.Command{Argv: []string{"pwd"}, Dir: d})
		if got := strings.TrimSuffix(string(res.Stdout.Data), "\n"); got != d {
			t.Errorf("pwd in %q = %q (stderr %q)", d, got, res.Stderr.Data)
		}
	}
}

func TestSSHOutputCapMatchesLocal(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(nil)
	cmd := exec.Command{
		Shell:     `i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done; echo err-tail >&2`,
		MaxOutput: 1000,
	}
	remote := runOn(t, r, addr(s), cmd)
	var l exec.Local
	local, err := l.Run(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if remote.Stdout.Total != local.Stdout.Total || remote.Stdout.Dropped != local.Stdout.Dropped ||
		remote.Stdout.Head != local.Stdout.Head || string(remote.Stdout.Data) != string(local.Stdout.Data) {
		t.Errorf("remote stdout %+v differs from local %+v", summary(remote.Stdout), summary(local.Stdout))
	}
	if len(remote.Stdout.Data) > 1000 || !remote.Truncated() {
		t.Errorf("kept %d bytes, truncated=%v", len(remote.Stdout.Data), remote.Truncated())
	}
	if !strings.HasSuffix(string(remote.Stdout.Data), "line 19999\n") || !strings.HasPrefix(string(remote.Stdout.Data), "line 0\n") {
		t.Errorf("head/tail lost: %q…%q", remote.Stdout.Data[:20], remote.Stdout.Data[len(remote.Stdout.Data)-20:])
	}
	if string(remote.Stderr.Data) != "err-tail\n" {
		t.Errorf("stderr = %q", remote.Stderr.Data)
	}
}

func summary(o exec.Output) string {
	return fmt.Sprintf("total=%d dropped=%d head=%d len=%d", o.Total, o.Dropped, o.Head, len(o.Data))
}

func TestSSHOnOutputStreams(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(nil)
	var mu sync.Mutex
	var seen strings.Builder
	res := runOn(t, r, addr(s), exec.Command{Shell: "echo a; echo b >&2", OnOutput: func(st exec.Stream, p []byte) {
		mu.Lock()
		fmt.Fprintf(&seen, "%s:%s", st, p)
		mu.Unlock()
	}})
	if res.ExitCode != 0 {
		t.Fatal(res.ExitCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(seen.String(), "stdout:a\n") || !strings.Contains(seen.String(), "stderr:b\n") {
		t.Errorf("OnOutput saw %q", seen.String())
	}
}

func TestSSHTimeoutSignalsRemote(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(func(c *remote.RouterConfig) { c.Grace = 300 * time.Millisecond })

	start := time.Now()
	res := runOn(t, r, addr(s), exec.Command{Argv: []string{"sleep", "30"}, Timeout: 300 * time.Millisecond})
	if !res.TimedOut || res.Signal != "SIGTERM" || res.ExitCode != -1 {
		t.Errorf("result %+v, want timed out by SIGTERM", res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if sig := s.Signals(); len(sig) == 0 || sig[0] != "TERM" {
		t.Errorf("server got signals %v, want TERM", sig)
	}

	// A command that ignores TERM gets KILL after the grace period.
	res = runOn(t, r, addr(s), exec.Command{Shell: `trap '' TERM; sleep 30`, Timeout: 300 * time.Millisecond})
	if !res.TimedOut || res.Signal != "SIGKILL" {
		t.Errorf("result %+v, want timed out by SIGKILL", res)
	}
	if sig := s.Signals(); len(sig) < 3 || sig[1] != "TERM" || sig[2] != "KILL" {
		t.Errorf("server got signals %v, want TERM then KILL", sig)
	}

	// A compound command's background children are ended too.
	res = runOn(t, r, addr(s), exec.Command{Shell: "sleep 417.25 & sleep 418.25; wait", Timeout: 300 * time.Millisecond})
	if !res.TimedOut {
		t.Errorf("compound: %+v", res)
	}
	if !eventually(3*time.Second, func() bool { return !processWithArg("417.25") && !processWithArg("418.25") }) {
		t.Errorf("remote processes survived the timeout")
	}

	// Cancelling the context does the same and says so.
	ctx, cancel := context.WithCancel(context.Background())
	tg, err := r.Resolve(ctx, addr(s), "alice")
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err = tg.Runner.Run(ctx, exec.Command{Argv: []string{"sleep", "30"}})
	if err != nil || !res.Canceled || res.TimedOut {
		t.Errorf("cancel: %+v, %v", res, err)
	}
	// The connection is still good.
	if res := runOn(t, r, addr(s), exec.Command{Shell: "echo ok"}); string(res.Stdout.Data) != "ok\n" {
		t.Errorf("after cancel: %q", res.Stdout.Data)
	}
	if s.Accepted() != 1 {
		t.Errorf("accepted %d, want 1", s.Accepted())
	}
}

func TestSSHChangedHostKeyRefusedBeforeAuth(t *testing.T) {
	for _, policy := range []remote.HostKeyPolicy{remote.HostKeyStrict, remote.HostKeyAcceptNew} {
		t.Run(policy.String(), func(t *testing.T) {
			leakCheck(t)
			e := newSSHEnv(t)
			s := e.server(sshtest.Config{HostKeys: []ssh.Signer{testKey(t, "ed25519").Signer}})
			// known_hosts holds another ed25519 key for the address.
			old := testKey(t, "ed25519-b")
			e.appendKnown(knownLine(s.Addr(), old.Public()))
			r := e.router(func(c *remote.RouterConfig) { c.HostKeyPolicy = policy })
			_, err := runErr(r, addr(s), "alice", exec.Command{Shell: "echo pwned"})
			if !errors.Is(err, remote.ErrHostKeyChanged) {
				t.Fatalf("err = %v, want ErrHostKeyChanged", err)
			}
			var hk *remote.HostKeyError
			if !errors.As(err, &hk) {
				t.Fatalf("not a HostKeyError: %T", err)
			}
			var de *remote.DialError
			if !errors.As(err, &de) {
				t.Errorf("not a DialError: %T", err)
			}
			newFP := ssh.FingerprintSHA256(s.HostKey())
			oldFP := ssh.FingerprintSHA256(old.Public())
			msg := err.Error()
			for _, want := range []string{newFP, oldFP, e.userKnown + ":1", "ssh-keygen -R", "rigout hosts trust", s.Addr()} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q: %s", want, msg)
				}
			}
			if hk.Fingerprint != newFP || len(hk.Known) != 1 || hk.Known[0].Fingerprint != oldFP {
				t.Errorf("HostKeyError fields: %+v", hk)
			}
			if n := s.AuthAttempts(); n != 0 {
				t.Errorf("server saw %d userauth requests, want 0", n)
			}
			if n := s.Execs(); n != 0 {
				t.Errorf("server ran %d commands", n)
			}
			if kinds := e.eventKinds(); len(kinds) != 1 || kinds[0] != remote.HostKeyMismatch {
				t.Errorf("events %v, want [mismatch]", kinds)
			}
			if _, err := os.Stat(e.ownKnown); err == nil {
				t.Errorf("rigout's known_hosts was written")
			}
		})
	}
}

func knownLine(addr string, key ssh.PublicKey) string {
	return "[" + strings.Replace(addr, ":", "]:", 1) + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
}

func TestSSHUnknownHostStrict(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.server(sshtest.Config{})
	r := e.router(nil)
	_, err := runErr(r, addr(s), "alice", exec.Command{Shell: "true"})
	if !errors.Is(err, remote.ErrHostKeyUnknown) {
		t.Fatalf("err = %v, want ErrHostKeyUnknown", err)
	}
	msg := err.Error()
	for _, want := range []string{ssh.FingerprintSHA256(s.HostKey()), "rigout hosts trust " + s.Addr()} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if s.AuthAttempts() != 0 {
		t.Errorf("server saw %d userauth requests", s.AuthAttempts())
	}
	if kinds := e.eventKinds(); len(kinds) != 1 || kinds[0] != remote.HostKeyUnknownRefused {
		t.Errorf("events %v", kinds)
	}
	if _, err := os.Stat(e.ownKnown); err == nil {
		t.Errorf("strict mode wrote known_hosts")
	}
}

func TestSSHUnknownHostAcceptNew(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.server(sshtest.Config{HostKeys: []ssh.Signer{testKey(t, "ed25519").Signer}})
	r := e.router(func(c *remote.RouterConfig) { c.HostKeyPolicy = remote.HostKeyAcceptNew })
	if res := runOn(t, r, addr(s), exec.Command{Shell: "echo ok"}); string(res.Stdout.Data) != "ok\n" {
		t.Fatalf("stdout %q", res.Stdout.Data)
	}
	data, err := os.ReadFile(e.ownKnown)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "|1|") || strings.Contains(lines[0], "127.0.0.1") {
		t.Errorf("known_hosts = %q, want one hashed line", data)
	}
	if fi, _ := os.Stat(e.ownKnown); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	e.mu.Lock()
	evs := append([]remote.HostKeyEvent(nil), e.events...)
	e.mu.Unlock()
	if len(evs) != 1 || evs[0].Kind != remote.HostKeyLearned || evs[0].Fingerprint != ssh.FingerprintSHA256(s.HostKey()) ||
		evs[0].File != e.ownKnown || evs[0].Principal != "alice" || evs[0].Kind.String() != "ssh.hostkey.learned" {
		t.Errorf("events %+v", evs)
	}

	// Another principal (new connection) finds it on file: no second line.
	if _, err := runErr(r, addr(s), "bob", exec.Command{Shell: "true"}); err != nil {
		t.Fatal(err)
	}
	if data2, _ := os.ReadFile(e.ownKnown); string(data2) != string(data) {
		t.Errorf("known_hosts changed: %q", data2)
	}

	// A different server on the same address is refused, as changed.
	hostPort := s.Addr()
	s.Close()
	r.Close()
	s2, err := sshtest.NewServer(sshtest.Config{Addr: hostPort, HostKeys: []ssh.Signer{testKey(t, "ed25519-b").Signer}})
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", hostPort, err)
	}
	defer s2.Close()
	r2 := e.router(func(c *remote.RouterConfig) { c.HostKeyPolicy = remote.HostKeyAcceptNew })
	_, err = runErr(r2, hostPort, "alice", exec.Command{Shell: "true"})
	if !errors.Is(err, remote.ErrHostKeyChanged) {
		t.Errorf("err = %v, want ErrHostKeyChanged", err)
	}
	if s2.AuthAttempts() != 0 {
		t.Errorf("auth attempts %d", s2.AuthAttempts())
	}
}

func TestSSHHostKeyTypeMatrix(t *testing.T) {
	leakCheck(t)
	kinds := []string{"ed25519", "ecdsa", "rsa"}
	for _, known := range kinds {
		for _, first := range kinds {
			t.Run("known="+known+"/server-prefers="+first, func(t *testing.T) {
				e := newSSHEnv(t)
				// The server offers all three; the preferred one first.
				keys := []ssh.Signer{testKey(t, first).Signer}
				for _, k := range kinds {
					if k != first {
						keys = append(keys, testKey(t, k).Signer)
					}
				}
				s := e.server(sshtest.Config{HostKeys: keys})
				e.appendKnown(knownLine(s.Addr(), testKey(t, known).Public()))
				r := e.router(nil)
				res, err := runErr(r, addr(s), "alice", exec.Command{Shell: "echo ok"})
				if err != nil {
					t.Fatalf("false mismatch: %v", err)
				}
				if string(res.Stdout.Data) != "ok\n" {
					t.Errorf("stdout %q", res.Stdout.Data)
				}
				tr := r.Test(context.Background(), addr(s), "alice")
				if !strings.HasSuffix(tr.HostKey, ssh.FingerprintSHA256(testKey(t, known).Public())) {
					t.Errorf("negotiated %s, want the %s key", tr.HostKey, known)
				}
			})
		}
	}
}

func TestSSHCertAuthorityAndRevoked(t *testing.T) {
	leakCheck(t)
	ca := testKey(t, "ed25519-c")
	hostKey := testKey(t, "ed25519")
	now := time.Now()
	cert := func(principals []string, before time.Time) ssh.Signer {
		c := &ssh.Certificate{
			Key: hostKey.Public(), CertType: ssh.HostCert, KeyId: "host",
			ValidPrincipals: principals,
			ValidAfter:      uint64(now.Add(-time.Hour).Unix()), ValidBefore: uint64(before.Unix()),
		}
		if err := c.SignCert(rand.Reader, ca.Signer); err != nil {
			t.Fatal(err)
		}
		s, err := ssh.NewCertSigner(c, hostKey.Signer)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	caLine := func(port int) string {
		return fmt.Sprintf("@cert-authority [127.0.0.1]:%d %s", port, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ca.Public()))))
	}
	tests := []struct {
		name    string
		key     ssh.Signer
		extra   string
		wantErr error
	}{
		{"valid", cert([]string{"127.0.0.1"}, now.Add(time.Hour)), "", nil},
		{"expired", cert([]string{"127.0.0.1"}, now.Add(-time.Minute)), "", remote.ErrHostCertInvalid},
		{"wrong principal", cert([]string{"db.example.com"}, now.Add(time.Hour)), "", remote.ErrHostCertInvalid},
		{"revoked CA", cert([]string{"127.0.0.1"}, now.Add(time.Hour)), "@revoked * " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ca.Public()))), remote.ErrHostKeyRevoked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newSSHEnv(t)
			s := e.server(sshtest.Config{HostKeys: []ssh.Signer{tt.key}})
			e.appendKnown(caLine(s.Port()))
			if tt.extra != "" {
				e.appendKnown(tt.extra)
			}
			r := e.router(nil)
			_, err := runErr(r, addr(s), "alice", exec.Command{Shell: "true"})
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if s.AuthAttempts() != 0 {
				t.Errorf("auth attempts %d", s.AuthAttempts())
			}
		})
	}

	t.Run("revoked plain key", func(t *testing.T) {
		e := newSSHEnv(t)
		s := e.server(sshtest.Config{HostKeys: []ssh.Signer{hostKey.Signer}})
		e.appendKnown(s.KnownHostsLine())
		e.appendKnown("@revoked * " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostKey.Public()))))
		r := e.router(func(c *remote.RouterConfig) { c.HostKeyPolicy = remote.HostKeyAcceptNew })
		_, err := runErr(r, addr(s), "alice", exec.Command{Shell: "true"})
		if !errors.Is(err, remote.ErrHostKeyRevoked) {
			t.Fatalf("err = %v, want ErrHostKeyRevoked", err)
		}
	})
}

func TestSSHInsecureIgnoreHostKey(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.server(sshtest.Config{HostKeys: []ssh.Signer{testKey(t, "ed25519").Signer}})
	e.appendKnown(knownLine(s.Addr(), testKey(t, "ed25519-b").Public()))
	r := e.router(func(c *remote.RouterConfig) { c.HostKeyPolicy = remote.HostKeyInsecureIgnore })
	if _, err := runErr(r, addr(s), "alice", exec.Command{Shell: "true"}); err != nil {
		t.Fatal(err)
	}
	kinds := e.eventKinds()
	if len(kinds) != 2 || kinds[0] != remote.HostKeyMismatch || kinds[1] != remote.HostKeyIgnored {
		t.Errorf("events %v, want mismatch then ignored", kinds)
	}
}

func TestSSHNoPolicyIsAnError(t *testing.T) {
	_, err := remote.NewRouter(remote.RouterConfig{HomeDir: t.TempDir()})
	if !errors.Is(err, remote.ErrNoHostKeyPolicy) {
		t.Errorf("err = %v, want ErrNoHostKeyPolicy", err)
	}
	_, err = remote.NewRouter(remote.RouterConfig{HomeDir: t.TempDir(), HostKeyPolicy: remote.HostKeyAcceptNew})
	if err == nil {
		t.Errorf("accept-new without a known_hosts file to write was accepted")
	}
}

func TestSSHSilentServerFailsWithinConnectTimeout(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	tp, err := sshtest.NewTarpit()
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	r := e.router(func(c *remote.RouterConfig) { c.ConnectTimeout = 500 * time.Millisecond })
	start := time.Now()
	_, err = runErr(r, tp.Addr(), "alice", exec.Command{Shell: "true"})
	d := time.Since(start)
	if !errors.Is(err, remote.ErrConnectTimeout) {
		t.Fatalf("err = %v, want ErrConnectTimeout", err)
	}
	var de *remote.DialError
	if !errors.As(err, &de) || de.Address != tp.Addr() {
		t.Errorf("err %T %v", err, err)
	}
	if d < 400*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("failed after %v, want about 500ms", d)
	}
	if tp.Accepted() != 1 {
		t.Errorf("tarpit accepted %d", tp.Accepted())
	}
}

func TestSSHClosedPortFailsFast(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.server(sshtest.Config{})
	dead := s.Addr()
	s.Close()
	r := e.router(nil)
	start := time.Now()
	_, err := runErr(r, dead, "alice", exec.Command{Shell: "true"})
	var de *remote.DialError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestSSHFrozenPeerDetectedByKeepalive(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(func(c *remote.RouterConfig) {
		c.KeepaliveInterval = 100 * time.Millisecond
		c.KeepaliveCountMax = 3
	})
	var out strings.Builder
	var mu sync.Mutex
	done := make(chan struct{})
	var res exec.Result
	var err error
	go func() {
		defer close(done)
		res, err = runErr(r, addr(s), "alice", exec.Command{Shell: "echo started; sleep 20", OnOutput: func(_ exec.Stream, p []byte) {
			mu.Lock()
			out.Write(p)
			mu.Unlock()
		}})
	}()
	if !eventually(5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return out.Len() > 0 }) {
		t.Fatal("command did not start")
	}
	frozeAt := time.Now()
	s.Freeze()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("frozen peer not detected")
	}
	d := time.Since(frozeAt)
	var de *remote.DisconnectError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "keepalive") {
		t.Fatalf("err = %v, want a keepalive DisconnectError", err)
	}
	if d > 100*time.Millisecond*3+2*time.Second {
		t.Errorf("detected after %v", d)
	}
	if string(res.Stdout.Data) != "started\n" {
		t.Errorf("partial output %q", res.Stdout.Data)
	}
	// Thawed, the host is reachable again on a new connection.
	s.Thaw()
	if res := runOn(t, r, addr(s), exec.Command{Shell: "echo back"}); string(res.Stdout.Data) != "back\n" {
		t.Errorf("after thaw: %q", res.Stdout.Data)
	}
	if s.Accepted() != 2 {
		t.Errorf("accepted %d, want 2", s.Accepted())
	}
}

func TestSSHConnectionReuse(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(nil)
	for i := range 100 {
		res := runOn(t, r, addr(s), exec.Command{Argv: []string{"true"}})
		if res.ExitCode != 0 {
			t.Fatalf("run %d: exit %d", i, res.ExitCode)
		}
	}
	if s.Accepted() != 1 {
		t.Errorf("100 commands used %d TCP connections, want 1", s.Accepted())
	}
	if s.AuthAttempts() > 3 {
		t.Errorf("%d auth attempts for one connection", s.AuthAttempts())
	}
	// Principal B never reuses A's connection.
	if _, err := runErr(r, addr(s), "bob", exec.Command{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	if s.Accepted() != 2 {
		t.Errorf("principal bob: %d connections, want 2", s.Accepted())
	}
	// And A still uses its own.
	runOn(t, r, addr(s), exec.Command{Argv: []string{"true"}})
	if s.Accepted() != 2 {
		t.Errorf("after alice again: %d connections", s.Accepted())
	}
	// A dropped connection is replaced on the next run.
	s.DropConnections()
	if !eventually(2*time.Second, func() bool { return s.OpenConnections() == 0 }) {
		t.Fatal("connections not dropped")
	}
	time.Sleep(50 * time.Millisecond)
	if res := runOn(t, r, addr(s), exec.Command{Shell: "echo again"}); string(res.Stdout.Data) != "again\n" {
		t.Errorf("after drop: %q", res.Stdout.Data)
	}
	if s.Accepted() != 3 {
		t.Errorf("after drop: %d connections, want 3", s.Accepted())
	}
}

func TestSSHChannelCap(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(nil)
	barrier := filepath.Join(t.TempDir(), "go")
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 12 {
		wg.Go(func() {
			res, err := runErr(r, addr(s), "alice", exec.Command{Shell: fmt.Sprintf("while [ ! -e %q ]; do sleep 0.02; done", barrier)})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d", res.ExitCode)
			}
			errs <- err
		})
	}
	if !eventually(10*time.Second, func() bool { return s.Execs() == 12 }) {
		t.Errorf("only %d of 12 started", s.Execs())
	}
	os.WriteFile(barrier, nil, 0o600)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if s.Accepted() != 2 {
		t.Errorf("12 parallel channels used %d connections, want 2 (10 per connection)", s.Accepted())
	}
}

func TestSSHServerSessionLimit(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	// The server allows 4 sessions per connection; the router would put
	// 10 on one. Refused channel opens move to another connection.
	s := e.trustedServer(sshtest.Config{MaxSessions: 4})
	r := e.router(nil)
	barrier := filepath.Join(t.TempDir(), "go")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := runErr(r, addr(s), "alice", exec.Command{Shell: fmt.Sprintf("while [ ! -e %q ]; do sleep 0.02; done", barrier)})
			errs <- err
		})
	}
	if !eventually(10*time.Second, func() bool { return s.Execs() == 8 }) {
		t.Errorf("only %d of 8 started", s.Execs())
	}
	os.WriteFile(barrier, nil, 0o600)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := s.Accepted(); n < 2 || n > 4 {
		t.Errorf("used %d connections", n)
	}
}

func TestSSHIdleTTLClosesConnection(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r := e.router(func(c *remote.RouterConfig) { c.IdleTTL = 300 * time.Millisecond })
	runOn(t, r, addr(s), exec.Command{Argv: []string{"true"}})
	if s.OpenConnections() != 1 {
		t.Fatalf("open connections %d", s.OpenConnections())
	}
	start := time.Now()
	if !eventually(3*time.Second, func() bool { return s.OpenConnections() == 0 }) {
		t.Fatal("idle connection not closed")
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("closed after %v, before the TTL", d)
	}
	runOn(t, r, addr(s), exec.Command{Argv: []string{"true"}})
	if s.Accepted() != 2 {
		t.Errorf("accepted %d, want a fresh connection", s.Accepted())
	}
	// A busy connection is not closed under a running command.
	res := runOn(t, r, addr(s), exec.Command{Shell: "sleep 0.8; echo done"})
	if string(res.Stdout.Data) != "done\n" {
		t.Errorf("long command: %q", res.Stdout.Data)
	}
}

func TestSSHProxyJumpTwoHops(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	j1 := e.trustedServer(sshtest.Config{AllowForwarding: true, HostKeys: []ssh.Signer{testKey(t, "ed25519").Signer}})
	j2 := e.trustedServer(sshtest.Config{AllowForwarding: true, HostKeys: []ssh.Signer{testKey(t, "ecdsa").Signer}})
	target := e.trustedServer(sshtest.Config{HostKeys: []ssh.Signer{testKey(t, "rsa").Signer}})
	hosts := []remote.HostConfig{
		{Name: "j1", Address: "127.0.0.1", Port: j1.Port()},
		{Name: "j2", Address: "127.0.0.1", Port: j2.Port()},
		{Name: "target", Address: "127.0.0.1", Port: target.Port(), ProxyJump: "j1,j2"},
	}
	r := e.router(func(c *remote.RouterConfig) { c.Hosts = hosts })
	res := runOn(t, r, "target", exec.Command{Shell: "echo through"})
	if string(res.Stdout.Data) != "through\n" {
		t.Fatalf("stdout %q", res.Stdout.Data)
	}
	want := fmt.Sprintf("ssh(target → %s via %s, %s)", target.Addr(), j1.Addr(), j2.Addr())
	if res.Route != want {
		t.Errorf("route %q, want %q", res.Route, want)
	}
	if j1.Accepted() != 1 || j2.Accepted() != 1 || target.Accepted() != 1 {
		t.Errorf("accepted j1=%d j2=%d target=%d", j1.Accepted(), j2.Accepted(), target.Accepted())
	}
	for range 5 {
		runOn(t, r, "target", exec.Command{Argv: []string{"true"}})
	}
	if target.Accepted() != 1 {
		t.Errorf("the chain was not reused: %d", target.Accepted())
	}

	// ssh_config ProxyJump, through aliases, works the same.
	e.writeConfig(fmt.Sprintf("Host hop1\n  HostName 127.0.0.1\n  Port %d\nHost hop2\n  HostName 127.0.0.1\n  Port %d\n  ProxyJump hop1\nHost inner\n  HostName 127.0.0.1\n  Port %d\n  ProxyJump hop2\n",
		j1.Port(), j2.Port(), target.Port()))
	r2 := e.router(nil)
	res = runOn(t, r2, "inner", exec.Command{Shell: "echo chained"})
	if string(res.Stdout.Data) != "chained\n" {
		t.Errorf("chained: %q", res.Stdout.Data)
	}
	if !strings.Contains(res.Route, "via "+j1.Addr()+", "+j2.Addr()) {
		t.Errorf("route %q", res.Route)
	}
}

func TestSSHProxyJumpChangedMiddleHopRefused(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	j1 := e.trustedServer(sshtest.Config{AllowForwarding: true})
	j2 := e.server(sshtest.Config{AllowForwarding: true, HostKeys: []ssh.Signer{testKey(t, "ed25519").Signer}})
	e.appendKnown(knownLine(j2.Addr(), testKey(t, "ed25519-b").Public()))
	target := e.trustedServer(sshtest.Config{})
	r := e.router(func(c *remote.RouterConfig) {
		c.HostKeyPolicy = remote.HostKeyAcceptNew
		c.Hosts = []remote.HostConfig{
			{Name: "j1", Address: "127.0.0.1", Port: j1.Port()},
			{Name: "j2", Address: "127.0.0.1", Port: j2.Port()},
			{Name: "target", Address: "127.0.0.1", Port: target.Port(), ProxyJump: "j1,j2"},
		}
	})
	_, err := runErr(r, "target", "alice", exec.Command{Shell: "true"})
	var hk *remote.HostKeyError
	if !errors.As(err, &hk) || !errors.Is(err, remote.ErrHostKeyChanged) || hk.Host != "j2" {
		t.Fatalf("err = %v, want j2's key changed", err)
	}
	if !strings.Contains(err.Error(), "jump host j2") && !strings.Contains(err.Error(), "j2") {
		t.Errorf("error does not name the hop: %v", err)
	}
	if j2.AuthAttempts() != 0 || target.Accepted() != 0 {
		t.Errorf("j2 auth attempts %d, target accepted %d", j2.AuthAttempts(), target.Accepted())
	}
	if j1.AuthAttempts() == 0 {
		t.Errorf("j1 was not used")
	}
}

func TestSSHPasswordHostFailsFast(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	for _, cfg := range []sshtest.Config{
		{NoPublicKey: true, Password: "secret"},
		{Password: "secret", AuthorizedKeys: []ssh.PublicKey{testKey(t, "ed25519-d").Public()}},
	} {
		s := e.trustedServer(cfg)
		r := e.router(nil)
		start := time.Now()
		_, err := runErr(r, addr(s), "alice", exec.Command{Shell: "true"})
		if !errors.Is(err, remote.ErrPasswordRequired) {
			t.Fatalf("err = %v, want ErrPasswordRequired", err)
		}
		var ae *remote.AuthError
		if !errors.As(err, &ae) || ae.User != "tester" {
			t.Errorf("err %T %+v", err, ae)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
		if !strings.Contains(err.Error(), "never prompts") {
			t.Errorf("message: %v", err)
		}
	}
}

func TestSSHEncryptedKey(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	enc, err := sshtest.NewKey("ecdsa")
	if err != nil {
		t.Fatal(err)
	}
	// Replace the default key with an encrypted one.
	os.Remove(filepath.Join(e.home, ".ssh", "id_ed25519"))
	os.Remove(filepath.Join(e.home, ".ssh", "id_ed25519.pub"))
	if err := enc.Write(filepath.Join(e.home, ".ssh", "id_ecdsa"), "open sesame"); err != nil {
		t.Fatal(err)
	}
	s := e.trustedServer(sshtest.Config{AuthorizedKeys: []ssh.PublicKey{enc.Public()}})

	// No agent, no passphrase: a clear error, no prompt.
	r := e.router(func(c *remote.RouterConfig) {
		c.PassphraseEnv = "TEST_PASSPHRASE"
		c.Getenv = func(string) string { return "" }
	})
	_, err = runErr(r, addr(s), "alice", exec.Command{Shell: "true"})
	if !errors.Is(err, remote.ErrNoKeys) || !strings.Contains(err.Error(), "encrypted") || !strings.Contains(err.Error(), "$TEST_PASSPHRASE") {
		t.Errorf("err = %v", err)
	}

	// Wrong passphrase.
	r = e.router(func(c *remote.RouterConfig) {
		c.PassphraseEnv = "TEST_PASSPHRASE"
		c.Getenv = func(string) string { return "wrong" }
	})
	if _, err = runErr(r, addr(s), "alice", exec.Command{Shell: "true"}); !errors.Is(err, remote.ErrNoKeys) || !strings.Contains(err.Error(), "does not open it") {
		t.Errorf("err = %v", err)
	}

	// The passphrase from the environment opens it.
	r = e.router(func(c *remote.RouterConfig) {
		c.PassphraseEnv = "TEST_PASSPHRASE"
		c.Getenv = func(k string) string {
			if k == "TEST_PASSPHRASE" {
				return "open sesame"
			}
			return ""
		}
	})
	if res, err := runErr(r, addr(s), "alice", exec.Command{Shell: "echo in"}); err != nil || string(res.Stdout.Data) != "in\n" {
		t.Errorf("with passphrase: %v %q", err, res.Stdout.Data)
	}

	// An agent holding the key works without the passphrase.
	sock := startAgent(t, enc)
	r = e.router(func(c *remote.RouterConfig) { c.AgentSocket = sock })
	if res, err := runErr(r, addr(s), "alice", exec.Command{Shell: "echo agent"}); err != nil || string(res.Stdout.Data) != "agent\n" {
		t.Errorf("with agent: %v %q", err, res.Stdout.Data)
	}
}

func TestSSHRejectedKeys(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{AuthorizedKeys: []ssh.PublicKey{testKey(t, "ed25519-d").Public()}})
	r := e.router(nil)
	_, err := runErr(r, addr(s), "alice", exec.Command{Shell: "true"})
	if !errors.Is(err, remote.ErrKeysRejected) || !strings.Contains(err.Error(), ssh.FingerprintSHA256(e.key.Public())) {
		t.Errorf("err = %v", err)
	}
}

func TestSSHCheckRefusesBeforeConnecting(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	// If the refusal failed, the remote command would only be recorded
	// (RecordOnly), and the local one would remove a sentinel file of this
	// test's own; both are checked below.
	s := e.trustedServer(sshtest.Config{RecordOnly: true})
	sentinel := filepath.Join(t.TempDir(), "sentinel")
	if err := os.WriteFile(sentinel, []byte("still here"), 0o600); err != nil {
		t.Fatal(err)
	}
	rm := "rm -f -- '" + sentinel + "'"
	deny := errors.New("policy: no")
	var hosts []string
	r := e.router(func(c *remote.RouterConfig) {
		c.Check = func(_ context.Context, host string, cmd exec.Command) error {
			hosts = append(hosts, host)
			if strings.Contains(cmd.Shell, "rm") {
				return deny
			}
			return nil
		}
	})
	_, err := runErr(r, addr(s), "alice", exec.Command{Shell: rm})
	if !errors.Is(err, deny) {
		t.Fatalf("err = %v", err)
	}
	if s.Accepted() != 0 {
		t.Errorf("a refused command opened %d connections", s.Accepted())
	}
	if _, err := runErr(r, "local", "alice", exec.Command{Shell: rm, Dir: filepath.Dir(sentinel)}); !errors.Is(err, deny) {
		t.Errorf("local: err = %v", err)
	}
	if _, err := os.Stat(sentinel); err != nil {
		t.Errorf("a refused command ran: %v", err)
	}
	// An allowed command does reach the server, which records it.
	runOn(t, r, addr(s), exec.Command{Shell: "echo allowed"})
	cmds := s.Commands()
	if len(cmds) != 1 || !strings.Contains(cmds[0], "echo allowed") {
		t.Errorf("the server received %q, want only the allowed command", cmds)
	}
	if len(hosts) != 3 || hosts[0] != addr(s) || hosts[1] != "local" || hosts[2] != addr(s) {
		t.Errorf("Check saw hosts %v", hosts)
	}
}

func TestSSHTwoRoutersAreIndependent(t *testing.T) {
	leakCheck(t)
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	r1 := e.router(nil)
	r2 := e.router(func(c *remote.RouterConfig) { c.LocalUser = "other" })
	runOn(t, r1, addr(s), exec.Command{Argv: []string{"true"}})
	runOn(t, r2, addr(s), exec.Command{Argv: []string{"true"}})
	if s.Accepted() != 2 {
		t.Errorf("accepted %d", s.Accepted())
	}
	r1.Close()
	runOn(t, r2, addr(s), exec.Command{Argv: []string{"true"}})
	if _, err := runErr(r1, addr(s), "alice", exec.Command{Argv: []string{"true"}}); !errors.Is(err, remote.ErrClosed) {
		t.Errorf("closed router: %v", err)
	}
}

func TestSSHUnsafeProxyCommand(t *testing.T) {
	leakCheck(t)
	if _, err := osexec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	e := newSSHEnv(t)
	s := e.trustedServer(sshtest.Config{})
	e.writeConfig(fmt.Sprintf("Host viaproxy\n  HostName 127.0.0.1\n  Port %d\n  ProxyCommand bash -c 'exec 3<>/dev/tcp/%%h/%%p; cat <&3 & exec cat >&3'\n", s.Port()))

	// Off by default: ignored, so the connection goes direct.
	r := e.router(nil)
	res := runOn(t, r, "viaproxy", exec.Command{Shell: "echo direct"})
	if string(res.Stdout.Data) != "direct\n" || strings.Contains(res.Route, "ProxyCommand") {
		t.Errorf("without the option: %q via %s", res.Stdout.Data, res.Route)
	}
	// Enabled: the connection goes through the command.
	r2 := e.router(func(c *remote.RouterConfig) { c.UnsafeProxyCommand = true })
	res = runOn(t, r2, "viaproxy", exec.Command{Shell: "echo proxied"})
	if string(res.Stdout.Data) != "proxied\n" || !strings.Contains(res.Route, "via ProxyCommand") {
		t.Errorf("with the option: %q via %s", res.Stdout.Data, res.Route)
	}
	if s.Accepted() != 2 {
		t.Errorf("accepted %d", s.Accepted())
	}
}
