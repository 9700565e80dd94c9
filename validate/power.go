package validate

import (
	"regexp"
	"strings"
)

// power checks commands that change the power state of the machine.
func (w *walker) power(inv *invocation, name string) {
	args := inv.args()
	p := parseArgs(args, &optSyntax{argShort: "tspHMnom", argLong: []string{"type", "signal", "property", "host", "machine", "lines", "output", "root", "kill-whom", "what", "job-mode", "state", "message", "reboot-argument", "timestamp", "boot-loader-menu", "boot-loader-entry", "when", "mode"}})
	pos := inv.argv[0].pos
	refuse := func(what string) {
		w.report(inv, RulePowerState, what+at(pos))
	}
	switch name {
	case "shutdown":
		if p.has("ck", "help", "show") {
			return
		}
		refuse("shutdown halts or reboots the machine")
	case "reboot", "halt", "poweroff":
		if p.has("", "help", "version") {
			return
		}
		refuse(name + " changes the power state of the machine")
	case "init", "telinit":
		if len(p.ops) > 0 && p.ops[0].exact() && oneOf(p.ops[0].s, "0", "1", "6", "s", "S", "single", "emergency", "rescue") {
			refuse(name + " " + p.ops[0].s + " halts, reboots or drops the machine to single-user mode")
		}
	case "systemctl", "loginctl":
		if len(p.ops) == 0 || !p.ops[0].exact() {
			return
		}
		verb := p.ops[0].s
		if oneOf(verb, "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "emergency", "rescue", "soft-reboot", "sleep", "exit") {
			refuse(name + " " + verb + " changes the power state of the machine")
			return
		}
		if oneOf(verb, "isolate", "start", "restart", "enable", "reload-or-restart", "try-restart") {
			for _, u := range p.ops[1:] {
				if u.exact() && oneOf(strings.TrimSuffix(u.s, ".target"), "poweroff", "reboot", "halt", "kexec", "rescue", "emergency", "shutdown", "sleep", "suspend", "hibernate", "soft-reboot", "ctrl-alt-del") {
					refuse(name + " " + verb + " " + u.s + " changes the power state of the machine")
					return
				}
			}
		}
	case "kexec":
		if p.has("e", "exec") || (len(p.ops) > 0 && !p.has("lpuSsh", "load", "unload", "help")) {
			refuse("kexec boots another kernel")
		}
	case "pmset":
		if len(p.ops) > 0 && p.ops[0].exact() && oneOf(p.ops[0].s, "sleepnow", "displaysleepnow", "restoredefaults") {
			refuse("pmset " + p.ops[0].s + " changes the power state of the machine")
		}
	case "killall5":
		refuse("killall5 signals every process")
	case "killall", "pkill", "skill":
		w.killByName(inv, name, refuse)
	case "busctl", "dbus-send", "gdbus", "qdbus", "dbus":
		for _, a := range args {
			if !a.exact() {
				continue
			}
			m := a.s[strings.LastIndexAny(a.s, ".:/ ")+1:]
			if oneOf(m, "PowerOff", "Reboot", "Halt", "Suspend", "Hibernate", "HybridSleep", "SuspendThenHibernate", "KExec", "SoftReboot", "poweroff.target", "reboot.target", "halt.target", "kexec.target") {
				refuse(name + " calls " + m + ", which changes the power state of the machine")
				return
			}
		}
	case "gnome-session-quit", "xfce4-session-logout", "lxqt-leave", "mate-session-save":
		if p.has("", "power-off", "reboot", "halt", "suspend", "hibernate", "hybrid-sleep", "shutdown") {
			refuse(name + " changes the power state of the machine")
		}
	case "rtcwake":
		if m, ok := p.val('m', "mode"); !ok || !m.exact() || !oneOf(m.s, "no", "show", "disable") {
			refuse("rtcwake suspends or powers off the machine")
		}
	case "pm-suspend", "pm-hibernate", "pm-suspend-hybrid", "zzz", "ZZZ", "openrc-shutdown", "uadmin":
		refuse(name + " changes the power state of the machine")
	case "kill":
		w.kill(inv)
	}
}

// kill refuses signals to init (pid 1) and to every process (pid -1).
func (w *walker) kill(inv *invocation) {
	args := inv.args()
	i := 0
	if i < len(args) && args[i].exact() {
		s := args[i].s
		switch {
		case s == "-l" || s == "-L" || s == "--list" || s == "--table":
			return
		case s == "-s" || s == "-n" || s == "--signal":
			i += 2
		case s == "--":
		case strings.HasPrefix(s, "-") && len(s) > 1:
			i++
		}
	}
	if i < len(args) && args[i].exact() && args[i].s == "--" {
		i++
	}
	for _, a := range args[min(i, len(args)):] {
		if !a.exact() {
			continue
		}
		switch a.s {
		case "1":
			w.report(inv, RulePowerState, "kill 1 signals init, which halts the machine"+at(a.pos))
			return
		case "-1":
			w.report(inv, RulePowerState, "kill -1 signals every process"+at(a.pos))
			return
		}
	}
}

