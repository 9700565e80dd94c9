package exec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
)

// ViewConfig asks a [Sandbox] to run every local command inside a view of
// the machine of its principal's own (on Linux: user, mount, PID and IPC
// namespaces beneath Landlock and a seccomp filter), built once per
// principal by a small spawner process and reused by its later commands.
//
// In the view, everything is read-only as a whole tree — system
// directories and protected roots included, however deep — except the
// principal's writable trees: its Roots when it has a roots scope, else
// Writable; nothing but its private /tmp when it is read-only. ReadOnly
// trees inside a writable tree are read-only again. Hidden files and
// directories are covered (an empty file, an empty directory): their
// contents cannot be read whatever the command. Each principal has a
// private /tmp (kept in TmpDir across its calls), its own /dev/pts
// instance and a minimal /dev, a /proc that shows only its own processes,
// and each command runs as the first process of a PID namespace of its
// own, so that nothing it starts outlives it: when the command's leader
// exits, the kernel ends every process it left behind, whatever they did
// to escape (setsid, double forks, a new cgroup, a cleared environment).
// Commands keep no capability, cannot mount, make namespaces, load BPF
// programs or kernel modules, use keyrings or userfaultfd (seccomp), and
// cannot reach abstract unix sockets or signal processes outside their
// call (Landlock, ABI 6).
//
// Views need the program's main function to call [ServeSandboxSpawner]
// first: the spawner is the program itself, started again. Where the
// kernel does not allow unprivileged user namespaces (Ubuntu's AppArmor
// restriction, many containers) or main does not call it, commands run
// in the Landlock sandbox alone and [SandboxStatus] says so.
type ViewConfig struct {
	// Writable lists the trees a principal without a roots scope may
	// change (its work areas), such as the home directory. Everything
	// else is read-only.
	Writable []string
	// ReadOnly lists trees and files that stay read-only even inside a
	// writable tree, such as protected roots beneath the home directory
	// and critical files. List critical files here as well as in
	// SandboxConfig.Critical: in a view, Landlock's rules on a tree bound
	// beneath the private /tmp inherit the rights of /tmp itself.
	ReadOnly []string
	// Hidden lists files and directories no command can read, in addition
	// to SandboxConfig.Hidden: files that hold secrets (token files,
	// client configuration files holding a token, credential and identity
	// files, ~/.pgpass) and same-user service sockets (the agent sockets,
	// $XDG_RUNTIME_DIR, docker.sock). Paths that do not exist are ignored.
	Hidden []string
	// HideSockets lists directories whose unix sockets are all hidden,
	// found when a principal's view is built: /run, say, where a root
	// gateway's commands would otherwise reach systemd and D-Bus.
	HideSockets []string
	// TmpDir holds each principal's private /tmp, one directory each,
	// made owner-only. It should lie in the hidden state directory.
	// Required.
	TmpDir string
	// Principal returns the principal a command runs for, from the call's
	// context. If nil, every command runs for one full principal.
	Principal func(ctx context.Context) Principal `json:"-"`
	// MaxPrincipals bounds the spawners kept at once; beyond it, the
	// longest idle one is ended (it is started again on its principal's
	// next command). If zero, 64.
	MaxPrincipals int

	// sharedProc makes views act as on a kernel without procfs's pidns=
	// option (before 6.18), for tests of that path.
	sharedProc bool
}

// Principal is who a command runs for, as far as its view is concerned.
type Principal struct {
	// Name identifies the principal (a token's name). Principals with the
	// same Name, Roots, ReadOnly and Offline share one view.
	Name string
	// Roots, if set, are the only trees the principal may change (with its
	// private /tmp), instead of ViewConfig.Writable.
	Roots []string
	// ReadOnly leaves the principal nothing writable but its private
	// /tmp: its commands cannot change the machine, whatever they are.
	ReadOnly bool
	// Offline gives the principal's commands a network namespace of their
	// own with only a loopback interface.
	Offline bool
	// Sockets are unix sockets the principal's view keeps although they
	// lie in a ViewConfig.HideSockets directory: docker.sock for a
	// principal that holds the docker family, say (a docker socket is as
	// good as root on the machine).
	Sockets []string
}

// key identifies p's view among a Sandbox's spawners, and names its
// private /tmp.
func (p Principal) key() string {
	roots := slices.Clone(p.Roots)
	slices.Sort(roots)
	h := sha256.New()
	h.Write([]byte(p.Name))
	for _, r := range roots {
		h.Write([]byte{0})
		h.Write([]byte(r))
	}
	var flags [2]byte
	if p.ReadOnly {
		flags[0] = 1
	}
	if p.Offline {
		flags[1] = 1
	}
	h.Write(flags[:])
	socks := slices.Clone(p.Sockets)
	slices.Sort(socks)
	for _, sk := range socks {
		h.Write([]byte{1})
		h.Write([]byte(sk))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// viewSpec is what a spawner needs to build one principal's view: paths
// are absolute and resolved through symbolic links by the gateway.
type viewSpec struct {
	Visible     []string `json:"visible,omitempty"` // bound read-only (work areas a narrower principal may read)
	Writable    []string `json:"writable,omitempty"`
	ReadOnly    []string `json:"read_only,omitempty"`
	Hidden      []string `json:"hidden,omitempty"`
	HideSockets []string `json:"hide_sockets,omitempty"`
	ShowSockets []string `json:"show_sockets,omitempty"` // sockets of HideSockets left in sight
	Tmp         string   `json:"tmp"`                    // the host directory bound at /tmp
	Mount       string   `json:"mount"`                  // an empty host directory the new root is built on
	Offline     bool     `json:"offline,omitempty"`
	// SharedProc: do not try procfs's pidns= option (see ViewConfig's
	// sharedProc).
	SharedProc bool `json:"shared_proc,omitempty"`
}

// cleanPaths returns ps resolved through symbolic links where they exist,
// cleaned, without duplicates, shortest first.
func cleanPaths(ps []string) []string {
	var out []string
	for _, p := range ps {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := strings.Count(a, "/") - strings.Count(b, "/"); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// under reports whether p is dir or lies beneath it.
func under(dir, p string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
