package validate

import (
	"sort"
	"strings"
)

// handler checks one command. name is the canonical command name.
type handler func(w *walker, inv *invocation, name string)

// lookupCmd returns the handler for a command base name.
func (w *walker) lookupCmd(base string) (handler, string) {
	name := strings.ToLower(base)
	name = strings.TrimSuffix(name, ".exe")
	if h, ok := w.cmds[name]; ok {
		return h, name
	}
	for _, pre := range namePrefixes {
		rest, ok := strings.CutPrefix(name, pre.prefix)
		if !ok {
			continue
		}
		if pre.any && rest != "" && (rest[0] == '.' || rest[0] == '_') || strings.Trim(rest, "0123456789.") == "" {
			return w.cmds[pre.canon], pre.canon
		}
	}
	return nil, name
}

// namePrefixes map versioned or suffixed names to a known command:
// mkfs.ext4, python3.12, perl5.36, ….
var namePrefixes = [...]struct {
	prefix, canon string
	any           bool // any suffix after '.' or '_' (mkfs.ext4, newfs_hfs); else digits and dots
}{
	{"mkfs", "mkfs", true}, {"newfs", "mkfs", true}, {"python", "python", false}, {"pypy", "python", false},
	{"perl", "perl", false}, {"ruby", "ruby", false}, {"php", "php", false}, {"lua", "lua", false},
	{"node", "node", false}, {"tclsh", "tclsh", false}, {"busybox", "busybox", true}, {"bash", "bash", false}, {"zsh", "zsh", false},
}

// builtinNames are shell builtins and keywords that run no program; allow
// mode never requires them to be listed.
var builtinNames = map[string]bool{
	":": true, "true": true, "false": true, "cd": true, "pwd": true, "echo": true, "printf": true,
	"test": true, "[": true, "export": true, "unset": true, "set": true, "shift": true, "read": true,
	"local": true, "declare": true, "typeset": true, "readonly": true, "return": true, "exit": true,
	"break": true, "continue": true, "wait": true, "type": true, "hash": true, "umask": true,
	"getopts": true, "let": true, "shopt": true, "alias": true, "unalias": true, "times": true,
	"jobs": true, "fg": true, "bg": true, "disown": true, "pushd": true, "popd": true, "dirs": true,
	"mapfile": true, "readarray": true, "eval": true, "exec": true, "command": true, "builtin": true,
	"trap": true, "caller": true, "help": true, "history": true, "ulimit": true, "compgen": true,
	"complete": true, "compopt": true, "logout": true,
}

// sudoNames escalate privileges.
var sudoNames = map[string]bool{"sudo": true, "doas": true, "su": true, "pkexec": true, "run0": true, "sudoedit": true}

func (w *walker) invoke(inv *invocation) {
	if len(inv.argv) == 0 || !w.tick() {
		return
	}
	w.invokeOne(inv)
	if anySplit(inv.argv) {
		// The unquoted expansion may hold blanks and split the word.
		w.invokeOne(inv.sub(splitUnknown(inv.argv), ""))
	}
}

