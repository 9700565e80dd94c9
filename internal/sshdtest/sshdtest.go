// Package sshdtest runs the real OpenSSH server for tests outside package
// exec: `sshd -D -e -f <config>` as a child process on a free 127.0.0.1
// port, with a throwaway host key in t.TempDir(), stopped by its PID at
// cleanup. Without sshd, [Start] skips the test loudly, unless
// RIGOUT_REQUIRE_SSHD=1 makes that a failure (CI installs sshd).
package sshdtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rigout/rigout/exec/sshtest"
)

// Path is where sshd is expected.
const Path = "/usr/sbin/sshd"

// Server is one running sshd.
type Server struct {
	// Port is the port it listens on, at 127.0.0.1.
	Port int
	// KnownHostsLine is its host key as a known_hosts line.
	KnownHostsLine string
	pid            int

	// mu protects log.
	mu  sync.Mutex
	log bytes.Buffer
}

// Log returns what sshd logged so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Start starts sshd letting authorized log in as any local user (root
// included, by key only), and stops it when the test ends.
func Start(t testing.TB, authorized ...*sshtest.Key) *Server {
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
	dir := t.TempDir()
	hk, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	hkPath := filepath.Join(dir, "host_key")
	if err := hk.Write(hkPath, ""); err != nil {
		t.Fatal(err)
	}
	var ak strings.Builder
	for _, k := range authorized {
		ak.WriteString(k.AuthorizedKey() + "\n")
	}
	akPath := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(akPath, []byte(ak.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("HostKey %s\nListenAddress 127.0.0.1\nPidFile none\nUsePAM no\nStrictModes no\nAuthorizedKeysFile %s\n"+
		"PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"+
		"PrintMotd no\nPrintLastLog no\nUseDNS no\nLogLevel INFO\nSetEnv SHLVL=1\n", hkPath, akPath)
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		cfgPath := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf("Port %d\n%s", port, cfg)), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := run(t, cfgPath, port)
		if err == nil {
			s.KnownHostsLine = knownhosts.Line([]string{fmt.Sprintf("127.0.0.1:%d", port)}, hk.Public())
			return s
		}
		if attempt == 2 {
			t.Fatal(err)
		}
	}
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func run(t testing.TB, cfgPath string, port int) (*Server, error) {
	cmd := osexec.Command(Path, "-D", "-e", "-f", cfgPath)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Port: port, pid: cmd.Process.Pid}
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
		_ = syscall.Kill(s.pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(s.pid, syscall.SIGKILL)
			<-exited
		}
	}
	select {
	case <-ready:
	case err := <-exited:
		return nil, fmt.Errorf("sshd exited: %v\n%s", err, s.Log())
	case <-time.After(10 * time.Second):
		stop()
		return nil, fmt.Errorf("sshd did not start:\n%s", s.Log())
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.Log())
		}
	})
	return s, nil
}
