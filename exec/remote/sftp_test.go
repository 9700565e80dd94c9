package remote_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// TestSSHDSFTP leases the SFTP client of a pooled connection to the real
// sshd: leases share one client and one login, run concurrent requests,
// and the client closes with the router.
func TestSSHDSFTP(t *testing.T) {
	leakCheck(t)
	e, me := sshdEnv(t)
	d := startSSHD(t, sshdOpts{authorized: []*sshtest.Key{e.key}})
	for _, l := range d.knownLines() {
		e.appendKnown(l)
	}
	r := e.router(func(c *remote.RouterConfig) { c.LocalUser = me; c.Local = &exec.Local{} })
	ctx := context.Background()

	if _, err := r.SFTP(ctx, "local", "alice"); !errors.Is(err, remote.ErrNotSSH) {
		t.Fatalf("SFTP(local) = %v, want ErrNotSSH", err)
	}
	dir := t.TempDir()
	a, err := r.SFTP(ctx, d.addr, "alice")
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.SFTP(ctx, d.addr, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if a.Client != b.Client {
		t.Error("two leases on one pooled connection got different SFTP clients")
	}
	if a.Route == "" || a.Host != d.addr {
		t.Errorf("lease route %q host %q", a.Route, a.Host)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			l := a
			if i%2 == 1 {
				l = b
			}
			p := filepath.Join(dir, "f"+string(rune('0'+i)))
			f, err := l.Client.Create(p)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := f.Write([]byte("data")); err != nil {
				t.Error(err)
			}
			f.Close()
		})
	}
	wg.Wait()
	for i := range 8 {
		if b, err := os.ReadFile(filepath.Join(dir, "f"+string(rune('0'+i)))); err != nil || string(b) != "data" {
			t.Errorf("file %d: %q %v", i, b, err)
		}
	}
	a.Release()
	a.Release() // twice is harmless
	b.Release()
	// A later lease reuses the client; a command shares the connection.
	c, err := r.SFTP(ctx, d.addr, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if c.Client != b.Client {
		t.Error("the SFTP client was not kept with the pooled connection")
	}
	res := runOn(t, r, d.addr, exec.Command{Argv: []string{"true"}})
	if res.ExitCode != 0 {
		t.Fatalf("command beside SFTP: %+v", res)
	}
	c.Release()
	if n := d.accepted(); n != 1 {
		t.Errorf("sshd accepted %d logins, want 1", n)
	}
	r.Close()
	if _, err := c.Client.Getwd(); err == nil {
		if _, err := c.Client.Stat(dir); err == nil {
			t.Error("the SFTP client still works after Router.Close")
		}
	}
}