func (w *walker) invokeOne(inv *invocation) {
	if len(inv.argv) == 0 {
		return
	}
	head := inv.argv[0]
	if head.exact() {
		if v, ok := w.aliases[head.s]; ok && len(inv.via) == 0 {
			w.expandAlias(inv, head.s, v)
			return
		}
		w.named(inv, head.s)
		return
	}
	// The base name decides: $DIR/rm is rm.
	toks := head.toks
	i := len(toks) - 1
	for i >= 0 && !(toks[i].kind == tLit && toks[i].b == '/') {
		i--
	}
	base := toks[i+1:]
	dynamicBase := false
	for _, k := range base {
		if k.kind == tUnknown {
			dynamicBase = true
		}
	}
	switch {
	case allLit(base) && len(base) > 0:
		if w.cfg.mode == ModeAllow {
			w.report(inv, RuleNotAllowlisted, "the command "+head.show()+at(head.pos)+" has a directory only known at run time")
		}
		w.named(inv, litString(base))
	case dynamicBase || len(base) == 0:
		if head.taint != 0 {
			w.report(inv, RuleRemoteScript, "the command name "+head.show()+at(head.pos)+" comes from "+head.taint.String())
		}
		if w.cfg.mode == ModeAllow {
			w.report(inv, RuleNotAllowlisted, "the command name "+head.show()+at(head.pos)+" is only known at run time")
		}
		w.dynamic(inv)
	default:
		if w.cfg.mode == ModeAllow {
			w.report(inv, RuleNotAllowlisted, "the command name "+head.show()+at(head.pos)+" is a glob pattern")
		}
		var names []string
		for n := range w.cmds {
			if matchLit(base, n) {
				names = append(names, n)
			}
		}
		// Versioned names: mkfs.* may be mkfs.ext4, python3.* python3.12.
		for _, pre := range namePrefixes {
			if intersects(base, append(litToks(pre.prefix), ptok{kind: tStar})) && !matchLit(base, pre.canon) {
				names = append(names, pre.canon)
			}
		}
		if len(names) > maxGlobNames {
			// A glob such as * could be any program: judge it by its
			// arguments, as a dynamic name.
			w.dynamic(inv)
			return
		}
		sort.Strings(names)
		for _, n := range names {
			argv := append([]field{{s: n, pos: head.pos}}, inv.argv[1:]...)
			w.named(inv.sub(argv, ""), n)
		}
	}
}

// named checks a command whose name is known.
func (w *walker) named(inv *invocation, path string) {
	if !w.tick() {
		return
	}
	base := path[strings.LastIndexByte(path, '/')+1:]
	if w.fn != nil {
		w.fn.calls[base] = w.fn.calls[base] || w.spawn
	}
	if hp, ok := w.hashed[path]; ok && !builtinNames[path] && w.funcs[path] == nil {
		// hash -p /bin/rm ls: ls runs /bin/rm. When the hash may not
		// hold, the command is judged both ways.
		if !hp.sure {
			w.named(inv.sub(append([]field{{s: hp.to, pos: inv.argv[0].pos}}, inv.args()...), ""), hp.to)
		} else {
			path = hp.to
			base = path[strings.LastIndexByte(path, '/')+1:]
		}
	}
	h, name := w.lookupCmd(base)
	if strings.Contains(path, "/") {
		if by, ok := w.fetchedFile(exactField(path)); ok {
			w.report(inv, RuleRemoteScript, "the command "+path+" runs a file downloaded by "+by)
		}
	}
	if w.cfg.mode == ModeAllow && !(builtinNames[name] && !strings.Contains(path, "/")) && !sudoNames[name] && w.funcs[base] == nil {
		if !w.cfg.allowed(path, base) {
			pos := inv.argv[0].pos
			w.report(inv, RuleNotAllowlisted, strings.TrimSpace(base+" is not in the allow list"+at(pos)))
		}
	}
	shadowed := false
	if fn := w.funcs[base]; fn != nil && fn.body != nil && len(inv.via) == 0 && !strings.Contains(path, "/") {
		// A call of a function defined here: walk its body again with
		// the call's arguments as $1…. A function defined outside any
		// branch shadows the command of its name, which then does not
		// run (function ls { rm -rf /; }; ls is judged as its body).
		shadowed = fn.uncond
		// A call without arguments of a function that shadows no command
		// was judged when the body was walked at its definition.
		if !fn.active && (len(inv.argv) > 1 || h != nil) {
			fn.active = true
			args, arg0, has := w.args, w.arg0, w.hasArgs
			w.args, w.hasArgs = inv.argv[1:], true
			w.cond++
			w.stmt(fn.body, inv.stdin)
			w.cond--
			w.args, w.arg0, w.hasArgs = args, arg0, has
			fn.active = false
		}
	}
	if strings.Contains(path, "/") {
		if c, ok := w.knownFile(exactField(path)); ok {
			w.runWritten(inv, path, c)
		}
	}
	if h != nil && !shadowed {
		h(w, inv, name)
	}
}

