package validate

import (
	"strings"
)

func (w *walker) rm(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{})
	rec := p.hasShort('r') || p.hasShort('R') || p.hasLong("recursive", 3) || inv.rec || p.unknown
	label := name
	if rec && name == "rm" {
		label = "rm -r"
	}
	for _, t := range p.ops {
		w.deleteTarget(inv, label, t, rec, false)
	}
}

// findExpr is the parsed form of a find command line.
type findExpr struct {
	starts   []field
	narrowed bool // a name or path test limits what matches
	deletes  bool
	execs    [][]field
	writes   []field // -fprint FILE and friends
}

func parseFind(args []field) findExpr {
	var fe findExpr
	i := 0
	for i < len(args) && args[i].exact() {
		s := args[i].s
		switch {
		case s == "-H" || s == "-L" || s == "-P":
			i++
			continue
		case s == "-D":
			i += 2
			continue
		case strings.HasPrefix(s, "-O") && len(s) > 2:
			i++
			continue
		}
		break
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a.exact() && (strings.HasPrefix(a.s, "-") && a.s != "-" || a.s == "(" || a.s == ")" || a.s == "!" || a.s == ",") {
			break
		}
		fe.starts = append(fe.starts, a)
	}
	if len(fe.starts) == 0 {
		fe.starts = []field{{s: "."}}
	}
	complex := false
	expr := args[min(i, len(args)):]
	for j := 0; j < len(expr); j++ {
		a := expr[j]
		if !a.exact() {
			continue
		}
		switch a.s {
		case "-o", "-or", "!", "-not", ",":
			complex = true
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname":
			if j+1 < len(expr) {
				if !pureWildcard(expr[j+1]) {
					fe.narrowed = true
				}
				j++
			}
		case "-inum", "-samefile":
			fe.narrowed = true
			j++
		case "-delete":
			fe.deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			k := j + 1
			for k < len(expr) && !(expr[k].exact() && (expr[k].s == ";" || expr[k].s == "+")) {
				k++
			}
			fe.execs = append(fe.execs, expr[j+1:k])
			j = k
		case "-fprint", "-fprint0", "-fls":
			if j+1 < len(expr) {
				fe.writes = append(fe.writes, expr[j+1])
				j++
			}
		case "-fprintf":
			if j+1 < len(expr) {
				fe.writes = append(fe.writes, expr[j+1])
				j += 2
			}
		}
	}
	if complex {
		fe.narrowed = false
	}
	return fe
}

// pureWildcard reports whether a find pattern matches every name.
func pureWildcard(f field) bool {
	if !f.exact() {
		return false
	}
	switch strings.TrimSuffix(strings.TrimPrefix(f.s, "^"), "$") {
	case ".*", ".+", ".*.*", "(.*)", ".?.*":
		return true // -regex forms
	}
	for _, k := range compilePattern(f.s) {
		if k.kind == tLit && k.b != '/' && k.b != '.' {
			return false
		}
	}
	return true
}

func (w *walker) find(inv *invocation, name string) {
	fe := parseFind(inv.args())
	for _, f := range fe.writes {
		w.writeTarget(inv, f, "find -fprint")
	}
	if fe.deletes && !fe.narrowed {
		for _, sp := range fe.starts {
			w.deleteTarget(inv, "find -delete", sp, true, false)
		}
	}
	for _, ex := range fe.execs {
		if len(ex) == 0 {
			continue
		}
		starts := fe.starts
		if fe.narrowed {
			starts = []field{unknownField(unkNoFlag | unkNonEmpty)}
		}
		for k, sp := range starts {
			if k >= 8 {
				break
			}
			argv := make([]field, len(ex))
			for i, a := range ex {
				argv[i] = substField(a, "{}", sp)
			}
			sub := inv.sub(argv, "find -exec")
			sub.rec = !fe.narrowed
			sub.stdin = nil
			w.invoke(sub)
		}
	}
}

var rsyncSyntax = optSyntax{
	argShort: "efTBM",
	argLong: []string{"rsh", "filter", "exclude", "include", "exclude-from", "include-from", "files-from",
		"temp-dir", "log-file", "block-size", "chmod", "chown", "password-file", "remote-option",
		"partial-dir", "backup-dir", "suffix", "compare-dest", "copy-dest", "link-dest", "max-size",
		"min-size", "timeout", "port", "bwlimit", "out-format", "info", "debug", "iconv", "usermap",
		"groupmap", "contimeout", "sockopts", "compress-level", "skip-compress", "modify-window",
		"max-delete", "checksum-choice", "compress-choice", "rsync-path", "log-file-format"},
}

