package assembly

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/hostsfile"
)

// routerConfig returns the SSH router configuration: strict host keys unless the
// flag or the file says otherwise, the user's ssh_config and known_hosts
// (read only), rigout's own known_hosts in the state directory, the agent;
// docker says whether the docker family may be served, for the helper's
// views.
func (c *Config) routerConfig(logger *slog.Logger, docker bool) (*remote.RouterConfig, error) {
	if c.NoSSH {
		return nil, nil
	}
	policy, err := remote.ParseHostKeyPolicy(c.File.HostKeys(c.HostKeys))
	if err != nil {
		return nil, err
	}
	if policy == remote.HostKeyInsecureIgnore {
		logger.Warn("SSH host keys are not checked (insecure-ignore-host-key): any machine can impersonate your hosts")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("ssh: no home directory: %w", err)
	}
	sshConfig, knownHosts := c.SSHConfig, c.KnownHosts
	if sshConfig == "" {
		sshConfig = filepath.Join(home, ".ssh", "config")
	}
	if knownHosts == "" {
		knownHosts = filepath.Join(home, ".ssh", "known_hosts")
	}
	hosts, err := hostsfile.Router(c.File, c.StateDir, logger.Warn)
	if err != nil {
		return nil, err
	}
	exe, _ := os.Executable() // a release ships the helpers beside it
	helper, err := HelperConfig(c.File.SSH.Helper, func(ctx context.Context) exec.Principal {
		return viewPrincipal(ctx, docker && c.File.Families.Docker)
	}, exe)
	if err != nil {
		return nil, err
	}
	return &remote.RouterConfig{
		Helper:              helper,
		Hosts:               hosts,
		SSHConfigFiles:      []string{sshConfig},
		UserKnownHostsFiles: []string{knownHosts},
		KnownHostsFile:      filepath.Join(c.StateDir, "known_hosts"),
		HostKeyPolicy:       policy,
		AgentSocket:         os.Getenv("SSH_AUTH_SOCK"),
		PassphraseEnv:       "RIGOUT_SSH_PASSPHRASE",
		Getenv:              c.Getenv,
		HomeDir:             home,
		AutoHosts:           c.File.SSH.AutoHosts,
		AutoLocal:           c.File.SSH.AutoLocal,
		UnsafeProxyCommand:  c.File.SSH.UnsafeProxyCommand,
		Logger:              logger,
	}, nil
}

// HelperConfig reads the binaries of the configuration's "ssh.helper"
// (h may be nil) into a Router's HelperConfig. Without configured
// binaries it takes the rigout-helper-linux-<arch> files a release ships
// beside exe, the running program (remote.FindHelperBinaries), and its
// Origin says where none was found.
func HelperConfig(h *config.SSHHelper, principal func(context.Context) exec.Principal, exe string) (*remote.HelperConfig, error) {
	if h == nil {
		h = &config.SSHHelper{}
	}
	var cfg *remote.HelperConfig
	if len(h.Binaries) == 0 {
		found, err := remote.FindHelperBinaries(exe)
		if err != nil {
			return nil, fmt.Errorf("config: ssh.helper: %w", err)
		}
		cfg = found
	} else {
		cfg = &remote.HelperConfig{Binaries: map[string][]byte{}, Origin: "ssh.helper.binaries"}
	}
	cfg.CacheDir, cfg.Hidden, cfg.Principal = h.CacheDir, h.Hidden, principal
	for platform, path := range h.Binaries {
		if !strings.HasPrefix(platform, "linux/") {
			return nil, fmt.Errorf("config: ssh.helper.binaries: %q: only linux/<arch> hosts run the helper", platform)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: ssh.helper.binaries: %s: %w", platform, err)
		}
		cfg.Binaries[platform] = b
	}
	return cfg, nil
}
