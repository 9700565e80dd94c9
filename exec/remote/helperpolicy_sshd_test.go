//go:build linux

package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/validate"
)

// TestHelperSSHDPolicyLinks logs in as an unprivileged user: the command
// policy, given the host's links through the helper
// (SSH.PolicyReadlink), refuses a delete through a link that exists on the
// host to a protected root, which it allows without them (it cannot know
// the link). Nothing runs: the commands are only judged.
func TestHelperSSHDPolicyLinks(t *testing.T) {
	login := unprivilegedLogin(t)
	bin := buildHelper(t)
	h := startHelperHost(t, login)
	ctx := context.Background()

	base := filepath.Join(h.home, "links")
	root := filepath.Join(base, "precious")
	if err := os.MkdirAll(filepath.Join(root, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	plink := filepath.Join(base, "plink")
	if err := os.Symlink(root, plink); err != nil {
		t.Fatal(err)
	}
	h.own(t, base, root, filepath.Join(root, "keep"), plink)

	s := sshRunner(t, h.router(t, helperBinaries(bin), remote.HelperRequire), "alice")
	rl := s.PolicyReadlink(ctx)
	if rl == nil {
		t.Fatal("no readlink through the helper")
	}
	if got, err := rl(plink); err != nil || got != root {
		t.Fatalf("readlink %s on the host = %q, %v; want %q", plink, got, err, root)
	}
	if _, err := rl(filepath.Join(h.home, ".ssh")); err == nil {
		t.Errorf("readlink of a hidden or missing path succeeded")
	}
	p := &validate.Policy{ProtectedRoots: []string{"/", root}}
	tests := []struct {
		name    string
		cmd     string
		opts    validate.Options
		allowed bool
	}{
		{"without the host's links", "rm -rf " + plink + "/", validate.Options{}, true},
		{"with them", "rm -rf " + plink + "/", validate.Options{Readlink: rl}, false},
		{"cd into the link", "cd " + plink + " && rm -rf *", validate.Options{Readlink: rl}, false},
		{"inside the root", "rm -rf " + plink + "/keep", validate.Options{Readlink: rl}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := p.Check(tt.cmd, tt.opts); d.Allowed != tt.allowed {
				t.Errorf("%s: allowed %v (%s: %s), want %v", tt.cmd, d.Allowed, d.Rule, d.Reason, tt.allowed)
			}
		})
	}

	// Without the helper there is nothing to ask.
	if rl := sshRunner(t, h.router(t, nil, remote.HelperOff), "alice").PolicyReadlink(ctx); rl != nil {
		t.Errorf("plain SSH offers a readlink")
	}
}
