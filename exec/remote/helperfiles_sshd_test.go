//go:build linux

package remote_test

import (
	"context"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec/remote"
)

// TestHelperSSHDFilesInView logs in as an unprivileged user: file
// operations through the helper run in the principal's view on the host,
// so that the login's key directory and a configured hidden file inside
// the operation's root are out of their reach (read, list, write), while
// the rest of the root works; plain SFTP reads the key (so the test can
// fail).
func TestHelperSSHDFilesInView(t *testing.T) {
	login := unprivilegedLogin(t)
	bin := buildHelper(t)
	h := startHelperHost(t, login)
	ctx := context.Background()

	sshDir := filepath.Join(h.home, ".ssh")
	keyFile := filepath.Join(sshDir, "id_sentinel")
	hidden := filepath.Join(h.home, "app.env")
	plainFile := filepath.Join(h.home, "notes.txt")
	if err := os.Mkdir(sshDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{keyFile: "SENTINEL-KEY\n", hidden: "SENTINEL-ENV\n", plainFile: "notes\n"} {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h.own(t, sshDir, keyFile, hidden, plainFile)
	cfg := helperBinaries(bin)
	cfg.Hidden = []string{hidden}
	r := h.router(t, cfg, remote.HelperRequire)
	s := sshRunner(t, r, "alice")
	info, err := s.HelperInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Commands != "view" {
		t.Skipf("SKIP: no per-principal view on this kernel (%s)", info.Sandbox)
	}
	if !strings.Contains(info.Files, "in the principal's view") {
		t.Errorf("hello files %q, want the principal's view", info.Files)
	}

	lease, err := r.SFTP(ctx, "box", "alice")
	if err != nil {
		t.Fatal(err)
	}
	f, err := lease.Client.Open(keyFile)
	if err != nil {
		t.Fatalf("plain SFTP cannot open the sentinel key (%v): the test proves nothing", err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	lease.Release()
	if string(b) != "SENTINEL-KEY\n" {
		t.Fatalf("plain SFTP read %q: the test proves nothing", b)
	}

	files := s.Files()
	root := h.home
	if data, err := files.ReadFile(ctx, root, "notes.txt", 0); err != nil || string(data) != "notes\n" {
		t.Fatalf("read in the root: %q, %v", data, err)
	}
	if err := files.WriteFile(ctx, root, "new.txt", []byte("made"), 0o600, 0); err != nil {
		t.Errorf("write in the root: %v", err)
	} else if b, err := os.ReadFile(filepath.Join(root, "new.txt")); err != nil || string(b) != "made" {
		t.Errorf("written file: %q, %v", b, err)
	}
	for _, name := range []string{".ssh/id_sentinel", keyFile, "app.env"} {
		if data, err := files.ReadFile(ctx, root, name, 0); err == nil || strings.Contains(string(data), "SENTINEL") {
			t.Errorf("read %s through the helper: %q, %v; want refused", name, data, err)
		}
	}
	if infos, err := files.ReadDir(ctx, root, ".ssh"); err == nil && len(infos) > 0 {
		t.Errorf("listed the hidden key directory: %d entries", len(infos))
	}
	if err := files.WriteFile(ctx, root, ".ssh/authorized_keys", []byte("ssh-ed25519 AAAA planted"), 0o600, 0); err == nil {
		t.Errorf("wrote into the hidden key directory through the helper")
	}
	if _, err := os.Stat(filepath.Join(sshDir, "authorized_keys")); err == nil {
		t.Errorf("a file appeared in the login's key directory")
	}
}

// BenchmarkHelperSSHDFiles compares a warm read of a small file beneath a
// root over plain SFTP (open, read, close) with the same read through the
// helper, which runs it in the principal's view on the host.
func BenchmarkHelperSSHDFiles(b *testing.B) {
	me, err := user.Current()
	if err != nil {
		b.Fatal(err)
	}
	bin := buildHelper(b)
	h := startHelperHost(b, me)
	ctx := context.Background()
	root := filepath.Join(h.dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		b.Fatal(err)
	}
	name := filepath.Join(root, "f.txt")
	if err := os.WriteFile(name, []byte("small file\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	r := h.router(b, helperBinaries(bin), remote.HelperRequire)
	files := sshRunner(b, r, "alice").Files()
	if _, err := files.ReadFile(ctx, root, "f.txt", 0); err != nil { // warm: helper and view up
		b.Fatal(err)
	}
	lease, err := r.SFTP(ctx, "box", "alice")
	if err != nil {
		b.Fatal(err)
	}
	defer lease.Release()
	b.Run("sftp", func(b *testing.B) {
		for b.Loop() {
			f, err := lease.Client.Open(name)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("helper", func(b *testing.B) {
		for b.Loop() {
			if _, err := files.ReadFile(ctx, root, "f.txt", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
