//go:build linux

package remote_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
)

// ptyTranscript collects what a terminal writes.
type ptyTranscript struct {
	mu   sync.Mutex
	b    bytes.Buffer
	done chan struct{}
}

func readPTY(p *exec.PTY) *ptyTranscript {
	tr := &ptyTranscript{done: make(chan struct{})}
	go func() {
		defer close(tr.done)
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			tr.mu.Lock()
			tr.b.Write(buf[:n])
			tr.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return tr
}

func (tr *ptyTranscript) has(s string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return strings.Contains(tr.b.String(), s)
}

func (tr *ptyTranscript) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.b.String()
}

// TestHelperSSHDTerminal logs in as an unprivileged user and opens a
// terminal on the host through the helper: a shell typed into cannot read
// the login's key file, and what it started (in the background, setsid,
// nohup) ends when the terminal is closed; over plain SSH the login reads
// the key and a setsid child survives (so the test can fail). Under
// require without a helper, no terminal opens.
func TestHelperSSHDTerminal(t *testing.T) {
	login := unprivilegedLogin(t)
	bin := buildHelper(t)
	h := startHelperHost(t, login)
	ctx := context.Background()

	sshDir := filepath.Join(h.home, ".ssh")
	keyFile := filepath.Join(sshDir, "id_sentinel")
	if err := os.Mkdir(sshDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte("SENTINEL-KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.own(t, sshDir, keyFile)

	// The control: plain SSH reads the key, and its setsid child survives.
	// (An unprivileged sshd cannot give a plain session a terminal: it
	// cannot chown the pty. A command channel shows the same powers.)
	plain := sshRunner(t, h.router(t, nil, remote.HelperOff), "alice")
	res, err := plain.Run(ctx, exec.Command{Shell: "cat " + keyFile + "; setsid sleep 431.5 >/dev/null 2>&1 < /dev/null & echo BG"})
	if err != nil || !strings.Contains(string(res.Stdout.Data), "SENTINEL-KEY") {
		t.Fatalf("plain SSH cannot read the sentinel key (%q, %v): the test proves nothing", res.Stdout.Data, err)
	}
	if !eventually(3*time.Second, func() bool { return processWithArg("431.5") }) {
		t.Fatalf("plain SSH's setsid child did not survive its call: the test proves nothing")
	}
	killProcessesWithArg("431.5", h.uid)

	s := sshRunner(t, h.router(t, helperBinaries(bin), remote.HelperRequire), "alice")
	p, err := s.StartPTY(ctx, exec.Command{Shell: "sh", Env: map[string]string{"TERM": "dumb"}}, exec.PTYSize{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Route(), "via rigout-helper") {
		t.Errorf("route %q does not name the helper", p.Route())
	}
	if sb, why := p.Sandbox(); !sb {
		t.Errorf("terminal not sandboxed: %s", why)
	}
	tr := readPTY(p)
	if _, err := io.WriteString(p, "cat "+keyFile+"; tty; echo END-$((6*7))\n"); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { return tr.has("END-42") }) {
		t.Fatalf("no answer from the terminal: %q", tr.String())
	}
	if tr.has("SENTINEL-KEY") || !tr.has("/dev/pts/") {
		t.Errorf("through the helper, the terminal read the key or is no terminal: %q", tr.String())
	}
	t.Logf("transcript: %q", tr.String())
	const tag = "432.5"
	if _, err := io.WriteString(p, "sleep "+tag+" & setsid sleep "+tag+" & nohup sleep "+tag+" >/dev/null 2>&1 & echo BG-$((6*7))\n"); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { return tr.has("BG-42") && processWithArg(tag) }) {
		t.Fatalf("the background sleeps did not start: %q", tr.String())
	}
	if err := p.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	select {
	case <-tr.done:
	case <-time.After(10 * time.Second):
		t.Errorf("the terminal's output did not end after Close")
	}
	if !eventually(5*time.Second, func() bool { return !processWithArg(tag) }) {
		t.Errorf("a descendant outlived the terminal through the helper")
		killProcessesWithArg(tag, h.uid)
	}
	if res, err := p.Wait(); !strings.Contains(res.Route, "via rigout-helper") {
		t.Errorf("result %+v, %v", res, err)
	}

	// Require without a helper: refused, nothing opened.
	s = sshRunner(t, h.router(t, nil, remote.HelperRequire), "alice")
	if _, err := s.StartPTY(ctx, exec.Command{Shell: "sh"}, exec.PTYSize{}); !errors.Is(err, remote.ErrHelperRequired) {
		t.Errorf("require without a helper: %v, want ErrHelperRequired", err)
	}
}

// killProcessesWithArg kills, by PID, the processes of uid with arg in
// their argv (the test's own sleeps that survived, as plain SSH leaves
// them).
func killProcessesWithArg(arg string, uid int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fi, err := os.Stat(filepath.Join("/proc", e.Name()))
		if err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != uid {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(b, []byte{0}) {
			if string(a) == arg {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}
