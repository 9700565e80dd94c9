package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
	"github.com/rigout/rigout/internal/proctest"
	"github.com/rigout/rigout/sessions"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// sshStarter returns a Starter on an in-process SSH server, and the
// function that closes the router and the server.
func sshStarter(t *testing.T) (sessions.Starter, func()) {
	t.Helper()
	s, err := sshtest.NewServer(sshtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "id")
	if err := key.Write(keyPath, ""); err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(s.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := remote.NewRouter(remote.RouterConfig{
		Hosts:          []remote.HostConfig{{Name: "far", Address: s.Host(), Port: s.Port(), User: "agent", Key: keyPath}},
		KnownHostsFile: known, HostKeyPolicy: remote.HostKeyStrict, HomeDir: dir, Grace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	closeAll := func() {
		r.Close()
		s.Close()
	}
	tg, err := r.Resolve(context.Background(), "far", "alice")
	if err != nil {
		closeAll()
		t.Fatal(err)
	}
	return sessions.Remote(tg.Route, tg.Runner.(*remote.SSH)), closeAll
}

// TestNoLeakAfterHundredProcesses starts 100 background processes (90
// local, 10 on an SSH host), stops half of them one by one, closes the
// Manager on the rest, and checks that no process (by PID), file
// descriptor or goroutine is left.
func TestNoLeakAfterHundredProcesses(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fds := openFDs(t)
	func() {
		ctx := context.Background()
		ssh, closeSSH := sshStarter(t)
		defer closeSSH()
		m, err := sessions.New(sessions.Config{
			Local:    &exec.Local{UnsafeNoSandbox: true, Grace: 200 * time.Millisecond},
			SpoolDir: t.TempDir(), MaxPerPrincipal: 100, MaxTotal: 100,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close() // on failure; Close again is a no-op
		mk := marker()
		var local []int
		var ps []*sessions.Process
		for i := range 100 {
			st := m.Local()
			if i%10 == 9 {
				st = ssh
			}
			p, err := m.StartOn(ctx, "alice", st, exec.Command{Shell: "echo up; sleep " + mk + " & sleep " + mk + "; wait"})
			if err != nil {
				t.Fatalf("start %d: %v", i, err)
			}
			ps = append(ps, p)
		}
		for i, p := range ps {
			rr, err := p.Read(ctx, sessions.ReadRequest{Wait: 5 * time.Second})
			if err != nil || string(rr.Stdout.Data) != "up\n" {
				t.Fatalf("process %d: %q %v", i, rr.Stdout.Data, err)
			}
			if i%10 != 9 {
				local = append(local, rr.Info.Pid)
			}
		}
		// Each shell starts its two sleeps after printing: wait for all.
		for deadline := time.Now().Add(10 * time.Second); len(proctest.WithArg(mk)) != 200; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d sleeps running, want 200", len(proctest.WithArg(mk)))
			}
		}
		for _, p := range ps[:50] {
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for _, p := range ps[:50] {
			if _, err := p.Wait(wctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		for _, pid := range local {
			if proctest.GroupAlive(pid) {
				t.Errorf("process group %d outlived Close", pid)
			}
		}
		if n := len(proctest.WithArg(mk)); n != 0 {
			t.Errorf("%d sleeps survived", n)
		}
		if _, err := os.Stat(m.SpoolDir()); !os.IsNotExist(err) {
			t.Errorf("spool directory left: %v", err)
		}
	}()
	if now := openFDs(t); now > fds {
		t.Errorf("%d file descriptors open, %d before", now, fds)
	}
}
