package remote_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// These tests run the real OpenSSH server: `sshd -D -e -f <config>` as a
// child process on a free 127.0.0.1 port, with throwaway host and user keys
// in t.TempDir(), stopped by its PID at cleanup. Without sshd they skip,
// unless RIGOUT_REQUIRE_SSHD=1 makes that a failure (CI installs it).

const sshdPath = "/usr/sbin/sshd"

func requireSSHD(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(sshdPath); err != nil {
		if os.Getenv("RIGOUT_REQUIRE_SSHD") == "1" {
			t.Fatalf("sshd not installed (%v) and RIGOUT_REQUIRE_SSHD=1", err)
		}
		t.Skip("SKIPPING OpenSSH TESTS: sshd not installed: apt-get install openssh-server (set RIGOUT_REQUIRE_SSHD=1 to make this a failure)")
	}
	// As root, sshd needs its privilege separation directory, which the
	// service would create at boot.
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/run/sshd"); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
				t.Fatalf("create /run/sshd: %v", err)
			}
		}
	}
}

type sshdOpts struct {
	hostKeys []*sshtest.Key // default: one fresh ed25519 key
	// authorized are the user keys allowed in.
	authorized []*sshtest.Key
	// extra lines for sshd_config.
	extra []string
	// rc keeps the login shell's rc files (by default SHLVL=1 is set so
	// that Debian's bash does not source ~/.bashrc for each command).
	rc bool
}

type sshd struct {
	port     int
	addr     string
	hostKeys []*sshtest.Key
	pid      int
	mu       sync.Mutex
	log      bytes.Buffer
}

func (d *sshd) logText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

// accepted counts successful logins in sshd's log.
func (d *sshd) accepted() int { return strings.Count(d.logText(), "Accepted publickey") }

func (d *sshd) knownLines() []string {
	var out []string
	for _, k := range d.hostKeys {
		out = append(out, knownLine(d.addr, k.Public()))
	}
	return out
}

func startSSHD(t testing.TB, o sshdOpts) *sshd {
	t.Helper()
	requireSSHD(t)
	dir := t.TempDir()
	if len(o.hostKeys) == 0 {
		k, err := sshtest.NewKey("ed25519")
		if err != nil {
			t.Fatal(err)
		}
		o.hostKeys = []*sshtest.Key{k}
	}
	var cfg strings.Builder
	for i, k := range o.hostKeys {
		p := filepath.Join(dir, fmt.Sprintf("host_key_%d", i))
		if err := k.Write(p, ""); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cfg, "HostKey %s\n", p)
	}
	var ak strings.Builder
	for _, k := range o.authorized {
		ak.WriteString(k.AuthorizedKey() + "\n")
	}
	akPath := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(akPath, []byte(ak.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd takes the first value of each keyword: extra lines first.
	for _, l := range o.extra {
		cfg.WriteString(l + "\n")
	}
	fmt.Fprintf(&cfg, "ListenAddress 127.0.0.1\nPidFile none\nUsePAM no\nStrictModes no\nAuthorizedKeysFile %s\n", akPath)
	cfg.WriteString("PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n")
	cfg.WriteString("PrintMotd no\nPrintLastLog no\nUseDNS no\nLogLevel INFO\nAllowTcpForwarding yes\nSubsystem sftp internal-sftp\n")
	if !o.rc {
		cfg.WriteString("SetEnv SHLVL=1\n")
	}
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		cfgPath := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf("Port %d\n%s", port, cfg.String())), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := osexec.Command(sshdPath, "-t", "-f", cfgPath).CombinedOutput(); err != nil {
			t.Fatalf("sshd -t: %v\n%s", err, out)
		}
		d, err := runSSHD(t, cfgPath, port)
		if err == nil {
			d.hostKeys = o.hostKeys
			return d
		}
		if attempt == 2 {
			t.Fatal(err)
		}
	}
}

