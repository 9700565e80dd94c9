// Package sshdtest starts the real OpenSSH server for the tool families'
// tests: `sshd -D -e -f CONFIG` as a child process on a free 127.0.0.1
// port, with throwaway host and user keys in t.TempDir(), stopped by its
// PID when the test ends. It is for tests only.
//
// Without /usr/sbin/sshd, [Start] skips the test loudly, unless
// RIGOUT_REQUIRE_SSHD=1 makes that a failure (CI installs it).
package sshdtest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// Path is where the OpenSSH server is expected.
const Path = "/usr/sbin/sshd"

// Host is the name Server.Router gives the server.
const Host = "box"

// Options configures a server.
type Options struct {
	// SetEnv are variables sshd sets in every session (sshd_config
	// SetEnv), PATH included: a test puts recording fakes first in the
	// remote PATH this way.
	SetEnv map[string]string
	// Authorized are further keys that may log in, beside the throwaway
	// key of Router.
	Authorized []*sshtest.Key
	// MaxSessions is sshd's MaxSessions (channels per connection); 0
	// leaves sshd's default, 10.
	MaxSessions int
}

// Server is a running sshd and a router configuration that reaches it.
type Server struct {
	// Addr is 127.0.0.1:PORT.
	Addr string
	// Port is the listening port.
	Port int
	// KnownHostsLine is the server's host key as a known_hosts line.
	KnownHostsLine string
	// Router reaches the server as host Host, logging in as the current
	// user with a throwaway key, host key trusted strictly, no
	// ~/.ssh/config read.
	Router remote.RouterConfig

	mu  sync.Mutex
	log strings.Builder
}

// Log returns what sshd wrote to stderr.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Start starts sshd for t.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		if os.Getenv("RIGOUT_REQUIRE_SSHD") == "1" {
			t.Fatalf("sshd not installed (%v) and RIGOUT_REQUIRE_SSHD=1", err)
		}
		t.Skip("SKIPPING OpenSSH TEST: sshd not installed: apt-get install openssh-server (set RIGOUT_REQUIRE_SSHD=1 to make this a failure)")
	}
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/run/sshd"); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
				t.Fatalf("create /run/sshd: %v", err)
			}
		}
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hostKey, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	userKey, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	hk, uk, ak := filepath.Join(dir, "host_key"), filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "authorized_keys")
	if err := hostKey.Write(hk, ""); err != nil {
		t.Fatal(err)
	}
	if err := userKey.Write(uk, ""); err != nil {
		t.Fatal(err)
	}
	authorized := userKey.AuthorizedKey() + "\n"
	for _, k := range o.Authorized {
		authorized += k.AuthorizedKey() + "\n"
	}
	if err := os.WriteFile(ak, []byte(authorized), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "HostKey %s\nListenAddress 127.0.0.1\nPidFile none\nUsePAM no\nStrictModes no\nAuthorizedKeysFile %s\n", hk, ak)
	cfg.WriteString("PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n")
	cfg.WriteString("PrintMotd no\nPrintLastLog no\nUseDNS no\nLogLevel INFO\nSubsystem sftp internal-sftp\n")
	// SHLVL=1 keeps Debian's bash from sourcing ~/.bashrc for each command.
	env := []string{"SHLVL=1"}
	for k, v := range o.SetEnv {
		env = append(env, k+"="+v)
	}
	fmt.Fprintf(&cfg, "SetEnv %s\n", strings.Join(env, " "))
	if o.MaxSessions > 0 {
		fmt.Fprintf(&cfg, "MaxSessions %d\n", o.MaxSessions)
	}

	for attempt := 0; ; attempt++ {
		port := freePort(t)
		path := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(path, []byte(fmt.Sprintf("Port %d\n%s", port, cfg.String())), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := osexec.Command(Path, "-t", "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("sshd -t: %v\n%s", err, out)
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port}
		if err := s.run(t, path); err != nil {
			if attempt == 2 {
				t.Fatal(err)
			}
			continue
		}
		known := filepath.Join(dir, "known_hosts")
		line := knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, hostKey.Public())
		s.KnownHostsLine = line
		if err := os.WriteFile(known, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s.Router = remote.RouterConfig{
			Local:             &exec.Local{UnsafeNoSandbox: true},
			Hosts:             []remote.HostConfig{{Name: Host, Address: "127.0.0.1", Port: port, User: me.Username, Key: uk}},
			SSHConfigFiles:    []string{filepath.Join(dir, "no_ssh_config")},
			KnownHostsFile:    known,
			HostKeyPolicy:     remote.HostKeyStrict,
			HomeDir:           dir,
			LocalUser:         me.Username,
			ConnectTimeout:    5 * time.Second,
			KeepaliveInterval: 5 * time.Second,
			Grace:             500 * time.Millisecond,
		}
		return s
	}
}

func (s *Server) run(t testing.TB, cfgPath string) error {
	cmd := osexec.Command(Path, "-D", "-e", "-f", cfgPath)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	ready := make(chan struct{})
	var logDone sync.WaitGroup
	logDone.Go(func() {
		sc := bufio.NewScanner(stderr)
		var once sync.Once
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
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
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-exited
		}
	}
	select {
	case <-ready:
	case err := <-exited:
		return fmt.Errorf("sshd exited: %v\n%s", err, s.Log())
	case <-time.After(10 * time.Second):
		stop()
		return fmt.Errorf("sshd did not start:\n%s", s.Log())
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.Log())
		}
	})
	return nil
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// BuildHelper builds cmd/rigout-helper for this machine without cgo, as
// a release would, and returns a HelperConfig shipping it. The server's
// login should have a $HOME of the test's own (Options.SetEnv), where the
// helper's cache then lives.
func BuildHelper(t testing.TB) *remote.HelperConfig {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rigout-helper")
	cmd := osexec.Command("go", "build", "-o", out, "github.com/rigout/rigout/cmd/rigout-helper")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build rigout-helper: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return &remote.HelperConfig{Binaries: map[string][]byte{runtime.GOOS + "/" + runtime.GOARCH: b}}
}
