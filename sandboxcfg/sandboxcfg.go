package sandboxcfg

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/validate"
)

// workAreas are protected roots the command policy guards (deleting them or
// all their entries is refused) that the kernel sandbox must not freeze:
// its protected roots keep their direct entries from being deleted or
// renamed, and commands create and remove files directly in these all the
// time. Their contents stay guarded by the policy.
var workAreas = []string{"/tmp", "/var/tmp", "/dev", "/dev/shm", "/proc", "/sys", "/run", "/mnt", "/media"}

// Derive derives the kernel sandbox from the command policy and the
// state directory:
//   - protected roots: the policy's, less the work areas and the home
//     directory (files directly in it are edited and replaced all the time);
//   - critical files: the policy's patterns, globs expanded now ("/x/**"
//     makes /x read-only);
//   - hidden: the state directory (token, ledger, key, connection file),
//     unless it lies under a work area or the home directory: Landlock
//     cannot hide a directory without taking the right to create files
//     from every directory above it, which would break ordinary work
//     there; the note says so;
//   - sealed: the program and library directories that hold critical files
//     (/usr/bin for /bin/sh, /usr/lib/x86_64-linux-gnu for libc): every
//     file in them is kept as a critical file is, and nothing can be
//     created in them, for a Landlock rule per subdirectory instead of one
//     per file (about 1,300 fewer rules on Debian, 0.5ms of every call);
//   - read-only, for a gateway running as root: /proc and /sys, so that
//     root commands cannot reconfigure the kernel (/proc/sys,
//     /proc/sysrq-trigger) or leave their cgroup. (Only /proc/sys would
//     take a rule for every process listed in /proc, and processes started
//     later, each command's own included, get /proc's rights anyway.)
func Derive(policy *validate.Policy, stateDir string) (cfg exec.SandboxConfig, notes []string) {
	home, _ := os.UserHomeDir()
	roots := validate.DefaultProtectedRoots()
	critical := validate.DefaultCriticalFiles()
	if policy != nil {
		if policy.ProtectedRoots != nil {
			roots = policy.ProtectedRoots
		}
		if policy.CriticalFiles != nil {
			critical = policy.CriticalFiles
		}
	}
	excluded := func(p string) bool {
		return slices.Contains(workAreas, p) || (home != "" && (p == home || within(home, p)))
	}
	for _, r := range roots {
		if r == "~" || strings.HasPrefix(r, "~/") {
			if home == "" {
				continue
			}
			r = filepath.Join(home, r[1:])
		}
		if r = filepath.Clean(r); !excluded(r) {
			cfg.Protected = append(cfg.Protected, r)
		}
	}
	var files []string
	glob := newGlobber()
	for _, pat := range critical {
		if dir, ok := strings.CutSuffix(pat, "/**"); ok {
			cfg.ReadOnly = append(cfg.ReadOnly, dir)
			continue
		}
		if !strings.ContainsAny(pat, "*?[") {
			files = append(files, pat)
			continue
		}
		files = append(files, glob.matches(pat)...)
	}
	for _, f := range files {
		real, err := filepath.EvalSymlinks(f)
		if err == nil && ProgramDir(filepath.Dir(real)) {
			if dir := filepath.Dir(real); !slices.Contains(cfg.Sealed, dir) {
				cfg.Sealed = append(cfg.Sealed, dir)
			}
			continue
		}
		cfg.Critical = append(cfg.Critical, f)
	}
	if stateDir != "" {
		real, err := filepath.EvalSymlinks(stateDir)
		if err != nil {
			real = stateDir
		}
		under := ""
		for _, w := range append(slices.Clone(workAreas), home) {
			if w != "" && within(w, real) {
				under = w
			}
		}
		if under == "" {
			cfg.Hidden = append(cfg.Hidden, real)
		} else {
			notes = append(notes, "the state directory "+real+" is under "+under+
				", where commands must be able to create files, so the kernel sandbox cannot hide it; start rigout with --state-dir /var/lib/rigout (or another directory outside work areas) to hide it")
		}
	}
	if os.Geteuid() == 0 {
		cfg.ReadOnly = append(cfg.ReadOnly, "/proc", "/sys")
	}
	return cfg, notes
}

// globber expands glob patterns as filepath.Glob does, listing each
// directory once: the default critical files glob /lib and /usr/lib, and
// their multiarch directories, which merged-/usr systems make one
// directory of a few thousand entries, read on every start.
type globber struct {
	names map[string][]string // real directory → its entries, unsorted
}

func newGlobber() *globber { return &globber{names: map[string][]string{}} }

