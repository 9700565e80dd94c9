package validate

import (
	"strings"
)

// chperm checks chmod, chown, chgrp, chattr, setfacl and chcon.
func (w *walker) chperm(inv *invocation, name string) {
	args := inv.args()
	var syn optSyntax
	var modes []field
	switch name {
	case "chmod":
		// chmod takes modes such as -w or -rwx that look like options.
		rest := make([]field, 0, len(args))
		for _, a := range args {
			if a.exact() && len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.Trim(a.s[1:], "Rcfv") != "" && strings.Trim(a.s[1:], "rwxXstugoa+-=,01234567") == "" {
				modes = append(modes, a)
				continue
			}
			rest = append(rest, a)
		}
		args = rest
		syn = optSyntax{argLong: []string{"reference"}}
	case "chown", "chgrp":
		syn = optSyntax{argLong: []string{"from", "reference"}}
	case "chattr":
		rest := make([]field, 0, len(args))
		for _, a := range args {
			if a.exact() && len(a.s) > 1 && (a.s[0] == '+' || a.s[0] == '=' || a.s[0] == '-' && strings.Trim(a.s[1:], "RVf") != "" && a.s[1] != 'v' && a.s[1] != 'p') {
				modes = append(modes, a)
				continue
			}
			rest = append(rest, a)
		}
		args = rest
		syn = optSyntax{argShort: "vp"}
	case "setfacl":
		syn = optSyntax{argShort: "mxMX", argLong: []string{"modify", "remove", "modify-file", "remove-file", "set", "set-file"}}
	case "chcon":
		syn = optSyntax{argShort: "urtl", argLong: []string{"user", "role", "type", "range", "reference"}}
	}
	p := parseArgs(args, &syn)
	rec := p.hasShort('R') || p.hasLong("recursive", 3) || inv.rec || p.unknown
	ops := p.ops
	switch name {
	case "chmod":
		if len(modes) == 0 && !p.hasLong("reference", 3) && len(ops) > 0 {
			ops = ops[1:]
		}
	case "chown", "chgrp":
		if !p.hasLong("reference", 3) && len(ops) > 0 {
			ops = ops[1:]
		}
	case "chcon":
		if !p.hasLong("reference", 3) && len(p.vals) == 0 && len(ops) > 0 {
			ops = ops[1:]
		}
	}
	for _, t := range ops {
		w.chpermTarget(inv, name, t, rec)
	}
}

func (w *walker) chpermTarget(inv *invocation, cmd string, f field, rec bool) {
	t := w.target(f)
	if t.none() {
		return
	}
	h, ok := w.protectedHit(t)
	if !ok || h.root == homeDir {
		// chown -R "$USER" ~ is the usual repair, not a risk to the machine.
		return
	}
	switch {
	case h.all:
		w.report(inv, RuleRecursiveChmodRoot, cmd+" would change every entry of the protected root "+showPath(h.root)+" ("+f.show()+at(f.pos)+")")
	case rec:
		w.report(inv, RuleRecursiveChmodRoot, cmd+" -R would change the protected root "+showPath(h.root)+" and everything below it ("+f.show()+at(f.pos)+")")
	}
}
