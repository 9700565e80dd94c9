package assembly

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/hostsfile"
)

// routerConfig returns the SSH router configuration: strict host keys unless the
// flag or the file says otherwise, the user's ssh_config and known_hosts
// (read only), rigout's own known_hosts in the state directory, the agent;
// docker says whether the docker family may be served, for the helper's
// views.
func (c *Config) routerConfig(logger *slog.Logger, docker bool) (*exec.RouterConfig, error) {
	if c.NoSSH {
		return nil, nil
	}
	policy, err := exec.ParseHostKeyPolicy(c.File.HostKeys(c.HostKeys))
	if err != nil {
		return nil, err
	}
	if policy == exec.HostKeyInsecureIgnore {
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
	helper, err := helperConfig(c.File.SSH.Helper, func(ctx context.Context) exec.Principal {
		return viewPrincipal(ctx, docker && c.File.Families.Docker)
	})
	if err != nil {
		return nil, err
	}
	return &exec.RouterConfig{
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

// helperConfig reads the binaries into the Router's HelperConfig; nil
// when no helper is configured.
func helperConfig(h *config.SSHHelper, principal func(context.Context) exec.Principal) (*exec.HelperConfig, error) {
	if h == nil {
		return nil, nil
	}
	if len(h.Binaries) == 0 {
		return nil, errors.New("config: ssh.helper: no binaries (\"linux/amd64\": \"/path/to/rigout-helper\")")
	}
	cfg := &exec.HelperConfig{Binaries: map[string][]byte{}, CacheDir: h.CacheDir, Hidden: h.Hidden, Principal: principal}
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