// sudo refuses privilege escalation unless the call allows it, then checks
// the command it runs.
func (w *walker) sudo(inv *invocation, name string) {
	if !w.opts.AllowSudo {
		w.report(inv, RuleSudo, name+" runs a command with other privileges and this call does not allow sudo"+at(inv.argv[0].pos))
	}
	switch name {
	case "su":
		p := parseArgs(inv.args(), &optSyntax{argShort: "cgGsw", argLong: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"}})
		for _, v := range p.vals {
			if v.name == "c" || strings.HasPrefix("command", v.name) && len(v.name) >= 2 || strings.HasPrefix("session-command", v.name) && len(v.name) >= 2 {
				w.payload(inv, v.val, "su -c", nil, false)
			}
		}
		return
	case "sudoedit":
		return
	}
	w.wrapper(inv, name)
}

// killByName refuses pkill, killall and skill forms that signal every
// process or every process of root: a pattern that matches every name, a
// pid of -1, or a user selection without a pattern.
func (w *walker) killByName(inv *invocation, name string, refuse func(string)) {
	args := inv.args()
	if len(args) > 0 && args[0].exact() && (args[0].s == "-1" || strings.HasPrefix(args[0].s, "-") && len(args[0].s) > 1 && args[0].s[1] >= '0' && args[0].s[1] <= '9' || strings.ToUpper(args[0].s) == args[0].s && len(args[0].s) > 2) {
		// A signal: -9, -KILL.
		args = args[1:]
	}
	p := parseArgs(args, &optSyntax{argShort: "sugUGPtnaFcOoMNeiIrwyYZ", argLong: []string{"signal", "euid", "uid", "group", "pgroup", "parent", "terminal", "session", "ns", "nslist", "older", "younger", "pidfile", "user", "context", "older-than", "younger-than", "cgroup"}})
	for _, a := range args {
		if a.exact() && a.s == "-1" {
			refuse(name + " -1 signals every process")
			return
		}
	}
	if name != "killall" && p.has("v", "inverse") {
		refuse(name + " -v signals every process that does not match, which is nearly all of them")
		return
	}
	rootUser := false
	for _, v := range p.vals {
		if (v.name == "u" || v.name == "U" || strings.HasPrefix("euid", v.name) && len(v.name) > 1 || strings.HasPrefix("uid", v.name) && len(v.name) > 1 || strings.HasPrefix("user", v.name) && len(v.name) > 1) && v.val.exact() {
			for _, u := range strings.Split(v.val.s, ",") {
				rootUser = rootUser || u == "root" || u == "0"
			}
		}
	}
	for _, o := range p.ops {
		if !o.exact() {
			continue
		}
		switch {
		case oneOf(o.s, "init", "systemd", "launchd"):
			refuse(name + " " + o.s + " kills the init process, which halts the machine")
			return
		case killsService(name, o.s, p.has("r", "regexp")):
			refuse(name + " " + o.s + " kills the SSH server or the gateway, which cuts the machine off")
			return
		case o.s == "-1":
			refuse(name + " -1 signals every process")
			return
		case oneOf(o.s, "", ".", ".*", "^", "$", "^.*", ".*$", "^.*$", ".+", "[^]*") && name != "killall" || name == "killall" && p.has("r", "regexp") && oneOf(o.s, ".", ".*", "^", ".+", ""):
			refuse(name + " " + o.show() + " matches every process, so it signals them all")
			return
		}
	}
	if len(p.ops) == 0 && rootUser {
		refuse(name + " with only a user selection signals every process of root")
	}
}

// keepAlive are the processes that keep the machine reachable: the SSH
// servers and the gateway itself.
var keepAlive = [...]string{"sshd", "dropbear", "rigout"}

// killsService reports whether a pkill pattern (a regular expression, or
// with killall an exact name unless -r) matches a keepAlive process.
func killsService(name, pat string, regex bool) bool {
	for _, k := range keepAlive {
		if name == "killall" && !regex {
			if pat == k {
				return true
			}
			continue
		}
		if re, err := regexp.Compile(pat); err == nil && re.MatchString(k) {
			return true
		}
	}
	return false
}
