//go:build linux

package remote_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// These tests run rigout's helper on a real OpenSSH sshd on loopback. The
// login's $HOME is a directory under a temp dir of the test's own (sshd's
// SetEnv), so that the helper's cache lives there, not in a real home.
// Containment tests log in as an unprivileged user (the first account
// with uid >= 1000 and a login shell), skipping loudly without one.

// buildHelper builds cmd/rigout-helper without cgo and returns its bytes.
func buildHelper(t testing.TB) []byte {
	t.Helper()
	goBin := "go" // from PATH, as the README's test command runs it
	out := filepath.Join(t.TempDir(), "rigout-helper")
	cmd := osexec.Command(goBin, "build", "-o", out, "github.com/rigout/rigout/cmd/rigout-helper")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build rigout-helper: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// helperHost is an sshd whose login has a $HOME of the test's own.
type helperHost struct {
	d     *sshd
	dir   string // world-traversable, removed at cleanup
	home  string // the login's $HOME, owned by it
	login *user.User
	uid   int
	key   string
	known string
}

// unprivilegedLogin returns the account the helper's sshd tests log in
// as: rigout-test, made for them (useradd -m -s /bin/bash rigout-test),
// never another user's, whose home the tests would write to. Without it
// they skip loudly, and fail under RIGOUT_REQUIRE_SSHD=1 (CI makes it).
func unprivilegedLogin(t testing.TB) *user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to run sshd for an unprivileged login")
	}
	u, err := user.Lookup(testLogin)
	if err == nil {
		if uid, _ := strconv.Atoi(u.Uid); uid > 0 {
			return u
		}
	}
	why := "no account " + testLogin + " for the unprivileged sshd login (useradd -m -s /bin/bash " + testLogin + ")"
	if os.Getenv("RIGOUT_REQUIRE_SSHD") == "1" {
		t.Fatal("RIGOUT_REQUIRE_SSHD=1 and " + why)
	}
	t.Skip("SKIPPING: " + why)
	return nil
}

// testLogin is the unprivileged account the helper's sshd tests use.
const testLogin = "rigout-test"

