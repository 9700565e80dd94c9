package files_test

import (
	"bufio"
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
	"github.com/rigout/rigout/exec/sshtest"
)

// These tests reach files over the real OpenSSH server's SFTP subsystem:
// `sshd -D -e -f <config>` on a free 127.0.0.1 port, with throwaway keys
// in t.TempDir(), stopped by its PID at cleanup. Without sshd they skip
// loudly, unless RIGOUT_REQUIRE_SSHD=1 makes that a failure (CI).

const sshdPath = "/usr/sbin/sshd"

func requireSSHD(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(sshdPath); err != nil {
		if os.Getenv("RIGOUT_REQUIRE_SSHD") == "1" {
			t.Fatalf("sshd not installed (%v) and RIGOUT_REQUIRE_SSHD=1", err)
		}
		t.Skip("SKIPPING OpenSSH SFTP TESTS: sshd not installed: apt-get install openssh-server (set RIGOUT_REQUIRE_SSHD=1 to make this a failure)")
	}
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/run/sshd"); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
				t.Fatalf("create /run/sshd: %v", err)
			}
		}
	}
}

// sshdHost is a running sshd and a router configuration that reaches it
// as host "sftp1", logging in as the current user.
type sshdHost struct {
	addr string
	port int
	pid  int
	key  string // the user's private key file
	cfg  exec.RouterConfig
}

func startSSHD(t testing.TB) *sshdHost {
	t.Helper()
	requireSSHD(t)
	dir := t.TempDir()
	hostKey, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	userKey, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	hk := filepath.Join(dir, "host_key")
	uk := filepath.Join(dir, "id_ed25519")
	if err := hostKey.Write(hk, ""); err != nil {
		t.Fatal(err)
	}
	if err := userKey.Write(uk, ""); err != nil {
		t.Fatal(err)
	}
	ak := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(ak, []byte(userKey.AuthorizedKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		cfgPath := filepath.Join(dir, "sshd_config")
		cfg := fmt.Sprintf("Port %d\nHostKey %s\nListenAddress 127.0.0.1\nPidFile none\nUsePAM no\nStrictModes no\n"+
			"AuthorizedKeysFile %s\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"+
			"KbdInteractiveAuthentication no\nPrintMotd no\nUseDNS no\nLogLevel INFO\nMaxSessions 50\n"+
			"Subsystem sftp internal-sftp\n", port, hk, ak)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := osexec.Command(sshdPath, "-t", "-f", cfgPath).CombinedOutput(); err != nil {
			t.Fatalf("sshd -t: %v\n%s", err, out)
		}
		h, err := runSSHD(t, cfgPath, port)
		if err != nil {
			if attempt == 2 {
				t.Fatal(err)
			}
			continue
		}
		h.key = uk
		known := filepath.Join(dir, "known_hosts")
		line := "[127.0.0.1]:" + fmt.Sprint(port) + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostKey.Public())))
		if err := os.WriteFile(known, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		h.cfg = exec.RouterConfig{
			Local:          &exec.Local{},
			Hosts:          []exec.HostConfig{{Name: "sftp1", Address: "127.0.0.1", Port: port, User: u.Username, Key: uk}},
			KnownHostsFile: known,
			HostKeyPolicy:  exec.HostKeyStrict,
			HomeDir:        dir,
		}
		return h
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

func runSSHD(t testing.TB, cfgPath string, port int) (*sshdHost, error) {
	cmd := osexec.Command(sshdPath, "-D", "-e", "-f", cfgPath)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &sshdHost{port: port, addr: fmt.Sprintf("127.0.0.1:%d", port), pid: cmd.Process.Pid}
	var mu sync.Mutex
	var log strings.Builder
	ready := make(chan struct{})
	var logDone sync.WaitGroup
	logDone.Go(func() {
		sc := bufio.NewScanner(stderr)
		var once sync.Once
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
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
	logText := func() string {
		mu.Lock()
		defer mu.Unlock()
		return log.String()
	}
	stop := func() {
		_ = syscall.Kill(h.pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(h.pid, syscall.SIGKILL)
			<-exited
		}
	}
	select {
	case <-ready:
	case err := <-exited:
		return nil, fmt.Errorf("sshd exited: %v\n%s", err, logText())
	case <-time.After(10 * time.Second):
		stop()
		return nil, fmt.Errorf("sshd did not start:\n%s", logText())
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("sshd log:\n%s", logText())
		}
	})
	return h, nil
}