// processWithArg reports whether a live process has arg in its argv.
func processWithArg(arg string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
				continue
			}
		}
		for _, a := range bytes.Split(b, []byte{0}) {
			if string(a) == arg {
				return true
			}
		}
	}
	return false
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runSSHD starts sshd with cfgPath; pre, if given, is a command that runs
// it (setpriv, to run it as an unprivileged user).
func runSSHD(t testing.TB, cfgPath string, port int, pre ...string) (*sshd, error) {
	argv := append(pre, sshdPath, "-D", "-e", "-f", cfgPath)
	cmd := osexec.Command(argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &sshd{port: port, addr: fmt.Sprintf("127.0.0.1:%d", port), pid: cmd.Process.Pid}
	ready := make(chan struct{})
	var logDone sync.WaitGroup
	logDone.Go(func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			d.mu.Lock()
			d.log.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
			if strings.Contains(sc.Text(), "Server listening on") {
				once.Do(func() { close(ready) })
			}
		}
	})
	exited := make(chan error, 1)
	go func() {
		logDone.Wait()
		exited <- cmd.Wait()
	}()
	stop := func() {
		_ = syscall.Kill(d.pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(d.pid, syscall.SIGKILL)
			<-exited
		}
	}
	select {
	case <-ready:
	case err := <-exited:
		return nil, fmt.Errorf("sshd exited: %v\n%s", err, d.logText())
	case <-time.After(10 * time.Second):
		stop()
		return nil, fmt.Errorf("sshd did not start:\n%s", d.logText())
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("sshd log:\n%s", d.logText())
		}
	})
	return d, nil
}

