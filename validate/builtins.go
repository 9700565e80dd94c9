package validate

import (
	"strings"
)

// cd, pushd and popd move the working directory; cd - returns to the
// previous one and popd to the one pushd left. Symbolic links made earlier
// in the line are followed (ln -s /etc e; cd e).
func (w *walker) cd(inv *invocation, name string) {
	args := inv.args()
	for len(args) > 0 && args[0].exact() && strings.HasPrefix(args[0].s, "-") && args[0].s != "-" {
		args = args[1:]
	}
	prev := w.cwd
	switch {
	case name == "popd":
		w.cwd = ""
		if n := len(w.dirs); n > 0 {
			w.cwd = w.dirs[n-1]
			w.dirs = w.dirs[:n-1]
		}
	case len(args) == 0 && name == "pushd":
		// pushd alone swaps the top two directories.
		if n := len(w.dirs); n > 0 {
			w.cwd, w.dirs[n-1] = w.dirs[n-1], w.cwd
		}
	case len(args) == 0:
		w.cwd = ""
		if h := w.homeValue(); h.exact() && strings.HasPrefix(h.s, "/") {
			w.cwd = cleanPath(h.s)
		}
	default:
		d := args[0]
		switch {
		case !d.exact() || name == "pushd" && strings.HasPrefix(d.s, "+"):
			w.cwd = ""
		case d.s == "-":
			w.cwd = w.oldcwd
		case strings.HasPrefix(d.s, "/"):
			w.cwd = cleanPath(d.s)
		case w.cdpath(d.s) != "":
			// CDPATH=/ cd etc: cd goes to /etc.
			w.cwd = w.cdpath(d.s)
		case w.cwd != "":
			w.cwd = cleanPath(w.cwd + "/" + d.s)
		default:
			// Relative to an unknown directory, unless through a link
			// made here (ln -s /usr u; cd u).
			if r := w.resolveLinks(cleanPath(d.s)); strings.HasPrefix(r, "/") {
				w.cwd = r
			}
		}
		if name == "pushd" && len(w.dirs) < 64 {
			w.dirs = append(w.dirs, prev)
		}
	}
	if w.cwd != "" {
		w.cwd = w.resolveLinks(w.cwd)
	}
	if name != "popd" || w.cwd != prev {
		w.oldcwd = prev
	}
}

// cdpath returns where cd DIR goes through CDPATH, when CDPATH is set to a
// single known absolute directory and DIR does not start with "." or "/".
// With several entries the directory depends on which exist; a directory
// unknown to the checker is "".
func (w *walker) cdpath(dir string) string {
	if strings.HasPrefix(dir, ".") || strings.HasPrefix(dir, "/") {
		return ""
	}
	v, ok := w.lookupScalar("CDPATH")
	if !ok || !v.exact() || v.s == "" {
		return ""
	}
	if strings.Contains(v.s, ":") || !strings.HasPrefix(v.s, "/") {
		return ""
	}
	return cleanPath(v.s + "/" + dir)
}

// hash -p PATH NAME makes NAME run PATH.
func (w *walker) hash(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		switch {
		case a.s == "-r" && w.sure():
			w.hashed = nil
		case a.s == "-p" && i+2 < len(args):
			p, n := args[i+1], args[i+2]
			i += 2
			if w.hashed == nil {
				w.hashed = make(map[string]rebind)
			}
			if !n.exact() || len(w.hashed) >= 64 {
				continue
			}
			if p.exact() {
				w.hashed[n.s] = rebind{p.s, w.sure()}
			} else {
				w.hashed[n.s] = rebind{"/$…/" + n.s, w.sure()} // unknown: judged by its arguments
			}
		case a.s == "-d" && i+1 < len(args) && args[i+1].exact():
			i++
			if w.sure() {
				delete(w.hashed, args[i].s)
			}
		}
	}
}

func (w *walker) unalias(inv *invocation, name string) {
	if !w.sure() {
		return // the alias may stay: keep judging it
	}
	for _, a := range inv.args() {
		switch {
		case !a.exact():
		case a.s == "-a":
			w.aliases = nil
		default:
			delete(w.aliases, a.s)
		}
	}
}

