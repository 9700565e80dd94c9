package remote_test

import (
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh/agent"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// leakCheck fails the test if it leaves goroutines behind. Register it
// first: cleanups run in reverse order, so it runs after the others.
func leakCheck(t testing.TB) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		goleak.VerifyNone(t, opt)
	})
}

// sshEnv is a throwaway SSH client setup: a home directory with a user key,
// known_hosts files and an ssh_config, all in t.TempDir().
type sshEnv struct {
	t         testing.TB
	dir       string
	home      string
	key       *sshtest.Key
	userKnown string // read-only known_hosts
	ownKnown  string // rigout's own
	sshConfig string

	mu     sync.Mutex
	events []remote.HostKeyEvent
}

var (
	keyOnce  sync.Once
	keyCache map[string]*sshtest.Key
)

// testKey returns a key of the given kind, generated once per test binary
// (RSA generation is slow). Tests never mutate it.
func testKey(t testing.TB, kind string) *sshtest.Key {
	t.Helper()
	keyOnce.Do(func() {
		keyCache = map[string]*sshtest.Key{}
		for _, k := range []string{"ed25519", "ecdsa", "rsa", "ed25519-b", "ed25519-c", "ed25519-d"} {
			key, err := sshtest.NewKey(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(k, "-b"), "-c"), "-d"))
			if err != nil {
				panic(err)
			}
			keyCache[k] = key
		}
	})
	return keyCache[kind]
}

func newSSHEnv(t testing.TB) *sshEnv {
	t.Helper()
	dir := t.TempDir()
	e := &sshEnv{
		t:         t,
		dir:       dir,
		home:      filepath.Join(dir, "home"),
		userKnown: filepath.Join(dir, "home", ".ssh", "known_hosts"),
		ownKnown:  filepath.Join(dir, "state", "known_hosts"),
		sshConfig: filepath.Join(dir, "home", ".ssh", "config"),
	}
	if err := os.MkdirAll(filepath.Join(e.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	k, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	e.key = k
	if err := k.Write(filepath.Join(e.home, ".ssh", "id_ed25519"), ""); err != nil {
		t.Fatal(err)
	}
	return e
}

// server starts an sshtest server that accepts the env's key; the caller
// decides whether its host key is known (trust). Unless cfg says otherwise,
// commands run in a throwaway directory, not in the package's source
// directory, so that a command that goes wrong changes nothing that lasts.
func (e *sshEnv) server(cfg sshtest.Config) *sshtest.Server {
	e.t.Helper()
	if cfg.AuthorizedKeys == nil && !cfg.NoPublicKey {
		cfg.AuthorizedKeys = append(cfg.AuthorizedKeys, e.key.Public())
	}
	if cfg.Dir == "" {
		cfg.Dir = e.t.TempDir()
	}
	s, err := sshtest.NewServer(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

// trustedServer starts a server and records its key in the user's
// known_hosts.
func (e *sshEnv) trustedServer(cfg sshtest.Config) *sshtest.Server {
	s := e.server(cfg)
	e.appendKnown(s.KnownHostsLine())
	return s
}

func (e *sshEnv) appendKnown(line string) {
	e.t.Helper()
	f, err := os.OpenFile(e.userKnown, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		e.t.Fatal(err)
	}
}

func (e *sshEnv) writeConfig(text string) {
	e.t.Helper()
	if err := os.WriteFile(e.sshConfig, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// config returns a RouterConfig for the env, with test-sized timeouts.
func (e *sshEnv) config() remote.RouterConfig {
	return remote.RouterConfig{
		Local:               &exec.Local{},
		SSHConfigFiles:      []string{e.sshConfig},
		UserKnownHostsFiles: []string{e.userKnown},
		KnownHostsFile:      e.ownKnown,
		HostKeyPolicy:       remote.HostKeyStrict,
		HomeDir:             e.home,
		LocalUser:           "tester",
		ConnectTimeout:      5 * time.Second,
		KeepaliveInterval:   5 * time.Second,
		Grace:               500 * time.Millisecond,
		IsLocal:             func(h string) bool { return h == "localhost" || h == "this-machine" },
		OnHostKey: func(_ context.Context, ev remote.HostKeyEvent) {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.mu.Unlock()
		},
	}
}

func (e *sshEnv) router(mod func(*remote.RouterConfig)) *remote.Router {
	e.t.Helper()
	cfg := e.config()
	if mod != nil {
		mod(&cfg)
	}
	r, err := remote.NewRouter(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { r.Close() })
	return r
}

func (e *sshEnv) eventKinds() []remote.HostKeyEventKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []remote.HostKeyEventKind
	for _, ev := range e.events {
		out = append(out, ev.Kind)
	}
	return out
}

// addr returns the host argument that reaches s directly.
func addr(s *sshtest.Server) string { return s.Addr() }

// runOn resolves host and runs cmd, failing the test on error.
func runOn(t testing.TB, r *remote.Router, host string, cmd exec.Command) exec.Result {
	t.Helper()
	res, err := runErr(r, host, "alice", cmd)
	if err != nil {
		t.Fatalf("run on %s: %v", host, err)
	}
	return res
}

func runErr(r *remote.Router, host, principal string, cmd exec.Command) (exec.Result, error) {
	ctx := context.Background()
	tg, err := r.Resolve(ctx, host, principal)
	if err != nil {
		return exec.Result{}, err
	}
	if cmd.Timeout == 0 {
		cmd.Timeout = 30 * time.Second
	}
	return tg.Runner.Run(ctx, cmd)
}

// eventually polls cond every 10ms until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

// startAgent serves an ssh-agent holding keys on a socket in t.TempDir().
func startAgent(t testing.TB, keys ...*sshtest.Key) string {
	t.Helper()
	kr := agent.NewKeyring()
	for _, k := range keys {
		if err := kr.Add(agent.AddedKey{PrivateKey: k.Private}); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { _ = agent.ServeAgent(kr, c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return sock
}

// endpointOf is the SSH destination of tg, nil when tg is not an SSH host.
func endpointOf(tg exec.Target) *remote.Endpoint {
	s, ok := tg.Runner.(*remote.SSH)
	if !ok {
		return nil
	}
	ep := s.Endpoint()
	return &ep
}

// sentinelDir returns a fresh directory holding a file named x, for
// commands that would remove or overwrite x if quoting went wrong.
func sentinelDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("sentinel"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkSentinel fails the test if the file x in dir was removed or changed.
func checkSentinel(t testing.TB, dir string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, "x")); err != nil || string(b) != "sentinel" {
		t.Errorf("sentinel %s/x: %q, %v: a command ran that should not have", dir, b, err)
	}
}

var psScript = regexp.MustCompile(`FromBase64String\('([A-Za-z0-9+/=]*)'\)`)

// psDecode returns the script a PowerShell command line carries.
func psDecode(t *testing.T, line string) string {
	t.Helper()
	m := psScript.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no script in %q", line)
	}
	b, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
