package validate

import (
	"strings"
)

// power checks commands that change the power state of the machine.
func (w *walker) power(inv *invocation, name string) {
	args := inv.args()
	p := parseArgs(args, &optSyntax{argShort: "tspHMno", argLong: []string{"type", "signal", "property", "host", "machine", "lines", "output", "root", "kill-whom", "what", "job-mode", "state", "message", "reboot-argument", "timestamp", "boot-loader-menu", "boot-loader-entry", "when"}})
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
		if oneOf(verb, "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "emergency", "rescue", "soft-reboot", "sleep") {
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
	case "killall", "pkill":
		for _, o := range p.ops {
			if o.exact() && oneOf(o.s, "init", "systemd", "launchd") {
				refuse(name + " " + o.s + " kills the init process, which halts the machine")
				return
			}
		}
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