// runWritten checks a file that an earlier command of the line wrote and
// this one runs directly (echo 'rm -rf /' > x; chmod +x x; ./x): by its
// #! line, as shell text or as interpreter code.
func (w *walker) runWritten(inv *invocation, path string, c field) {
	label := "script " + path + " (written earlier)"
	text := renderPayload(c)
	if rest, ok := strings.CutPrefix(text, "#!"); ok {
		line, _, _ := strings.Cut(rest, "\n")
		fs := strings.Fields(line)
		if len(fs) > 0 {
			interp := fs[0]
			if interp[strings.LastIndexByte(interp, '/')+1:] == "env" && len(fs) > 1 {
				interp = fs[1]
				for _, f := range fs[1:] {
					if !strings.HasPrefix(f, "-") {
						interp = f
						break
					}
				}
			}
			base := interp[strings.LastIndexByte(interp, '/')+1:]
			if h, name := w.lookupCmd(base); h != nil && isInterp(name) {
				lang := name
				switch name {
				case "gawk", "mawk", "nawk":
					lang = "awk"
				case "nodejs", "bun":
					lang = "node"
				case "rscript":
					lang = "r"
				case "tclsh", "wish", "expect", "jimsh":
					lang = "tcl"
				}
				w.inlineCode(inv, lang, c, name+" "+label)
				return
			}
		}
	}
	w.payload(inv, c, label, append([]field{exactField(path)}, inv.args()...), false)
}

func isInterp(name string) bool {
	switch name {
	case "python", "perl", "ruby", "node", "nodejs", "bun", "php", "lua", "awk", "gawk", "mawk", "nawk", "r", "rscript", "tclsh", "wish", "expect", "jimsh":
		return true
	}
	return false
}

// dynamic checks a command whose name is only known at run time. It is
// judged by its arguments: refused when they would be destructive for some
// command, or when they contain a known command (as "$SUDO rm -rf /").
func (w *walker) dynamic(inv *invocation) {
	d := *inv
	d.dyn = true
	show := inv.argv[0].show()
	d.via = append(inv.via[:len(inv.via):len(inv.via)], show)
	args := inv.argv[1:]
	p := parseArgs(args, &optSyntax{})
	rec := p.hasShort('r') || p.hasShort('R') || p.hasLong("recursive", 3)
	for _, t := range p.ops {
		w.deleteTarget(&d, "the command "+show, t, rec, true)
	}
	if p.hasShort('R') || p.hasLong("recursive", 3) {
		for _, t := range p.ops {
			w.chpermTarget(&d, "the command "+show, t, true)
		}
	}
	var dd, find, sh, rsync bool
	for _, a := range args {
		if a.exact() {
			dd = dd || strings.HasPrefix(a.s, "of=")
			find = find || a.s == "-delete" || a.s == "-exec" || a.s == "-execdir" || a.s == "-ok" || a.s == "-okdir"
			sh = sh || isShellC(a.s)
			rsync = rsync || strings.HasPrefix(a.s, "--del")
		}
	}
	if dd {
		w.dd(&d, "dd")
	}
	if find {
		w.find(&d, "find")
	}
	if sh {
		w.shell(&d, "sh")
	}
	if rsync {
		w.rsync(&d, "rsync")
	}
	for i := 1; i < len(inv.argv) && i <= 32; i++ {
		a := inv.argv[i]
		if !a.exact() || strings.HasPrefix(a.s, "-") {
			continue
		}
		if h, _ := w.lookupCmd(a.s[strings.LastIndexByte(a.s, '/')+1:]); h != nil {
			w.named(d.sub(inv.argv[i:], ""), a.s)
		}
	}
}

// isShellC reports whether an argument is a shell option cluster with -c.
func isShellC(s string) bool {
	if len(s) < 2 || s[0] != '-' || s[1] == '-' {
		return false
	}
	return strings.IndexByte(s, 'c') > 0 && strings.Trim(s[1:], "abcefhiklmnprstuvxBCEHP") == ""
}