// sshdEnv is an sshEnv whose router logs in as the current user.
func sshdEnv(t testing.TB) (*sshEnv, string) {
	e := newSSHEnv(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return e, u.Username
}

func TestSSHDRun(t *testing.T) {
	leakCheck(t)
	e, me := sshdEnv(t)
	d := startSSHD(t, sshdOpts{authorized: []*sshtest.Key{e.key}})
	for _, l := range d.knownLines() {
		e.appendKnown(l)
	}
	r := e.router(func(c *remote.RouterConfig) { c.LocalUser = me; c.Grace = 500 * time.Millisecond })
	dir := t.TempDir()
	for _, tt := range []struct {
		cmd      exec.Command
		out, err string
		code     int
	}{
		{exec.Command{Shell: "echo hi"}, "hi\n", "", 0},
		{exec.Command{Shell: "echo oops >&2; exit 3"}, "", "oops\n", 3},
		{exec.Command{Argv: []string{"sh", "-c", "exit 42"}}, "", "", 42},
		{exec.Command{Shell: "pwd", Dir: dir}, dir + "\n", "", 0},
		{exec.Command{Shell: `echo "$A|$B"`, Env: map[string]string{"A": "1 2", "B": "$(id)"}}, "1 2|$(id)\n", "", 0},
		{exec.Command{Argv: []string{"cat"}, Stdin: strings.NewReader("fed\n")}, "fed\n", "", 0},
		{exec.Command{Shell: `a=(x y z); echo ${#a[@]}`}, "3\n", "", 0},
	} {
		res := runOn(t, r, d.addr, tt.cmd)
		if string(res.Stdout.Data) != tt.out || string(res.Stderr.Data) != tt.err || res.ExitCode != tt.code {
			t.Errorf("%+v: stdout %q stderr %q exit %d; want %q %q %d", tt.cmd, res.Stdout.Data, res.Stderr.Data, res.ExitCode, tt.out, tt.err, tt.code)
		}
	}

	// Byte-exact arguments, in a sentinel directory (not the login's home).
	sandbox := sentinelDir(t)
	argv := append([]string{"printf", `%s\0`}, weird...)
	res := runOn(t, r, d.addr, exec.Command{Argv: argv, Dir: sandbox})
	got := strings.Split(strings.TrimSuffix(string(res.Stdout.Data), "\x00"), "\x00")
	if len(got) != len(weird) {
		t.Fatalf("got %d args: %q (stderr %q)", len(got), got, res.Stderr.Data)
	}
	for i := range weird {
		if got[i] != weird[i] {
			t.Errorf("arg %d = %q, want %q", i, got[i], weird[i])
		}
	}
	checkSentinel(t, sandbox)
	// Byte-exact directories.
	for _, name := range []string{"it's", `dq"x`, "sp ace", "$HOME", "`id`", "nl\nx", "tab\tx", "-dash"} {
		dd := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(dd, 0o755); err != nil {
			t.Fatal(err)
		}
		res := runOn(t, r, d.addr, exec.Command{Argv: []string{"pwd"}, Dir: dd})
		if got := strings.TrimSuffix(string(res.Stdout.Data), "\n"); got != dd {
			t.Errorf("pwd in %q = %q (stderr %q)", dd, got, res.Stderr.Data)
		}
	}

	// A timeout signals the remote command (sshd delivers "signal").
	start := time.Now()
	res = runOn(t, r, d.addr, exec.Command{Argv: []string{"sleep", "30"}, Timeout: 300 * time.Millisecond})
	if !res.TimedOut || res.ExitCode != -1 || (res.Signal != "SIGTERM" && res.Signal != "SIGKILL") {
		t.Errorf("timeout: %+v", res)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("timeout took %v", time.Since(start))
	}
	// A compound command's children go too: the process group is killed
	// from a second channel, which works even where sshd refuses signal
	// requests (root logins).
	res = runOn(t, r, d.addr, exec.Command{Shell: "sleep 317.25 & sleep 318.25; wait", Timeout: 300 * time.Millisecond})
	if !res.TimedOut {
		t.Errorf("compound timeout: %+v", res)
	}
	if !eventually(3*time.Second, func() bool { return !processWithArg("317.25") && !processWithArg("318.25") }) {
		t.Errorf("remote processes survived the timeout")
	}

	// Output capped while streaming.
	res = runOn(t, r, d.addr, exec.Command{Shell: "head -c 3000000 /dev/zero | tr '\\0' x", MaxOutput: 4096})
	if res.Stdout.Total != 3000000 || len(res.Stdout.Data) != 4096 || res.Stdout.Dropped != 3000000-4096 {
		t.Errorf("cap: %s", summary(res.Stdout))
	}

	// Everything above used one connection.
	if n := d.accepted(); n != 1 {
		t.Errorf("sshd accepted %d logins, want 1", n)
	}
}

func TestSSHDChannelCap(t *testing.T) {
	leakCheck(t)
	e, me := sshdEnv(t)
	d := startSSHD(t, sshdOpts{authorized: []*sshtest.Key{e.key}})
	for _, l := range d.knownLines() {
		e.appendKnown(l)
	}
	r := e.router(func(c *remote.RouterConfig) { c.LocalUser = me })
	barrier := filepath.Join(t.TempDir(), "go")
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	var started sync.WaitGroup
	started.Add(12)
	for range 12 {
		wg.Go(func() {
			var once sync.Once
			_, err := runErr(r, d.addr, "alice", exec.Command{
				Shell:    fmt.Sprintf("echo up; while [ ! -e %q ]; do sleep 0.02; done", barrier),
				OnOutput: func(exec.Stream, []byte) { once.Do(started.Done) },
			})
			errs <- err
		})
	}
	startedCh := make(chan struct{})
	go func() { started.Wait(); close(startedCh) }()
	select {
	case <-startedCh:
	case <-time.After(20 * time.Second):
		t.Error("not all 12 commands started")
	}
	os.WriteFile(barrier, nil, 0o600)
	wg.Wait()
	<-startedCh
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := d.accepted(); n != 2 {
		t.Errorf("12 parallel commands used %d connections, want 2", n)
	}
}

func TestSSHDFanOutWithOneDown(t *testing.T) {
	leakCheck(t)
	e, me := sshdEnv(t)
	var hosts []remote.HostConfig
	for i := range 3 {
		d := startSSHD(t, sshdOpts{authorized: []*sshtest.Key{e.key}})
		for _, l := range d.knownLines() {
			e.appendKnown(l)
		}
		hosts = append(hosts, remote.HostConfig{Name: fmt.Sprintf("node%d", i+1), Address: "127.0.0.1", Port: d.port, Labels: []string{"cluster"}})
	}
	hosts = append(hosts, remote.HostConfig{Name: "node4", Address: "127.0.0.1", Port: freePort(t), Labels: []string{"cluster"}})
	r := e.router(func(c *remote.RouterConfig) { c.LocalUser = me; c.Hosts = hosts })
	res, err := r.FanOut(context.Background(), exec.FanOutRequest{
		Selector: "cluster", Principal: "alice", Limit: 2,
		Command: exec.Command{Argv: []string{"printf", "%s", "up"}, Timeout: 20 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("%d results", len(res))
	}
	for _, fr := range res {
		if fr.Host == "node4" {
			var de *remote.DialError
			if !errors.As(fr.Err, &de) {
				t.Errorf("node4: %v", fr.Err)
			}
			continue
		}
		if fr.Err != nil || string(fr.Result.Stdout.Data) != "up" {
			t.Errorf("%s: %q %v", fr.Host, fr.Result.Stdout.Data, fr.Err)
		}
	}
}

func TestSSHDProxyJump(t *testing.T) {
	leakCheck(t)
	e, me := sshdEnv(t)
	jump := startSSHD(t, sshdOpts{authorized: []*sshtest.Key{e.key}})
	target := startSSHD(t, sshdOpts{authorized: []*sshtest.Key{e.key}})
	for _, l := range append(jump.knownLines(), target.knownLines()...) {
		e.appendKnown(l)
	}
	e.writeConfig(fmt.Sprintf("Host jump\n  HostName 127.0.0.1\n  Port %d\nHost target\n  HostName 127.0.0.1\n  Port %d\n  ProxyJump jump\n", jump.port, target.port))
	r := e.router(func(c *remote.RouterConfig) { c.LocalUser = me })
	res := runOn(t, r, "target", exec.Command{Shell: "echo $SSH_CONNECTION"})
	// The target sees the connection come from the jump host's forward.
	if !strings.Contains(string(res.Stdout.Data), fmt.Sprintf(" 127.0.0.1 %d", target.port)) {
		t.Errorf("SSH_CONNECTION %q", res.Stdout.Data)
	}
	if jump.accepted() != 1 || target.accepted() != 1 {
		t.Errorf("jump %d, target %d logins", jump.accepted(), target.accepted())
	}
	if !strings.Contains(jump.logText(), "direct-tcpip") && !strings.Contains(res.Route, "via "+jump.addr) {
		t.Errorf("route %q", res.Route)
	}

	// A changed key on the jump host stops the chain there.
	bad := filepath.Join(t.TempDir(), "known_hosts")
	lines := append([]string{knownLine(jump.addr, testKey(t, "ed25519-b").Public())}, target.knownLines()...)
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r2 := e.router(func(c *remote.RouterConfig) {
		c.LocalUser = me
		c.UserKnownHostsFiles = []string{bad}
		c.KnownHostsFile = filepath.Join(t.TempDir(), "own_known_hosts")
		c.HostKeyPolicy = remote.HostKeyAcceptNew
	})
	before := target.accepted()
	_, err := runErr(r2, "target", "alice", exec.Command{Shell: "true"})
	var hk *remote.HostKeyError
	if !errors.As(err, &hk) || hk.Host != "jump" || !errors.Is(err, remote.ErrHostKeyChanged) {
		t.Errorf("err = %v", err)
	}
	if target.accepted() != before {
		t.Errorf("target was reached")
	}
}

func TestSSHDHostKeyTypes(t *testing.T) {
	leakCheck(t)
	e, me := sshdEnv(t)
	keys := []*sshtest.Key{testKey(t, "ed25519"), testKey(t, "ecdsa"), testKey(t, "rsa")}
	d := startSSHD(t, sshdOpts{authorized: []*sshtest.Key{e.key}, hostKeys: keys})
	for _, k := range keys {
		t.Run(k.Public().Type(), func(t *testing.T) {
			known := filepath.Join(t.TempDir(), "known_hosts")
			if err := os.WriteFile(known, []byte(knownLine(d.addr, k.Public())+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			r := e.router(func(c *remote.RouterConfig) { c.LocalUser = me; c.UserKnownHostsFiles = []string{known} })
			tr := r.Test(context.Background(), d.addr, "p")
			if !tr.Reachable || !strings.HasSuffix(tr.HostKey, ssh.FingerprintSHA256(k.Public())) {
				t.Errorf("Test = %+v (%v)", tr, tr.Err)
			}
		})
	}
}

func TestSSHDPasswordOnlyFailsFast(t *testing.T) {
	leakCheck(t)
	e, me := sshdEnv(t)
	d := startSSHD(t, sshdOpts{extra: []string{"PubkeyAuthentication no", "PasswordAuthentication yes", "KbdInteractiveAuthentication yes", "PermitRootLogin yes"}})
	for _, l := range d.knownLines() {
		e.appendKnown(l)
	}
	r := e.router(func(c *remote.RouterConfig) { c.LocalUser = me })
	start := time.Now()
	_, err := runErr(r, d.addr, "alice", exec.Command{Shell: "true"})
	if !errors.Is(err, remote.ErrPasswordRequired) {
		t.Errorf("err = %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestSSHDTrustThenRun(t *testing.T) {
	leakCheck(t)
	e, me := sshdEnv(t)
	d := startSSHD(t, sshdOpts{authorized: []*sshtest.Key{e.key}, hostKeys: []*sshtest.Key{testKey(t, "ecdsa"), testKey(t, "ed25519")}})
	r := e.router(func(c *remote.RouterConfig) { c.LocalUser = me })
	_, err := runErr(r, d.addr, "alice", exec.Command{Shell: "true"})
	if !errors.Is(err, remote.ErrHostKeyUnknown) || d.accepted() != 0 {
		t.Fatalf("before trust: %v", err)
	}
	hk, err := r.HostKey(context.Background(), d.addr)
	if err != nil || hk.AlreadyKnown {
		t.Fatalf("HostKey: %+v %v", hk, err)
	}
	tr, err := r.Trust(context.Background(), d.addr, hk.Fingerprint)
	if err != nil || !tr.Recorded {
		t.Fatalf("Trust: %+v %v", tr, err)
	}
	if res := runOn(t, r, d.addr, exec.Command{Shell: "echo trusted"}); string(res.Stdout.Data) != "trusted\n" {
		t.Errorf("after trust: %q", res.Stdout.Data)
	}
}