func (w *walker) rsync(inv *invocation, name string) {
	p := parseArgs(inv.args(), &rsyncSyntax)
	if e, ok := p.val('e', "rsh"); ok {
		w.payload(inv, e, "rsync -e command", nil, true)
	}
	del := false
	for _, l := range p.long {
		if strings.HasPrefix(l, "del") {
			del = true
		}
	}
	removeSrc := p.hasLong("remove-source-files", 8)
	if len(p.ops) < 2 {
		return
	}
	local := func(f field) bool {
		s := f.prefix()
		if strings.HasPrefix(s, "rsync://") {
			return false
		}
		c := strings.IndexByte(s, ':')
		return c < 0 || strings.IndexByte(s[:c], '/') >= 0
	}
	dest := p.ops[len(p.ops)-1]
	if local(dest) {
		w.destination(inv, "rsync", p.ops[:len(p.ops)-1], dest, true)
	}
	if del && local(dest) {
		w.deleteTarget(inv, "rsync --delete", dest, true, inv.dyn)
	}
	if removeSrc {
		for _, s := range p.ops[:len(p.ops)-1] {
			if local(s) {
				w.deleteTarget(inv, "rsync --remove-source-files", s, true, inv.dyn)
			}
		}
	}
}

func (w *walker) shred(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "ns", argLong: []string{"iterations", "size", "random-source"}})
	for _, f := range p.ops {
		t := w.target(f)
		if t.none() {
			continue
		}
		if d, ok := w.deviceHit(t); ok {
			w.report(inv, RuleRawDeviceWrite, "shred overwrites the raw device "+d+at(f.pos))
			continue
		}
		if h, ok := w.protectedHit(t); ok && (h.all || inv.rec) {
			w.report(inv, RuleRecursiveDeleteRoot, "shred would destroy every file of the protected root "+showPath(h.root)+" ("+f.show()+at(f.pos)+")")
			continue
		}
		if c, ok := w.criticalHit(t); ok {
			w.report(inv, RuleCriticalFileWrite, "shred destroys the critical file "+c+at(f.pos))
		}
	}
}

func (w *walker) truncate(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "sr", argLong: []string{"size", "reference"}})
	for _, f := range p.ops {
		w.writeTarget(inv, f, "truncate")
	}
}

func (w *walker) mv(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "tS", argLong: []string{"target-directory", "suffix"}})
	srcs, dest, hasDest := p.ops, field{}, false
	if d, ok := p.val('t', "target-directory"); ok {
		dest, hasDest = d, true
	} else if len(srcs) >= 2 {
		dest, hasDest = srcs[len(srcs)-1], true
		srcs = srcs[:len(srcs)-1]
	}
	for _, s := range srcs {
		w.moveSource(inv, "mv", s)
	}
	if hasDest {
		w.destination(inv, "mv", srcs, dest, false)
	}
}

// destination checks the target of cp, mv, install and ln, both as a file
// and as a directory that receives the sources.
func (w *walker) destination(inv *invocation, cmd string, srcs []field, dest field, device bool) {
	w.startupDest(dest, srcs, cmd)
	t := w.target(dest)
	if t.none() {
		return
	}
	if device {
		if d, ok := w.deviceHit(t); ok {
			w.report(inv, RuleRawDeviceWrite, cmd+" writes to the raw device "+d+at(dest.pos))
			return
		}
	}
	if c, ok := w.criticalHit(t); ok {
		w.report(inv, RuleCriticalFileWrite, cmd+" overwrites the critical file "+c+at(dest.pos))
		return
	}
	if device && w.kernelWrite(inv, t, cmd, dest.pos) {
		return
	}
	if t.lit == "" {
		return
	}
	for _, s := range srcs {
		if !s.exact() || s.s == "" {
			continue
		}
		base := strings.TrimRight(s.s, "/")
		base = base[strings.LastIndexByte(base, '/')+1:]
		if base == "" || base == "." || base == ".." {
			continue
		}
		if c, ok := w.criticalHit(target{lit: cleanPath(t.lit + "/" + base)}); ok {
			w.report(inv, RuleCriticalFileWrite, cmd+" overwrites the critical file "+c+at(dest.pos))
			return
		}
	}
}

// moveSource checks a file or directory that a command moves away.
func (w *walker) moveSource(inv *invocation, cmd string, s field) {
	t := w.target(s)
	if t.none() {
		return
	}
	if h, ok := w.protectedHit(t); ok {
		if h.all {
			w.report(inv, RuleMoveRoot, cmd+" would move every entry of the protected root "+showPath(h.root)+" ("+s.show()+at(s.pos)+")")
		} else {
			w.report(inv, RuleMoveRoot, cmd+" would move the protected root "+showPath(h.root)+" ("+s.show()+at(s.pos)+")")
		}
		return
	}
	if c, ok := w.criticalHit(t); ok {
		w.report(inv, RuleCriticalFileWrite, cmd+" would move the critical file "+c+" away"+at(s.pos))
	}
}