// matches returns what filepath.Glob(pat) returns, ignoring its error (a
// malformed pattern matches nothing).
func (g *globber) matches(pat string) []string {
	raw, file := filepath.Split(pat)
	dir := filepath.Clean(raw)
	if strings.ContainsAny(dir, "*?[\\") || !strings.HasPrefix(dir, "/") {
		m, _ := filepath.Glob(pat) // a pattern in a directory part: the general case
		return m
	}
	if _, err := filepath.Match(file, ""); err != nil {
		return nil
	}
	real, err := filepath.EvalSymlinks(raw) // as the kernel resolves it: a link before ".."
	if err != nil {
		return nil
	}
	names, ok := g.names[real]
	if !ok {
		if d, err := os.Open(real); err == nil {
			names, _ = d.Readdirnames(-1)
			d.Close()
		}
		g.names[real] = names
	}
	var out []string
	for _, n := range names {
		if ok, _ := filepath.Match(file, n); ok {
			out = append(out, filepath.Join(dir, n))
		}
	}
	slices.Sort(out)
	return out
}

// ProgramDir reports whether dir is a system directory of programs or
// libraries, where files are replaced by package managers rather than
// edited: /usr/bin, /usr/sbin, /usr/lib, /usr/lib32, /usr/lib64,
// /usr/libexec, their counterparts in / (not merged into /usr on every
// system), and multiarch library directories such as
// /usr/lib/x86_64-linux-gnu.
func ProgramDir(dir string) bool {
	for _, prefix := range []string{"/usr", ""} {
		rest, ok := strings.CutPrefix(dir, prefix)
		if !ok {
			continue
		}
		switch rest {
		case "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libexec":
			return true
		}
		if triplet, ok := strings.CutPrefix(rest, "/lib/"); ok && strings.Contains(triplet, "-linux-") && !strings.Contains(triplet, "/") {
			return true
		}
	}
	return false
}

// within reports whether p lies strictly beneath dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// systemTrees are trees a gateway's working directory never makes
// writable in a view.
var systemTrees = []string{"/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys", "/dev", "/run", "/var/lib"}

// ClientConfigFiles are the MCP clients' configuration files `rigout
// connect --write` may put a token in, relative to the home directory.
var ClientConfigFiles = []string{
	".claude.json", ".cursor/mcp.json", ".codex/config.toml",
	".config/Code/User/mcp.json", ".config/Claude/claude_desktop_config.json",
}

// Views derives the per-principal views of the rigout binary's local
// commands (exec.ViewConfig):
//   - writable, for a principal without a roots scope: the home directory
//     and the gateway's working directory (unless that is / or lies in a
//     system tree), plus extraWritable;
//   - read-only as whole trees inside those: the policy's protected roots;
//   - hidden: the state directory, the files that hold secrets the gateway
//     uses or wrote (its configuration file and credential files, passed
//     as extraHidden; the MCP clients' configuration files; SSH private
//     keys in ~/.ssh; ~/.pgpass; ~/.gnupg) and the same-user runtime
//     directory ($XDG_RUNTIME_DIR, /run/user/UID);
//   - every unix socket under /run (systemd, D-Bus, docker.sock, agents);
//   - each principal's private /tmp in <state>/sandbox/tmp.
//
// Principal is left to the caller, which knows its transport's identities.
func Views(policy *validate.Policy, stateDir string, extraWritable, extraHidden []string) *exec.ViewConfig {
	home, _ := os.UserHomeDir()
	if abs, err := filepath.Abs(stateDir); err == nil {
		stateDir = abs
	}
	v := &exec.ViewConfig{TmpDir: filepath.Join(stateDir, "sandbox", "tmp"), HideSockets: []string{"/run"}}
	if home != "" {
		v.Writable = append(v.Writable, home)
	}
	if wd, err := os.Getwd(); err == nil && wd != "/" && !slices.ContainsFunc(systemTrees, func(s string) bool { return wd == s || within(s, wd) }) {
		v.Writable = append(v.Writable, wd)
	}
	v.Writable = append(v.Writable, extraWritable...)
	roots := validate.DefaultProtectedRoots()
	if policy != nil && policy.ProtectedRoots != nil {
		roots = policy.ProtectedRoots
	}
	for _, r := range roots {
		if r == "~" || strings.HasPrefix(r, "~/") {
			if home == "" {
				continue
			}
			r = filepath.Join(home, r[1:])
		}
		v.ReadOnly = append(v.ReadOnly, filepath.Clean(r))
	}
	v.Hidden = append(v.Hidden, stateDir)
	v.Hidden = append(v.Hidden, extraHidden...)
	if home != "" {
		for _, f := range ClientConfigFiles {
			v.Hidden = append(v.Hidden, filepath.Join(home, f))
		}
		v.Hidden = append(v.Hidden, filepath.Join(home, ".pgpass"), filepath.Join(home, ".gnupg"))
		keys, _ := filepath.Glob(filepath.Join(home, ".ssh", "id_*"))
		for _, k := range keys {
			if !strings.HasSuffix(k, ".pub") {
				v.Hidden = append(v.Hidden, k)
			}
		}
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		v.Hidden = append(v.Hidden, rt)
	}
	v.Hidden = append(v.Hidden, filepath.Join("/run/user", strconv.Itoa(os.Getuid())))
	return v
}
