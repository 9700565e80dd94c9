package validate

import (
	"strings"
)

// homeDir stands for the home directory of whoever runs the command: ~,
// ~user and $HOME resolve to it. The checker never looks at the real
// environment, so the home directory is symbolic.
const homeDir = "/home/~"

// DefaultProtectedRoots returns the protected roots used when
// [Policy.ProtectedRoots] is nil: / and the system directories under it,
// the main directories under /usr and /var/lib, and the home directory.
func DefaultProtectedRoots() []string {
	return append([]string(nil), defaultRoots[:]...)
}

// DefaultDevices returns the raw-device patterns used when [Policy.Devices]
// is nil.
func DefaultDevices() []string {
	return append([]string(nil), defaultDevices[:]...)
}

// DefaultCriticalFiles returns the patterns used when [Policy.CriticalFiles]
// is nil.
func DefaultCriticalFiles() []string {
	return append([]string(nil), defaultCritical[:]...)
}

var defaultRoots = [...]string{
	"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
	"/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp",
	"/usr", "/var",
	"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/share",
	"/var/lib", "/etc/ssh", "/etc/systemd", "/boot/efi",
	"/System", "/Library", "/Applications", "/Users", "/Volumes", "/private",
	"/private/etc", "/private/var", "/nix", "/nix/store", "/snap",
	"~",
}

var defaultDevices = [...]string{
	"/dev/sd*", "/dev/hd*", "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*",
	"/dev/md*", "/dev/dm-*", "/dev/mapper/*", "/dev/loop*", "/dev/nbd*", "/dev/zd*",
	"/dev/rbd*", "/dev/bcache*", "/dev/mtd*", "/dev/ubd*", "/dev/sr*", "/dev/fd[0-9]*", "/dev/sg[0-9]*",
	"/dev/disk*", "/dev/rdisk*", "/dev/disk/*/*", "/dev/block/*", "/dev/root",
	"/dev/mem", "/dev/kmem", "/dev/port", "/proc/kcore",
}

var defaultCritical = [...]string{
	"/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow",
	"/etc/passwd-", "/etc/shadow-", "/etc/group-", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d/**", "/etc/doas.conf",
	"/etc/fstab", "/etc/crypttab", "/etc/ld.so.preload", "/etc/ld.so.conf",
	"/etc/pam.d/**", "/etc/security/**", "/etc/nsswitch.conf",
	"/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d/**",
	"/etc/default/grub", "/etc/grub.d/**", "/etc/inittab",
	"/boot/**", "/efi/**",
	"/bin/sh", "/bin/bash", "/usr/bin/sh", "/usr/bin/bash", "/usr/bin/sudo", "/usr/bin/env",
	"/lib/ld-linux*", "/lib64/ld-linux*", "/usr/lib/ld-linux*", "/usr/lib64/ld-linux*",
	"/lib/x86_64-linux-gnu/libc.so*", "/usr/lib/x86_64-linux-gnu/libc.so*",
	"/private/etc/passwd", "/private/etc/master.passwd", "/private/etc/sudoers",
}

// The default tables compiled once; never modified.
var (
	compiledDefaultDevices  = compileList(defaultDevices[:])
	compiledDefaultCritical = compileList(defaultCritical[:])
	compiledDefaultRoots    = rootList(defaultRoots[:])
)

func compileList(list []string) [][]ptok {
	out := make([][]ptok, 0, len(list))
	for _, s := range list {
		out = append(out, compilePattern(expandHome(s)))
	}
	return out
}

func rootList(list []string) []string {
	out := make([]string, 0, len(list))
	for _, r := range list {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		out = append(out, cleanPath(expandHome(r)))
	}
	return out
}

func expandHome(s string) string {
	if s == "~" {
		return homeDir
	}
	if strings.HasPrefix(s, "~/") {
		return homeDir + s[1:]
	}
	return s
}

// showPath renders an internal path for people: the symbolic home
// directory is shown as "~".
func showPath(s string) string {
	if strings.HasPrefix(s, homeDir) {
		return "~" + s[len(homeDir):]
	}
	return s
}

// systemBinDirs are the directories where a bare allow-list name also
// matches an absolute command path.
var systemBinDirs = [...]string{
	"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin",
	"/opt/homebrew/bin", "/run/current-system/sw/bin",
}

// config is a Policy prepared for one check.
type config struct {
	mode     Mode
	actions  map[string]Action
	allow    map[string]bool
	roots    []string
	devices  [][]ptok
	critical [][]ptok
}

func (p *Policy) compile() *config {
	c := &config{
		roots:    compiledDefaultRoots,
		devices:  compiledDefaultDevices,
		critical: compiledDefaultCritical,
	}
	if p == nil {
		return c
	}
	c.mode = p.Mode
	c.actions = p.Rules
	if p.ProtectedRoots != nil {
		c.roots = rootList(p.ProtectedRoots)
	}
	if p.Devices != nil {
		c.devices = compileList(p.Devices)
	}
	if p.CriticalFiles != nil {
		c.critical = compileList(p.CriticalFiles)
	}
	if c.mode == ModeAllow {
		c.allow = make(map[string]bool, len(p.Allow))
		for _, a := range p.Allow {
			a = strings.TrimSpace(a)
			if a == "" {
				continue
			}
			if strings.Contains(a, "/") {
				a = cleanPath(a)
			}
			c.allow[a] = true
		}
	}
	return c
}

// action returns the configured action of a rule.
func (c *config) action(id string) Action {
	a, ok := c.actions[id]
	if !ok || a < Deny || a > Off {
		return Deny
	}
	if a == Off && (id == RuleParseError || id == RuleTooComplex) {
		return Deny
	}
	return a
}

// allowed reports whether the allow list names the program at path raw (as
// written in the command) with base name base.
func (c *config) allowed(raw, base string) bool {
	if !strings.Contains(raw, "/") {
		return c.allow[base]
	}
	p := cleanPath(raw)
	if !strings.Contains(p, "/") {
		return false // ./git is a program in the working directory, not git
	}
	if c.allow[p] {
		return true
	}
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return false
	}
	dir := p[:i]
	if dir == "" {
		dir = "/"
	}
	for _, d := range systemBinDirs {
		if d == dir {
			return c.allow[base]
		}
	}
	return false
}
