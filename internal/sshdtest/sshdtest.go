// Package sshdtest runs the real OpenSSH server for tests of packages
// other than exec (whose own tests have their harness): `sshd -D -e -f`
// as a child process on a free 127.0.0.1 port, with throwaway host and
// user keys in t.TempDir(), stopped by its PID at cleanup, and a router
// configuration that reaches it as one host, logging in as the current
// user. Without sshd, New skips the test loudly, unless
// RIGOUT_REQUIRE_SSHD=1 makes that a failure (CI installs it).
package sshdtest

import (
	"bufio"
	"bytes"
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
	"github.com/rigout/rigout/exec/sshtest"
)

// Path is where sshd is expected.
const Path = "/usr/sbin/sshd"

// Host is the host name the router configuration gives the server.
const Host = "sshd"

// Env is a running sshd and a router configuration that reaches it.
type Env struct {
	// Addr is the server's address; PID its process ID.
	Addr string
	PID  int
	// Config reaches the server as host Host, trusting its key.
	Config exec.RouterConfig

	mu  sync.Mutex
	log bytes.Buffer
}

// Log returns what sshd has logged so far.
func (e *Env) Log() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.String()
}

// New starts sshd for t.
func New(t testing.TB) *Env {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		if os.Getenv("RIGOUT_REQUIRE_SSHD") == "1" {
			t.Fatalf("sshd not installed (%v) and RIGOUT_REQUIRE_SSHD=1", err)
		}
		t.Skip("SKIPPING OpenSSH TESTS: sshd not installed: apt-get install openssh-server (set RIGOUT_REQUIRE_SSHD=1 to make this a failure)")
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation directory, which the service
		// would create at boot.
		_ = os.MkdirAll("/run/sshd", 0o755)
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
	write := func(name string, k *sshtest.Key) string {
		p := filepath.Join(dir, name)
		if err := k.Write(p, ""); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hostPath, userPath := write("host_key", hostKey), write("id_ed25519", userKey)
	akPath := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(akPath, []byte(userKey.AuthorizedKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// SHLVL=1 keeps Debian's bash from sourcing ~/.bashrc for commands.
	cfg := fmt.Sprintf("HostKey %s\nListenAddress 127.0.0.1\nPidFile none\nUsePAM no\nStrictModes no\nAuthorizedKeysFile %s\n"+
		"PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"+
		"PrintMotd no\nPrintLastLog no\nUseDNS no\nLogLevel INFO\nSetEnv SHLVL=1\n", hostPath, akPath)
	e := &Env{}
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		cfgPath := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf("Port %d\n%s", port, cfg)), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := osexec.Command(Path, "-t", "-f", cfgPath).CombinedOutput(); err != nil {
			t.Fatalf("sshd -t: %v\n%s", err, out)
		}
		err := e.run(t, cfgPath)
		if err == nil {
			e.Addr = fmt.Sprintf("127.0.0.1:%d", port)
			known := filepath.Join(dir, "known_hosts")
			line := fmt.Sprintf("[127.0.0.1]:%d %s", port, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostKey.Public()))))
			if err := os.WriteFile(known, []byte(line+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			e.Config = exec.RouterConfig{
				Local:             &exec.Local{},
				Hosts:             []exec.HostConfig{{Name: Host, Address: "127.0.0.1", Port: port, User: me.Username, Key: userPath}},
				SSHConfigFiles:    []string{filepath.Join(dir, "no_ssh_config")},
				KnownHostsFile:    known,
				HostKeyPolicy:     exec.HostKeyStrict,
				HomeDir:           dir,
				LocalUser:         me.Username,
				ConnectTimeout:    5 * time.Second,
				KeepaliveInterval: 5 * time.Second,
				Grace:             500 * time.Millisecond,
			}
			return e
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

// run starts sshd with cfgPath and waits until it listens.
func (e *Env) run(t testing.TB, cfgPath string) error {
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
			e.mu.Lock()
			e.log.WriteString(sc.Text() + "\n")
			e.mu.Unlock()
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
		return fmt.Errorf("sshd exited: %v\n%s", err, e.Log())
	case <-time.After(10 * time.Second):
		stop()
		return fmt.Errorf("sshd did not start:\n%s", e.Log())
	}
	e.PID = pid
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("sshd log:\n%s", e.Log())
		}
	})
	return nil
}
