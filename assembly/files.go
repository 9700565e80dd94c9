package assembly

import (
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/tools/files"
)

// filesFamily builds file_operations, search_files and bulk_file_transfer:
// on this machine and, with SSH on, over SFTP on the router's pooled
// connections; mutating actions judged by the command policy (g); the
// state directory out of their reach; with a credential store, secrets
// by reference (creds may be nil); local operations in the calling
// principal's view when the sandbox has views.
func (c *Config) filesFamily(router *remote.Router, sb *exec.Sandbox, g *gate.Gate, creds *credentials.Store) (*files.Family, error) {
	cfg := files.Config{Router: router, Sandbox: sb, Gate: g, WorkDir: c.WorkDir, Credentials: creds}
	if c.StateDir != "" {
		cfg.Hidden = []string{c.StateDir}
	}
	return files.New(cfg)
}
