package exec

import (
	"errors"
	"log/slog"
	"strings"
)

// ResolveSSHConfig parses ssh_config text and resolves host against it,
// with no file system or network access: the fuzz target's entry point.
func ResolveSSHConfig(text, host string) (*Endpoint, error) {
	sc, err := parseSSHConfig([]byte(text), "fuzz_config", "/nonexistent/home", slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	inv, err := newInventory(nil, sc, "/nonexistent/home", "me", unsafeOptions{})
	if err != nil {
		return nil, err
	}
	spec, err := ParseHostSpec(host)
	if err != nil {
		return nil, err
	}
	return inv.resolve(spec)
}

// PlanSandbox returns the rules a sandbox would add for cfg at abi, as
// "path rights" lines with rights spelled as in the Landlock docs.
func PlanSandbox(cfg SandboxConfig, abi int) ([]string, error) {
	p, err := planSandbox(cfg, handledAccess(abi))
	if err != nil {
		return nil, err
	}
	names := []string{"execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file",
		"make_char", "make_dir", "make_reg", "make_sock", "make_fifo", "make_block", "make_sym",
		"refer", "truncate", "ioctl_dev"}
	var out []string
	for _, r := range p.rules {
		var rights []string
		for i, n := range names {
			if r.access&(1<<i) != 0 {
				rights = append(rights, n)
			}
		}
		if r.access == handledAccess(abi) {
			rights = []string{"all"}
		} else if r.access == handledAccess(abi)&accFile {
			rights = []string{"all-file"}
		}
		out = append(out, r.path+" "+strings.Join(rights, ","))
	}
	return out, nil
}

// UseMarkerTracking makes l track descendants by environment marker, as
// it does when no cgroup can be created.
func UseMarkerTracking(l *Local) {
	l.trackOnce.Do(func() {})
	l.trackMu.Lock()
	l.cgErr = errors.New("cgroups turned off by the test")
	l.trackMu.Unlock()
}
