package exec

import (
	"errors"
	"os"
	"strings"
)

// PlanSandbox returns the rules a sandbox would add for cfg at abi, as
// "path rights" lines with rights spelled as in the Landlock docs.
func PlanSandbox(cfg SandboxConfig, abi int) ([]string, error) {
	p, err := planSandbox(cfg, handledAccess(abi))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range p.rules {
		out = append(out, r.path+" "+rightsString(r.access, abi))
	}
	return out, nil
}

// EffectiveRights returns what a sandbox for cfg at abi grants on each
// of paths, as Landlock computes it: the union of the rules on the path
// and on every directory above it, file rights only for a file.
func EffectiveRights(cfg SandboxConfig, abi int, paths ...string) (map[string]string, error) {
	p, err := planSandbox(cfg, handledAccess(abi))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, path := range paths {
		var acc uint64
		for _, r := range p.rules {
			if r.path == path || r.path == "/" || strings.HasPrefix(path, r.path+"/") {
				acc |= r.access
			}
		}
		if fi, err := os.Lstat(path); err == nil && !fi.IsDir() {
			acc &= accFile
		}
		out[path] = rightsString(acc, abi)
	}
	return out, nil
}

func rightsString(access uint64, abi int) string {
	switch access {
	case handledAccess(abi):
		return "all"
	case handledAccess(abi) & accFile:
		return "all-file"
	}
	names := []string{"execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file",
		"make_char", "make_dir", "make_reg", "make_sock", "make_fifo", "make_block", "make_sym",
		"refer", "truncate", "ioctl_dev"}
	var rights []string
	for i, n := range names {
		if access&(1<<i) != 0 {
			rights = append(rights, n)
		}
	}
	return strings.Join(rights, ",")
}

// UseMarkerTracking makes l track descendants by environment marker, as
// it does when no cgroup can be created.
func UseMarkerTracking(l *Local) {
	l.trackOnce.Do(func() {})
	l.trackMu.Lock()
	l.cgErr = errors.New("cgroups turned off by the test")
	l.trackMu.Unlock()
}

// Direct is direct, for the direct-exec table test.
func Direct(argv, env []string, dir string) (string, []string, bool) { return direct(argv, env, dir) }

// ViewsWithSharedProc makes c's views act as on a kernel without procfs's
// pidns= option: each call sees its principal's /proc.
func ViewsWithSharedProc(c *ViewConfig) { c.sharedProc = true }

// SeatbeltWith makes c's Sandbox confine its commands with the Seatbelt
// wiring macOS uses, running path as sandbox-exec.
func SeatbeltWith(c *SandboxConfig, path string) { c.seatbeltExec = path }
