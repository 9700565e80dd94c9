package validate

import (
	"strings"
)

// account checks the tools that change user accounts: deleting users and
// groups, removing or batch-setting passwords, locking root and adding a
// second account with uid 0 (rule account-tamper). Creating an ordinary
// user (useradd -m bob) or adding one to a group (usermod -aG docker bob)
// is allowed.
func (w *walker) account(inv *invocation, name string) {
	args := inv.args()
	if onlyInfo(args) {
		return
	}
	pos := inv.argv[0].pos
	refuse := func(what string) {
		w.report(inv, RuleAccountTamper, what+at(pos))
	}
	switch name {
	case "userdel", "deluser", "luserdel", "groupdel", "delgroup", "lgroupdel":
		p := parseArgs(args, &optSyntax{argShort: "RP", argLong: []string{"root", "prefix", "conf"}})
		if len(p.ops) == 0 {
			return
		}
		what := "user"
		if strings.Contains(name, "group") {
			what = "group"
		}
		if name == "deluser" && len(p.ops) >= 2 {
			return // deluser USER GROUP removes a user from a group
		}
		refuse(name + " deletes the " + what + " " + p.ops[0].show())
	case "chpasswd", "chgpasswd", "newusers":
		refuse(name + " sets passwords or creates accounts in bulk from its input")
	case "vipw", "vigr":
		refuse(name + " edits the account database")
	case "passwd":
		p := parseArgs(args, &optSyntax{argShort: "nxwiRPQ", argLong: []string{"mindays", "maxdays", "warndays", "inactive", "root", "prefix", "repository"}})
		user := "the calling user"
		if len(p.ops) > 0 {
			user = p.ops[0].show()
		}
		switch {
		case p.has("d", "delete"):
			refuse("passwd -d removes the password of " + user + ", so it logs in without one")
		case p.has("l", "lock") && (len(p.ops) == 0 || isRootName(p.ops[0])):
			refuse("passwd -l locks the root account")
		case p.has("", "stdin") && len(p.ops) > 0 && isRootName(p.ops[0]):
			refuse("passwd --stdin sets the root password from its input")
		}
	case "usermod", "useradd", "adduser", "lusermod", "luseradd", "pw":
		w.userChange(inv, name, args, refuse)
	case "chage":
		p := parseArgs(args, &optSyntax{argShort: "dEImMWRP", argLong: []string{"lastday", "expiredate", "inactive", "mindays", "maxdays", "warndays", "root", "prefix"}})
		if _, ok := p.val('E', "expiredate"); ok && len(p.ops) > 0 && isRootName(p.ops[0]) {
			refuse("chage -E expires the root account")
		}
	case "dscl":
		for _, a := range args {
			if a.exact() && oneOf(strings.ToLower(a.s), "-delete", "delete", "-passwd", "passwd") {
				refuse("dscl " + a.s + " deletes an account record or sets a password")
				return
			}
		}
	case "sysadminctl":
		for _, a := range args {
			if a.exact() && oneOf(a.s, "-deleteUser", "-resetPasswordFor") {
				refuse("sysadminctl " + a.s + " deletes an account or resets its password")
				return
			}
		}
	}
}

// userChange checks usermod, useradd and adduser for a second uid 0, an
// empty password, or locking or disabling root.
func (w *walker) userChange(inv *invocation, name string, args []field, refuse func(string)) {
	if name == "pw" {
		if len(args) == 0 || !args[0].exact() {
			return
		}
		switch args[0].s {
		case "userdel", "groupdel":
			refuse("pw " + args[0].s + " deletes an account")
			return
		case "useradd", "usermod":
			args = args[1:]
		default:
			return
		}
	}
	p := parseArgs(args, &optSyntax{
		argShort: "cdefgGkKlpsuRPbZ",
		argLong: []string{"comment", "home", "home-dir", "expiredate", "inactive", "gid", "groups", "skel", "key",
			"login", "password", "shell", "uid", "root", "prefix", "base-dir", "selinux-user", "firstuid", "lastuid",
			"ingroup", "conf", "add-subids-for-system", "extrausers"},
	})
	if u, ok := p.val('u', "uid"); ok && u.exact() && strings.TrimLeft(u.s, "0") == "" && u.s != "" {
		refuse(name + " gives an account uid 0, a second root")
		return
	}
	if p.has("o", "non-unique") {
		refuse(name + " -o allows a duplicate uid, the usual way to add a second root")
		return
	}
	if pw, ok := p.val('p', "password"); ok && pw.exact() && pw.s == "" {
		refuse(name + " -p '' gives an account an empty password")
		return
	}
	if name != "usermod" && name != "lusermod" && !(name == "pw" && len(args) > 0) {
		return
	}
	root := false
	for _, o := range p.ops {
		root = root || isRootName(o)
	}
	if !root {
		return
	}
	switch {
	case p.has("L", "lock"):
		refuse(name + " -L locks the root account")
	case p.has("e", "expiredate"):
		refuse(name + " -e expires the root account")
	case p.has("s", "shell"):
		if sh, ok := p.val('s', "shell"); ok && sh.exact() && (strings.HasSuffix(sh.s, "nologin") || strings.HasSuffix(sh.s, "/false")) {
			refuse(name + " -s " + sh.s + " disables logins as root")
		}
	case p.has("l", "login"), p.has("u", "uid"):
		refuse(name + " renames root or changes its uid")
	}
}

func isRootName(f field) bool {
	return f.exact() && (f.s == "root" || f.s == "0")
}

// accountContent reports an account line with an empty password field or a
// second uid 0 in text written to a passwd-like file.
func accountContent(path, text string) (string, bool) {
	base := path[strings.LastIndexByte(path, '/')+1:]
	if !oneOf(strings.TrimSuffix(base, "-"), "passwd", "shadow", "master.passwd") {
		return "", false
	}
	for _, line := range strings.Split(text, "\n") {
		fs := strings.Split(strings.TrimSpace(line), ":")
		if len(fs) < 3 || fs[0] == "" || strings.HasPrefix(fs[0], "#") {
			continue
		}
		if fs[1] == "" {
			return "an account (" + fs[0] + ") with an empty password", true
		}
		if base != "shadow" && fs[2] == "0" && fs[0] != "root" {
			return "a second account with uid 0 (" + fs[0] + ")", true
		}
	}
	return "", false
}
