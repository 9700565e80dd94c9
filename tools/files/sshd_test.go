package files_test

import (
	"slices"
	"testing"

	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/sshdtest"
)

// These tests reach files over the real OpenSSH server's SFTP subsystem
// (internal/sshdtest: skips loudly without sshd, fails under
// RIGOUT_REQUIRE_SSHD=1).

// sshdHost is a running sshd and a router configuration that reaches it
// as host "sftp1", logging in as the current user.
type sshdHost struct {
	port int
	key  string // the user's private key file
	cfg  remote.RouterConfig
}

func startSSHD(t testing.TB) *sshdHost {
	t.Helper()
	s := sshdtest.Start(t, sshdtest.Options{MaxSessions: 50})
	cfg := s.Router
	cfg.Hosts = slices.Clone(cfg.Hosts)
	cfg.Hosts[0].Name = "sftp1"
	return &sshdHost{port: s.Port, key: cfg.Hosts[0].Key, cfg: cfg}
}