func (w *walker) readVars(inv *invocation, name string) {
	w.nameOperands(inv, name)
	args := inv.args()
	switch name {
	case "printf":
		if len(args) >= 2 && args[0].exact() && args[0].s == "-v" && args[1].exact() {
			if out, ok := printfOutput(args[2:]); ok {
				w.setVar(args[1].s, value{f: out})
			} else {
				w.setUnknown(args[1].s)
			}
		}
		return
	case "getopts":
		if len(args) >= 2 && args[1].exact() {
			w.setUnknown(args[1].s)
		}
		return
	}
	syn := optSyntax{argShort: "adinNptu"}
	if name != "read" {
		syn = optSyntax{argShort: "dnOsuCc"}
	}
	p := parseArgs(args, &syn)
	text, known := "", false
	if _, fd := p.val('u', ""); !fd && inv.stdin != nil && inv.stdin.has && inv.stdin.text.exact() {
		src := inv.stdin
		text, known = src.text.s, true
	}
	var names []string
	for _, o := range p.ops {
		if o.exact() {
			names = append(names, o.s)
		}
	}
	ifs := w.ifs()
	if name != "read" {
		arr := "MAPFILE"
		if len(names) > 0 {
			arr = names[0]
		}
		if !known {
			w.setUnknown(arr)
			return
		}
		var elems []field
		for _, l := range strings.SplitAfter(text, "\n") {
			if l == "" {
				continue
			}
			if p.hasShort('t') {
				l = strings.TrimSuffix(l, "\n")
			}
			elems = append(elems, exactField(l))
		}
		w.setVar(arr, value{arr: elems, isArr: true})
		return
	}
	line, _, _ := strings.Cut(text, "\n")
	if v, ok := p.val('a', ""); ok && v.exact() {
		if !known {
			w.setUnknown(v.s)
			return
		}
		var elems []field
		for _, word := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(ifs, r) }) {
			elems = append(elems, exactField(word))
		}
		w.setVar(v.s, value{arr: elems, isArr: true})
		return
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
	}
	if !known {
		for _, n := range names {
			w.setUnknown(n)
		}
		return
	}
	rest := strings.Trim(line, " \t")
	for i, n := range names {
		if i == len(names)-1 {
			w.setVar(n, value{f: exactField(strings.TrimRight(rest, " \t"))})
			break
		}
		rest = strings.TrimLeft(rest, " \t")
		word, after, _ := strings.Cut(rest, " ")
		w.setVar(n, value{f: exactField(word)})
		rest = after
	}
}

// unset forgets variables; unset -f (or unset NAME without a variable of
// that name) removes a function, so the command of its name runs again.
func (w *walker) unset(inv *invocation, name string) {
	w.nameOperands(inv, name)
	onlyVars := false
	for _, a := range inv.args() {
		if a.exact() && a.s == "-v" {
			onlyVars = true
		}
	}
	for _, a := range inv.args() {
		if a.exact() && !strings.HasPrefix(a.s, "-") {
			w.setUnknown(a.s)
			if fn := w.funcs[a.s]; fn != nil && !onlyVars {
				fn.uncond = false // the command may run again: judge both
				if w.sure() {
					delete(w.funcs, a.s)
				}
			}
		}
	}
}

func (w *walker) shift(inv *invocation, name string) {
	if !w.hasArgs {
		return
	}
	n := 1
	if args := inv.args(); len(args) > 0 {
		if !args[0].exact() {
			w.hasArgs = false
			return
		}
		if k, err := atoi(args[0].s); err == nil && k >= 0 {
			n = k
		}
	}
	if n > len(w.args) {
		n = len(w.args)
	}
	w.args = w.args[n:]
}

func (w *walker) set(inv *invocation, name string) {
	args := inv.args()
	for i, a := range args {
		if !a.exact() {
			return
		}
		if a.s == "--" {
			w.hasArgs = true
			w.args = append([]field{}, args[i+1:]...)
			return
		}
		if !strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "+") {
			w.hasArgs = true
			w.args = append([]field{}, args[i:]...)
			return
		}
		if a.s == "-o" || a.s == "+o" {
			return
		}
	}
}