// startHelperHost starts sshd for login; env are further NAME=value pairs
// of every session's environment.
func startHelperHost(t testing.TB, login *user.User, env ...string) *helperHost {
	t.Helper()
	requireSSHD(t)
	dir, err := os.MkdirTemp("", "rigout-helper-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(login.Uid)
	gid, _ := strconv.Atoi(login.Gid)
	h := &helperHost{dir: dir, home: filepath.Join(dir, "home"), login: login, uid: uid}
	if err := os.Mkdir(h.home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(h.home, uid, gid); err != nil {
		t.Fatal(err)
	}
	hostKey, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	userKey, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	hk, ak := filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys")
	h.key = filepath.Join(dir, "id_ed25519")
	if err := hostKey.Write(hk, ""); err != nil {
		t.Fatal(err)
	}
	if err := userKey.Write(h.key, ""); err != nil {
		t.Fatal(err)
	}
	// Public keys: readable by the login, as sshd reads them as it.
	if err := os.WriteFile(ak, []byte(userKey.AuthorizedKey()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An unprivileged login gets an sshd of its own running as it (sshd
	// then logs in only that user, and without reading /etc/shadow, whose
	// entry for a service account is usually locked).
	var pre []string
	if uid != os.Geteuid() {
		setpriv, err := osexec.LookPath("setpriv")
		if err != nil {
			if os.Getenv("RIGOUT_REQUIRE_SSHD") == "1" {
				t.Fatal("RIGOUT_REQUIRE_SSHD=1 and setpriv (util-linux), needed to run sshd as an unprivileged user, is missing")
			}
			t.Skip("SKIP: setpriv (util-linux) is needed to run sshd as an unprivileged user")
		}
		pre = []string{setpriv, "--reuid=" + login.Uid, "--regid=" + login.Gid, "--clear-groups", "--"}
		if err := os.Chown(hk, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "HostKey %s\nListenAddress 127.0.0.1\nPidFile none\nUsePAM no\nStrictModes no\nAuthorizedKeysFile %s\n", hk, ak)
	cfg.WriteString("PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n")
	cfg.WriteString("PrintMotd no\nPrintLastLog no\nUseDNS no\nLogLevel INFO\nSubsystem sftp internal-sftp\n")
	fmt.Fprintf(&cfg, "SetEnv SHLVL=1 HOME=%s %s\nAllowUsers %s\n", h.home, strings.Join(env, " "), login.Username)
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		cfgPath := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf("Port %d\n%s", port, cfg.String())), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(cfgPath, uid, gid); err != nil {
			t.Fatal(err)
		}
		test := append(slices.Clone(pre), sshdPath, "-t", "-f", cfgPath)
		if out, err := osexec.Command(test[0], test[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("sshd -t: %v\n%s", err, out)
		}
		d, err := runSSHD(t, cfgPath, port, pre...)
		if err == nil {
			h.d = d
			break
		}
		if attempt == 2 {
			t.Fatal(err)
		}
	}
	h.known = filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(h.known, []byte(knownLine(h.d.addr, hostKey.Public())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// router returns a Router reaching the host as "box", with helper (nil:
// none) in mode.
func (h *helperHost) router(t testing.TB, helper *remote.HelperConfig, mode remote.HelperMode) *remote.Router {
	t.Helper()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	r, err := remote.NewRouter(remote.RouterConfig{
		Local:             &exec.Local{},
		Hosts:             []remote.HostConfig{{Name: "box", Address: "127.0.0.1", Port: h.d.port, User: h.login.Username, Key: h.key, Helper: mode}},
		SSHConfigFiles:    []string{filepath.Join(h.dir, "no_ssh_config")},
		KnownHostsFile:    h.known,
		HostKeyPolicy:     remote.HostKeyStrict,
		HomeDir:           h.dir,
		LocalUser:         me.Username,
		ConnectTimeout:    5 * time.Second,
		KeepaliveInterval: 5 * time.Second,
		Grace:             500 * time.Millisecond,
		Helper:            helper,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func sshRunner(t testing.TB, r *remote.Router, principal string) *remote.SSH {
	t.Helper()
	tg, err := r.Resolve(context.Background(), "box", principal)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := tg.Runner.(*remote.SSH)
	if !ok {
		t.Fatalf("runner is %T, want *remote.SSH", tg.Runner)
	}
	return s
}

func helperBinaries(bin []byte) *remote.HelperConfig {
	return &remote.HelperConfig{Binaries: map[string][]byte{runtime.GOOS + "/" + runtime.GOARCH: bin}}
}

func sum256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestHelperSSHDUploadVerifyRun uploads the helper on first use, runs
// commands through it, reuses it, and detects a tampered copy without
// running it.
func TestHelperSSHDUploadVerifyRun(t *testing.T) {
	leakCheck(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildHelper(t)
	h := startHelperHost(t, me)
	ctx := context.Background()
	r := h.router(t, helperBinaries(bin), remote.HelperRequire)
	s := sshRunner(t, r, "alice")
	info, err := s.HelperInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helper: %s; upload: %s; sandbox: %s", info, info.Upload, info.Sandbox)
	if !info.Uploaded || info.Tampered || info.SHA256 != sum256(bin) || info.Version != exec.HelperVersion || info.Runs != "sealed memfd" {
		t.Errorf("first start: %+v, want an upload of %s, running from a sealed memfd", info, sum256(bin))
	}
	if d, err := r.Describe(ctx, "box", "alice"); err != nil || !strings.Contains(d.Helper, "rigout-helper "+exec.HelperVersion+" (commands: ") || !strings.Contains(d.Helper, "runs from: sealed memfd") {
		t.Errorf("describe: helper %q, %v", d.Helper, err)
	}
	cached := filepath.Join(h.home, ".cache", "rigout", "helper-"+sum256(bin))
	for p, want := range map[string]os.FileMode{cached: 0o500, filepath.Dir(cached): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want mode %v", p, fi.Mode(), err, want)
		}
	}

	for _, tt := range []struct {
		name string
		cmd  exec.Command
		out  string
		code int
	}{
		{"shell", exec.Command{Shell: "echo hi"}, "hi\n", 0},
		{"exit", exec.Command{Shell: "exit 3"}, "", 3},
		{"argv", exec.Command{Argv: []string{"printf", "%s|", "a b", "$(id)"}}, "a b|$(id)|", 0},
		{"stdin", exec.Command{Argv: []string{"cat"}, Stdin: strings.NewReader("fed\n")}, "fed\n", 0},
		{"env and secret", exec.Command{Shell: `echo "$A $S"`, Env: map[string]string{"A": "1"}, Secrets: map[string]string{"S": "it's"}}, "1 it's\n", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Run(ctx, tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Stdout.Data) != tt.out || res.ExitCode != tt.code {
				t.Errorf("stdout %q exit %d (stderr %q); want %q %d", res.Stdout.Data, res.ExitCode, res.Stderr.Data, tt.out, tt.code)
			}
			if !strings.Contains(res.Route, "via rigout-helper") {
				t.Errorf("route %q does not name the helper", res.Route)
			}
		})
	}
	res, err := s.Run(ctx, exec.Command{Argv: []string{"sleep", "30"}, Timeout: 300 * time.Millisecond})
	if err != nil || !res.TimedOut {
		t.Errorf("timeout through the helper: %+v, %v", res, err)
	}

	// Start: output streams (scrubbed) while the command runs; the host
	// reports its pid; a signal stops it.
	var mu sync.Mutex
	var streamed strings.Builder
	p, err := s.Start(ctx, exec.Command{
		Shell: "echo first secret-value; sleep 30; echo never",
		Scrub: func(w io.Writer) io.WriteCloser { return replaceWriter{w, "secret-value", "[redacted]"} },
		OnOutput: func(st exec.Stream, b []byte) {
			if st != exec.Stdout {
				return // the shell may say "Terminated" on stderr, or not
			}
			mu.Lock()
			streamed.Write(b)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(streamed.String(), "first") && p.Pid() > 0
	}) {
		t.Fatalf("no streamed output or pid from a started command (pid %d)", p.Pid())
	}
	if sb, why := p.Sandbox(); !sb || !strings.Contains(p.Route(), "via rigout-helper") {
		t.Errorf("started process: sandboxed %v (%s), route %q", sb, why, p.Route())
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res, err = p.Wait()
	// (In a view the shell is its PID namespace's init, which the kernel
	// shields from SIGTERM: the call's end then kills it.)
	if err != nil || res.Signal == "" || strings.Contains(string(res.Stdout.Data), "never") {
		t.Errorf("signalled: %+v, %v", res, err)
	}
	mu.Lock()
	if got := streamed.String(); got != "first [redacted]\n" || string(res.Stdout.Data) != got {
		t.Errorf("streamed %q, captured %q; want both scrubbed", got, res.Stdout.Data)
	}
	mu.Unlock()

	// Standard input comes as it is written (a process manager's pipe):
	// cat answers each line before the input ends.
	pr, pw := io.Pipe()
	var catOut strings.Builder
	p, err = s.Start(ctx, exec.Command{Argv: []string{"cat"}, Stdin: pr, OnOutput: func(_ exec.Stream, b []byte) {
		mu.Lock()
		catOut.Write(b)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(pw, "one\n"); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return catOut.String() == "one\n" }) {
		t.Fatalf("cat did not answer before its input ended: %q", catOut.String())
	}
	_, _ = io.WriteString(pw, "two\n")
	pw.Close()
	if res, err := p.Wait(); err != nil || res.ExitCode != 0 || string(res.Stdout.Data) != "one\ntwo\n" {
		t.Errorf("cat: %q exit %d, %v", res.Stdout.Data, res.ExitCode, err)
	}

	// A second Router finds the cached copy: no upload.
	r2 := h.router(t, helperBinaries(bin), remote.HelperRequire)
	if info, err := sshRunner(t, r2, "alice").HelperInfo(ctx); err != nil || info.Uploaded {
		t.Errorf("second start: %+v, %v; want the cached copy", info, err)
	}

	// Tamper with the cached copy: a script that would leave a mark.
	mark := filepath.Join(h.dir, "tampered-helper-ran")
	if err := os.WriteFile(cached+".new", []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o500); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(cached+".new", cached); err != nil { // the running copies keep the old inode
		t.Fatal(err)
	}
	r3 := h.router(t, helperBinaries(bin), remote.HelperRequire)
	s3 := sshRunner(t, r3, "alice")
	info, err = s3.HelperInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Tampered || !info.Uploaded {
		t.Errorf("after tampering: %+v, want Tampered and Uploaded", info)
	}
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the tampered helper ran (%s exists: %v)", mark, err)
	}
	if b, err := os.ReadFile(cached); err != nil || sum256(b) != sum256(bin) {
		t.Errorf("cached copy not restored: %v", err)
	}
	if res, err := s3.Run(ctx, exec.Command{Shell: "echo ok"}); err != nil || string(res.Stdout.Data) != "ok\n" {
		t.Errorf("after re-upload: %q, %v", res.Stdout.Data, err)
	}

	// The running helpers execute sealed memfds, not the cached file:
	// /proc says so, and the file can be rewritten in place (the kernel
	// refuses writes to a file being executed) without changing what
	// runs — commands through the helper still work.
	memfds, onFile := helperExes(t, cached)
	if memfds == 0 || onFile != 0 {
		t.Errorf("%d processes run a sealed helper memfd, %d the cached file; want some and none", memfds, onFile)
	}
	if err := os.Chmod(cached, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cached, []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o700); err != nil {
		t.Errorf("rewrite the cached helper in place: %v (is it still being executed?)", err)
	}
	if res, err := s3.Run(ctx, exec.Command{Shell: "echo still"}); err != nil || string(res.Stdout.Data) != "still\n" {
		t.Errorf("after rewriting the cached file: %q, %v", res.Stdout.Data, err)
	}
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the rewritten helper ran (%s exists: %v)", mark, err)
	}
}

// helperExes counts the processes whose program is a sealed helper memfd
// and those whose program is the file cached.
func helperExes(t *testing.T, cached string) (memfds, onFile int) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		switch {
		case err != nil:
		case strings.HasPrefix(exe, "/memfd:rigout-helper"):
			memfds++
		case strings.TrimSuffix(exe, " (deleted)") == cached:
			onFile++
		}
	}
	return memfds, onFile
}

// TestHelperSSHDFallback: a host the helper cannot serve (here: no binary
// for its platform) falls back under auto and says so, and is refused
// under require without running anything.
func TestHelperSSHDFallback(t *testing.T) {
	leakCheck(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	h := startHelperHost(t, me)
	ctx := context.Background()
	none := &remote.HelperConfig{Binaries: map[string][]byte{"linux/none": []byte("x")}}

	ar := h.router(t, none, remote.HelperAuto)
	if d, err := ar.Describe(ctx, "box", "alice"); err != nil || !strings.Contains(d.Helper, "unavailable (") || !strings.Contains(d.Helper, "falling back") {
		t.Errorf("describe: helper %q, %v", d.Helper, err)
	}
	auto := sshRunner(t, ar, "alice")
	res, err := auto.Run(ctx, exec.Command{Shell: "echo plain"})
	if err != nil || string(res.Stdout.Data) != "plain\n" {
		t.Fatalf("auto fallback: %q, %v", res.Stdout.Data, err)
	}
	for _, s := range []string{res.Route, res.Unsandboxed} {
		if !strings.Contains(s, "no helper binary configured for linux/") {
			t.Errorf("fallback not reported: %q", s)
		}
	}

	sentinel := sentinelDir(t)
	req := sshRunner(t, h.router(t, none, remote.HelperRequire), "alice")
	_, err = req.Run(ctx, exec.Command{Argv: []string{"rm", filepath.Join(sentinel, "x")}})
	var he *remote.HelperError
	if !errors.Is(err, remote.ErrHelperRequired) || !errors.As(err, &he) {
		t.Errorf("require: err = %v, want ErrHelperRequired and a *HelperError", err)
	}
	checkSentinel(t, sentinel)

	// No helper shipped at all (none configured, none found beside
	// rigout): auto is plain SSH and Describe says why; require is
	// refused, never quietly plain SSH.
	empty := &remote.HelperConfig{Binaries: map[string][]byte{}, Origin: "none found: test"}
	if d, err := h.router(t, empty, remote.HelperAuto).Describe(ctx, "box", "alice"); err != nil || !strings.Contains(d.Helper, "none: no rigout helper shipped (none found: test)") {
		t.Errorf("describe without a helper: %q, %v", d.Helper, err)
	}
	for _, cfg := range []*remote.HelperConfig{nil, empty} {
		req := sshRunner(t, h.router(t, cfg, remote.HelperRequire), "alice")
		_, err = req.Run(ctx, exec.Command{Argv: []string{"rm", filepath.Join(sentinel, "x")}})
		if !errors.Is(err, remote.ErrHelperRequired) || !strings.Contains(err.Error(), "no rigout helper shipped") {
			t.Errorf("require without a helper (%v): err = %v, want ErrHelperRequired", cfg, err)
		}
	}
	checkSentinel(t, sentinel)

	off := sshRunner(t, h.router(t, helperBinaries([]byte("unused")), remote.HelperOff), "alice")
	res, err = off.Run(ctx, exec.Command{Shell: "echo off"})
	if err != nil || strings.Contains(res.Route, "helper") {
		t.Errorf("off: route %q, %v", res.Route, err)
	}
}

// chownAll hands paths to the login.
func (h *helperHost) own(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Lchown(p, h.uid, h.uid); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHelperSSHDContainment logs in as an unprivileged user: a command
// through the helper cannot read the login's key file or a configured
// hidden file, cannot see another principal's processes, and leaves no
// descendant behind; the same commands over plain SSH can (so the test can
// fail).
func TestHelperSSHDContainment(t *testing.T) {
	login := unprivilegedLogin(t)
	bin := buildHelper(t)
	h := startHelperHost(t, login)
	ctx := context.Background()

	sshDir := filepath.Join(h.home, ".ssh")
	keyFile := filepath.Join(sshDir, "id_sentinel")
	extra := filepath.Join(h.dir, "extra-secret")
	if err := os.Mkdir(sshDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte("SENTINEL-KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(extra, []byte("SENTINEL-EXTRA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.own(t, sshDir, keyFile, extra)
	cfg := helperBinaries(bin)
	cfg.Hidden = []string{extra}
	alice := sshRunner(t, h.router(t, cfg, remote.HelperRequire), "alice")
	bob := sshRunner(t, h.router(t, cfg, remote.HelperRequire), "bob")
	plain := sshRunner(t, h.router(t, nil, remote.HelperOff), "alice")
	info, err := alice.HelperInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helper as %s: %s; sandbox: %s", login.Username, info, info.Sandbox)
	if info.Commands != "view" {
		t.Logf("NOTE: no per-principal view on this kernel (%s): the process checks below are skipped", info.Sandbox)
	}

	read := exec.Command{Shell: "cat " + keyFile + " " + extra + " 2>&1; true"}
	if res, err := plain.Run(ctx, read); err != nil || !strings.Contains(string(res.Stdout.Data), "SENTINEL-KEY") {
		t.Fatalf("plain SSH cannot read the sentinel key (%q, %v): the test proves nothing", res.Stdout.Data, err)
	}
	res, err := alice.Run(ctx, read)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.Stdout.Data), "SENTINEL") {
		t.Errorf("a command through the helper read a hidden file: %q", res.Stdout.Data)
	}
	if !res.Sandboxed {
		t.Errorf("result not sandboxed: %q", res.Unsandboxed)
	}

	// No descendant outlives its call.
	res, err = alice.Run(ctx, exec.Command{Shell: "sleep 421.5 & setsid sleep 422.5 & nohup sleep 423.5 >/dev/null 2>&1 & echo started"})
	if err != nil || string(res.Stdout.Data) != "started\n" {
		t.Fatalf("background command: %q, %v", res.Stdout.Data, err)
	}
	if !eventually(3*time.Second, func() bool {
		return !processWithArg("421.5") && !processWithArg("422.5") && !processWithArg("423.5")
	}) {
		t.Errorf("a descendant outlived its call through the helper")
	}

	if info.Commands != "view" {
		return
	}
	// Another principal's processes are out of sight.
	bctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	wg.Go(func() {
		_, _ = bob.Run(bctx, exec.Command{Argv: []string{"sleep", "424.5"}, Timeout: 20 * time.Second})
	})
	defer cancel()
	if !eventually(5*time.Second, func() bool { return processWithArg("424.5") }) {
		t.Fatal("bob's command did not start")
	}
	look := exec.Command{Shell: "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '"}
	if res, err := plain.Run(ctx, look); err != nil || !strings.Contains(string(res.Stdout.Data), "424.5") {
		t.Fatalf("plain SSH does not see bob's process (%v): the test proves nothing", err)
	}
	if res, err := alice.Run(ctx, look); err != nil || strings.Contains(string(res.Stdout.Data), "424.5") {
		t.Errorf("alice sees bob's process through the helper (%v): %q", err, res.Stdout.Data)
	}
	cancel()
}

// TestHelperSSHDSymlinkRace reads a file beneath a root while another
// process keeps exchanging a directory on its path with a symbolic link
// leading out of the root: through the helper (openat2) no read escapes;
// plain SFTP, checking the path's real location before opening it, does.
func TestHelperSSHDSymlinkRace(t *testing.T) {
	login := unprivilegedLogin(t)
	bin := buildHelper(t)
	h := startHelperHost(t, login)
	ctx := context.Background()
	root := filepath.Join(h.dir, "root")
	outside := filepath.Join(h.dir, "outside")
	for _, d := range []string{root, filepath.Join(root, "d"), outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "d", "f"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "f"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "alt")); err != nil {
		t.Fatal(err)
	}
	r := h.router(t, helperBinaries(bin), remote.HelperRequire)
	files := sshRunner(t, r, "alice").Files()
	if _, err := files.ReadFile(ctx, root, "d/f", 0); err != nil {
		t.Fatal(err)
	}
	lease, err := r.SFTP(ctx, "box", "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		a, b := filepath.Join(root, "d"), filepath.Join(root, "alt")
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
		}
	})
	defer wg.Wait()
	defer close(stop)

	const tries = 400
	var helperEsc, helperIn, sftpEsc, sftpIn int
	for range tries {
		data, err := files.ReadFile(ctx, root, filepath.Join(root, "d", "f"), 0)
		switch {
		case err != nil:
		case string(data) == "SECRET":
			helperEsc++
		default:
			helperIn++
		}
		// SFTP: check where the path leads, then open it.
		p := root + "/d/f"
		real, err := lease.Client.RealPath(p)
		if err != nil || !strings.HasPrefix(real, root+"/") {
			continue
		}
		f, err := lease.Client.Open(p)
		if err != nil {
			continue
		}
		b := make([]byte, 16)
		n, _ := f.Read(b)
		f.Close()
		if string(b[:n]) == "SECRET" {
			sftpEsc++
		} else {
			sftpIn++
		}
	}
	t.Logf("of %d tries: helper %d escapes, %d reads inside; plain SFTP (check, then open) %d escapes, %d reads inside", tries, helperEsc, helperIn, sftpEsc, sftpIn)
	if helperEsc != 0 {
		t.Errorf("%d reads through the helper escaped the root", helperEsc)
	}
	if helperIn == 0 {
		t.Errorf("no read through the helper succeeded: the race proves nothing")
	}
}

// BenchmarkHelperSSHD compares a warm command over plain SSH with the same
// command through the helper, on one sshd.
func BenchmarkHelperSSHD(b *testing.B) {
	me, err := user.Current()
	if err != nil {
		b.Fatal(err)
	}
	bin := buildHelper(b)
	h := startHelperHost(b, me)
	ctx := context.Background()
	for _, bb := range []struct {
		name   string
		helper *remote.HelperConfig
		mode   remote.HelperMode
	}{{"plain", nil, remote.HelperOff}, {"helper", helperBinaries(bin), remote.HelperRequire}} {
		s := sshRunner(b, h.router(b, bb.helper, bb.mode), "alice")
		cmd := exec.Command{Argv: []string{"true"}}
		if _, err := s.Run(ctx, cmd); err != nil { // warm: connection (and helper) up
			b.Fatal(err)
		}
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if res, err := s.Run(ctx, cmd); err != nil || res.ExitCode != 0 {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
	}
}

// replaceWriter replaces old with new in each write (the tests write
// whole lines).
type replaceWriter struct {
	w        io.Writer
	old, new string
}

func (r replaceWriter) Write(p []byte) (int, error) {
	_, err := io.WriteString(r.w, strings.ReplaceAll(string(p), r.old, r.new))
	return len(p), err
}

func (r replaceWriter) Close() error { return nil }

// TestHelperSSHDHashNeverMatches: on a host whose sha256sum never agrees
// (here a fake one first in PATH), the freshly uploaded helper is not run
// either: require refuses, auto falls back and says why.
func TestHelperSSHDHashNeverMatches(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	fake, err := os.MkdirTemp("", "rigout-fakebin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(fake) })
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "sha256sum"), []byte("#!/bin/sh\necho "+strings.Repeat("0", 64)+"  -\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := startHelperHost(t, me, "PATH="+fake+":/usr/bin:/bin")
	ctx := context.Background()
	bin := []byte("#!/bin/sh\ntouch " + filepath.Join(h.dir, "helper-ran") + "\n")
	cfg := &remote.HelperConfig{Binaries: map[string][]byte{runtime.GOOS + "/" + runtime.GOARCH: bin}}

	_, err = sshRunner(t, h.router(t, cfg, remote.HelperRequire), "alice").Run(ctx, exec.Command{Shell: "true"})
	var he *remote.HelperError
	if !errors.Is(err, remote.ErrHelperRequired) || !errors.As(err, &he) || !strings.Contains(he.Reason, "after a fresh upload") {
		t.Errorf("require: %v, want a refusal after a fresh upload", err)
	}
	res, err := sshRunner(t, h.router(t, cfg, remote.HelperAuto), "alice").Run(ctx, exec.Command{Shell: "echo plain"})
	if err != nil || string(res.Stdout.Data) != "plain\n" || !strings.Contains(res.Route, "after a fresh upload") {
		t.Errorf("auto: %q, route %q, %v", res.Stdout.Data, res.Route, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.home, ".cache", "rigout", "helper-"+sum256(bin))); err != nil || string(b) != string(bin) {
		t.Errorf("the upload did not happen (%v): the test proves nothing", err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "helper-ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a helper whose hash did not match ran (%v)", err)
	}
}
