package validate

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// target is a path operand resolved against the working directory.
type target struct {
	lit  string   // the cleaned absolute path of an exact operand
	pats [][]ptok // cleaned absolute forms of a pattern operand
}

func (t target) none() bool { return t.lit == "" && len(t.pats) == 0 }

// target resolves an operand. Relative operands resolve against the working
// directory when it is known; otherwise they cannot name a protected path.
func (w *walker) target(f field) target {
	if f.exact() {
		if f.s == "" {
			return target{}
		}
		p := w.resolveLinks(w.fileKey(f.s))
		if p[0] != '/' {
			return target{}
		}
		return target{lit: p}
	}
	var t target
	if f.toks[0].kind == tCwd {
		// $PWD/…: relative to the working directory.
		rest := f.toks[1:]
		for len(rest) > 0 && rest[0].kind == tLit && rest[0].b == '/' {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			rest = []ptok{{kind: tLit, b: '.'}}
		}
		if allLit(rest) {
			return w.target(field{s: litString(rest), pos: f.pos})
		}
		f = field{toks: rest, s: tokString(rest), pos: f.pos}
	}
	abs := f.toks[0].kind == tLit && f.toks[0].b == '/'
	for _, v := range cleanToks(f.toks) {
		if len(v) > 0 && v[0].kind == tLit && v[0].b == '/' {
			t.pats = append(t.pats, v)
		}
	}
	if !abs && w.cwd != "" {
		joined := append(litToks(w.cwd+"/"), f.toks...)
		t.pats = append(t.pats, cleanToks(joined)...)
	}
	for i, v := range t.pats {
		t.pats[i] = w.resolvePatLinks(v)
	}
	if len(w.res.links) > 0 {
		if !abs && w.cwd == "" {
			// A relative pattern under a link made here: x/* after ln -s / x.
			for _, v := range cleanToks(f.toks) {
				if r := w.resolvePatLinks(v); len(r) > 0 && r[0].kind == tLit && r[0].b == '/' {
					t.pats = append(t.pats, r)
				}
			}
		}
	}
	// A pattern that is really a literal path after cleaning.
	if len(t.pats) == 1 && allLit(t.pats[0]) {
		return target{lit: litString(t.pats[0])}
	}
	return t
}

func allLit(t []ptok) bool {
	for _, k := range t {
		if k.kind != tLit {
			return false
		}
	}
	return true
}

func litString(t []ptok) string {
	b := make([]byte, len(t))
	for i, k := range t {
		b[i] = k.b
	}
	return string(b)
}

// rootHit describes how a target meets a protected root.
type rootHit struct {
	root string
	all  bool // the target is a glob covering every entry of root
}

func (w *walker) protectedHit(t target) (rootHit, bool) {
	if t.lit != "" {
		for _, r := range w.cfg.roots {
			if t.lit == r {
				return rootHit{root: r}, true
			}
		}
		return rootHit{}, false
	}
	for _, v := range t.pats {
		i := len(v) - 1
		for i >= 0 && !(v[i].kind == tLit && v[i].b == '/') {
			i--
		}
		if i < 0 || !allChildren(v[i+1:]) {
			continue
		}
		dir := v[:i]
		if len(dir) == 0 {
			dir = v[:1]
		}
		for _, r := range w.cfg.roots {
			if matchLit(dir, r) {
				return rootHit{root: r, all: true}, true
			}
		}
	}
	for _, v := range t.pats {
		for _, r := range w.cfg.roots {
			if matchLit(v, r) {
				return rootHit{root: r}, true
			}
		}
	}
	return rootHit{}, false
}

func patternHit(t target, pats [][]ptok) (string, bool) {
	for _, p := range pats {
		if t.lit != "" {
			if matchLit(p, t.lit) {
				return showPath(t.lit), true
			}
			continue
		}
		for _, v := range t.pats {
			if intersects(v, p) {
				return showPath(tokString(v)), true
			}
		}
	}
	return "", false
}

func (w *walker) deviceHit(t target) (string, bool) {
	if t.lit != "" && !strings.HasPrefix(t.lit, "/dev/") && !strings.HasPrefix(t.lit, "/proc/") && !customList(w.cfg.devices, compiledDefaultDevices) {
		return "", false
	}
	return patternHit(t, w.cfg.devices)
}

func (w *walker) criticalHit(t target) (string, bool) {
	return patternHit(t, w.cfg.critical)
}

func customList(a, b [][]ptok) bool {
	return len(a) != len(b) || len(a) > 0 && &a[0] != &b[0]
}

var sysrqPattern = [][]ptok{compilePattern("/proc/sysrq-trigger"), compilePattern("/proc/sys/kernel/sysrq"), compilePattern("/sys/power/state"), compilePattern("/sys/power/disk")}

// kernelPattern covers the kernel's settings: writing them can disable
// devices, memory or the network (rule sysfs-write).
var kernelPattern = [][]ptok{compilePattern("/sys/**"), compilePattern("/proc/sys/**")}

// kernelWrite reports a write to a kernel setting: the sysrq trigger and
// /sys/power (power-state), or anything else under /sys or /proc/sys.
func (w *walker) kernelWrite(inv *invocation, t target, how string, pos syntax.Pos) bool {
	if p, ok := patternHit(t, sysrqPattern); ok {
		w.report(inv, RulePowerState, how+" writes to "+p+", which can reboot or halt the machine"+at(pos))
		return true
	}
	if p, ok := patternHit(t, kernelPattern); ok {
		w.report(inv, RuleSysfsWrite, how+" writes the kernel setting "+p+at(pos))
		return true
	}
	return false
}

// writeTarget checks a file that a command writes.
func (w *walker) writeTarget(inv *invocation, f field, how string) {
	w.noteStartup(f, how)
	t := w.target(f)
	if t.none() {
		return
	}
	if d, ok := w.deviceHit(t); ok {
		w.report(inv, RuleRawDeviceWrite, how+" writes to the raw device "+d+at(f.pos))
		return
	}
	if c, ok := w.criticalHit(t); ok {
		w.report(inv, RuleCriticalFileWrite, how+" overwrites the critical file "+c+at(f.pos))
		return
	}
	w.kernelWrite(inv, t, how, f.pos)
}

// readTarget checks a file that a command reads.
func (w *walker) readTarget(inv *invocation, f field, how string) {
	t := w.target(f)
	if t.none() {
		return
	}
	if d, ok := w.deviceHit(t); ok {
		w.report(inv, RuleRawDeviceRead, how+" reads the raw device "+d+at(f.pos))
	}
}

// deleteTarget checks an operand that a command deletes. rec says whether
// the command recurses into directories; strict (for commands whose name is
// dynamic) requires recursion for a root itself.
func (w *walker) deleteTarget(inv *invocation, cmd string, f field, rec, strict bool) {
	t := w.target(f)
	if t.none() {
		return
	}
	if h, ok := w.protectedHit(t); ok && (rec || !strict) {
		switch {
		case h.all:
			w.report(inv, RuleRecursiveDeleteRoot, cmd+" would delete every entry of the protected root "+showPath(h.root)+" ("+f.show()+at(f.pos)+")")
		case rec:
			w.report(inv, RuleRecursiveDeleteRoot, cmd+" would recursively delete the protected root "+showPath(h.root)+" ("+f.show()+at(f.pos)+")")
		default:
			w.report(inv, RuleRecursiveDeleteRoot, cmd+" would delete the protected root "+showPath(h.root)+" ("+f.show()+at(f.pos)+")")
		}
		return
	}
	if strict {
		return
	}
	if c, ok := w.criticalHit(t); ok {
		w.report(inv, RuleCriticalFileWrite, cmd+" would delete the critical file "+c+at(f.pos))
	}
}

// resolveLinks replaces symbolic links that this program created (ln -s)
// and /proc/PID/root, which is the root directory, in a cleaned path.
func (w *walker) resolveLinks(p string) string {
	for n := 0; n < 40; n++ {
		changed := false
		if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
			if i := strings.IndexByte(rest, '/'); i > 0 {
				if after, ok := strings.CutPrefix(rest[i:], "/root"); ok && (after == "" || after[0] == '/') {
					p = cleanPath("/" + after)
					changed = true
				} else if r, ok := w.procLink(rest[:i], rest[i+1:]); ok {
					p = r
					changed = true
				}
			}
		}
		if !changed && w.opts.Readlink != nil && !strings.HasPrefix(p, "/proc/") {
			p, changed = w.resolveFS(p)
		}
		best := ""
		for link := range w.res.links {
			if (p == link || strings.HasPrefix(p, link+"/") || link == "/") && len(link) > len(best) {
				best = link
			}
		}
		if best != "" {
			p = cleanPath(w.res.links[best] + "/" + p[len(best):])
			changed = true
		}
		if !changed {
			break
		}
	}
	return p
}

// recordLink remembers a symbolic link created by ln -s.
func (w *walker) recordLink(to, link field) {
	if !to.exact() || !link.exact() || to.s == "" || link.s == "" {
		return
	}
	key := w.fileKey(link.s)
	t := to.s
	if !strings.HasPrefix(t, "/") {
		dir := "."
		if i := strings.LastIndexByte(key, '/'); i >= 0 {
			dir = key[:i]
			if dir == "" {
				dir = "/"
			}
		}
		t = dir + "/" + t
	}
	if w.res.links == nil {
		w.res.links = make(map[string]string)
	}
	if len(w.res.links) < 32 {
		w.res.links[key] = cleanPath(t)
	}
}

// fetchedFile reports whether an earlier command of this program downloaded
// the file f.
func (w *walker) fetchedFile(f field) (string, bool) {
	if len(w.res.fetched) == 0 || !f.exact() {
		return "", false
	}
	by, ok := w.res.fetched[w.fileKey(f.s)]
	return by, ok
}

func (w *walker) fileKey(p string) string {
	if !strings.HasPrefix(p, "/") && w.cwd != "" {
		p = w.cwd + "/" + p
	}
	return cleanPath(p)
}

func (w *walker) recordFetch(f field, by string) {
	if !f.exact() || f.s == "" || f.s == "-" {
		return
	}
	if w.res.fetched == nil {
		w.res.fetched = make(map[string]string)
	}
	w.res.fetched[w.fileKey(f.s)] = by
}

// stdinOf returns the standard input a statement's own redirections give
// it, without checking them (the walk does that).
func (w *walker) stdinOf(st *syntax.Stmt, in *source) *source {
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch {
		case r.Hdoc != nil && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc):
			f := w.hdocText(r.Hdoc, quotedDelim(r.Word))
			in = &source{text: f, has: true, taint: f.taint, desc: "the here-document" + at(r.OpPos)}
		case r.Op == syntax.WordHdoc && r.Word != nil:
			f := joinFields(w.expandString(r.Word), exactField(""), "\n")
			in = &source{text: f, has: true, taint: f.taint, desc: "the here-string" + at(r.OpPos)}
		case r.Op == syntax.RdrIn && r.Word != nil:
			fs := w.expandWords([]*syntax.Word{r.Word})
			if len(fs) == 1 {
				in = w.fileSource(fs[0])
			}
		}
	}
	return in
}

// knownFile returns the content of a file an earlier command of this
// program wrote, when it is known.
func (w *walker) knownFile(f field) (field, bool) {
	if len(w.res.files) == 0 || !f.exact() {
		return field{}, false
	}
	c, ok := w.res.files[w.fileKey(f.s)]
	return c, ok
}

// staticOutput computes what a statement prints when that is known without
// running it: echo, printf, cat of a here-document or of a file written
// earlier, pwd.
func (w *walker) staticOutput(st *syntax.Stmt, in *source) (field, bool) {
	for _, r := range st.Redirs {
		if (r.N == nil || r.N.Value == "1") && (r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrAll || r.Op == syntax.AppAll || r.Op == syntax.RdrClob) {
			return field{}, false // output goes elsewhere
		}
	}
	return w.staticOutputOf(st, in)
}

// staticOutputOf is staticOutput regardless of where the output goes.
func (w *walker) staticOutputOf(st *syntax.Stmt, in *source) (field, bool) {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 || w.depth > maxDepth {
		return field{}, false
	}
	name, ok := quickLit(ce.Args[0])
	if !ok {
		return field{}, false
	}
	switch name {
	case "echo", "printf", "cat", "pwd", "/bin/echo", "/usr/bin/echo", "/bin/cat", "/usr/bin/cat", "/usr/bin/printf",
		"which", "command", "type", "whereis", "/usr/bin/which", "realpath", "readlink":
	default:
		return field{}, false
	}
	in = w.stdinOf(st, in)
	argv := w.expandWords(ce.Args)
	if len(argv) == 0 {
		return field{}, false
	}
	args := argv[1:]
	switch name[strings.LastIndexByte(name, '/')+1:] {
	case "echo":
		return echoOutput(args), true
	case "printf":
		return printfOutput(args)
	case "pwd":
		return joinFields(w.cwdField(), exactField(""), "\n"), true
	case "which", "command", "type", "whereis", "realpath", "readlink":
		// $(which sudo) is sudo; $(realpath /) is /.
		flags := ""
		for _, a := range args {
			if a.exact() && strings.HasPrefix(a.s, "-") {
				flags += a.s
			}
		}
		base := name[strings.LastIndexByte(name, '/')+1:]
		if base == "command" && !strings.ContainsAny(flags, "vV") || base == "type" && !strings.ContainsAny(flags, "pP") {
			return field{}, false
		}
		var names []field
		for _, a := range args {
			if !a.exact() || !strings.HasPrefix(a.s, "-") {
				names = append(names, a)
			}
		}
		if len(names) == 0 {
			return field{}, false
		}
		return concatFields(append(names, exactField("")), "\n"), true
	case "cat":
		if len(args) == 0 || len(args) == 1 && args[0].exact() && args[0].s == "-" {
			if in != nil && in.has {
				return in.text, true
			}
			return field{}, false
		}
		parts := make([]field, 0, len(args))
		for _, a := range args {
			c, ok := w.knownFile(a)
			if !ok {
				return field{}, false
			}
			parts = append(parts, c)
		}
		return concatFields(parts, ""), true
	}
	return field{}, false
}

func echoOutput(args []field) field {
	newline, escapes := true, false
	for len(args) > 0 && args[0].exact() && len(args[0].s) > 1 && args[0].s[0] == '-' && strings.Trim(args[0].s[1:], "neE") == "" {
		for _, c := range args[0].s[1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	parts := make([]field, 0, len(args)+1)
	for _, a := range args {
		a.proc = nil
		if escapes && a.exact() {
			s, stop := decodeEscapes(a.s, true)
			a.s = s
			if stop {
				parts = append(parts, a)
				return concatFields(parts, " ")
			}
		}
		parts = append(parts, a)
	}
	out := concatFields(parts, " ")
	if newline {
		out = concatFields([]field{out, exactField("\n")}, "")
	}
	return out
}

// printfOutput implements the common printf formats: %s, %b, %c, %d, %%.
func printfOutput(args []field) (field, bool) {
	if len(args) > 0 && args[0].exact() && args[0].s == "--" {
		args = args[1:]
	}
	if len(args) == 0 || !args[0].exact() || strings.HasPrefix(args[0].s, "-v") {
		return field{}, false
	}
	format := args[0].s
	rest := args[1:]
	var parts []field
	add := func(f field) {
		f.proc = nil
		parts = append(parts, f)
	}
	for round := 0; round < 64; round++ {
		used := 0
		i := 0
		for i < len(format) {
			j := strings.IndexByte(format[i:], '%')
			if j < 0 {
				s, _ := decodeEscapes(format[i:], false)
				add(exactField(s))
				break
			}
			if j > 0 {
				s, _ := decodeEscapes(format[i:i+j], false)
				add(exactField(s))
			}
			i += j + 1
			// Skip flags, width and precision.
			for i < len(format) && strings.IndexByte("-+ #0123456789.", format[i]) >= 0 {
				i++
			}
			if i >= len(format) {
				return field{}, false
			}
			verb := format[i]
			i++
			if verb == '%' {
				add(exactField("%"))
				continue
			}
			var arg field
			if used < len(rest) {
				arg = rest[used]
			}
			used++
			switch verb {
			case 's', 'd', 'i', 'u':
				add(arg)
			case 'b':
				if arg.exact() {
					s, _ := decodeEscapes(arg.s, true)
					arg.s = s
				}
				add(arg)
			case 'c':
				if arg.exact() && arg.s != "" {
					arg.s = arg.s[:1]
				}
				add(arg)
			case 'q':
				add(arg)
			default:
				return field{}, false
			}
		}
		rest = rest[min(used, len(rest)):]
		if used == 0 || len(rest) == 0 {
			break
		}
	}
	if len(parts) == 0 {
		return exactField(""), true
	}
	return concatFields(parts, ""), true
}

// findOutput describes the paths a find statement prints (for xargs).
func (w *walker) findOutput(st *syntax.Stmt) ([]field, bool, bool) {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 {
		return nil, false, false
	}
	name, ok := quickLit(ce.Args[0])
	if !ok {
		return nil, false, false
	}
	name = name[strings.LastIndexByte(name, '/')+1:]
	if name != "find" && name != "ls" {
		return nil, false, false
	}
	argv := w.expandWords(ce.Args)
	if len(argv) == 0 {
		return nil, false, false
	}
	if name == "ls" {
		// ls -d prints its operands as given.
		p := parseArgs(argv[1:], &optSyntax{argShort: "IwT"})
		if !p.hasShort('d') && !p.hasLong("directory", 3) || len(p.ops) == 0 {
			return nil, false, false
		}
		return p.ops, false, true
	}
	fe := parseFind(argv[1:])
	if fe.narrowed {
		return nil, false, false
	}
	return fe.starts, true, true
}

// substOutput is the value of a command substitution when it is known,
// without its trailing newlines.
func (w *walker) substOutput(stmts []*syntax.Stmt) (field, bool, taint) {
	t := w.taintOf(stmts)
	if len(stmts) != 1 || w.res.eval >= maxEval || !w.tick() {
		return field{}, false, t
	}
	w.res.eval++
	f, ok := w.staticOutput(stmts[0], nil)
	w.res.eval--
	if !ok {
		return field{}, false, t | f.taint
	}
	if f.exact() {
		f.s = strings.TrimRight(f.s, "\n")
		return f, true, t | f.taint
	}
	for len(f.toks) > 0 && f.toks[len(f.toks)-1].kind == tLit && f.toks[len(f.toks)-1].b == '\n' {
		f.toks = f.toks[:len(f.toks)-1]
	}
	f.s = strings.TrimRight(f.s, "\n")
	if len(f.toks) == 0 {
		return field{}, true, t | f.taint
	}
	return f, true, t | f.taint
}

// cwdField is the working directory as a value.
func (w *walker) cwdField() field {
	if w.cwd != "" {
		return exactField(w.cwd)
	}
	return field{s: "$PWD", toks: []ptok{{kind: tCwd}}}
}

// resolvePatLinks follows the symbolic links made earlier in the line in
// the literal directory part of a pattern (ln -s / x; rm -rf x/*).
func (w *walker) resolvePatLinks(v []ptok) []ptok {
	end := 0 // the literal prefix v[:end] ends before a '/'
	for i, k := range v {
		if k.kind != tLit {
			break
		}
		if k.b == '/' {
			end = i
		}
	}
	if end == 0 {
		return v
	}
	dir := litString(v[:end])
	res := w.resolveLinks(dir)
	if res == dir {
		return v
	}
	out := litToks(res)
	if res == "/" {
		out = out[:0]
	}
	return append(out, v[end:]...)
}

// procLink resolves /proc/PID/cwd and /proc/PID/fd/N (after is the part
// after PID/). The command's own (self, thread-self, $$) working directory
// is the checker's; its descriptors cannot be followed, so they are taken
// for / (the most dangerous reading); another process's are read from the
// machine when Options.Readlink is set, and taken for / otherwise.
func (w *walker) procLink(pid, after string) (string, bool) {
	name, rest, _ := strings.Cut(after, "/")
	if name == "task" {
		// /proc/PID/task/TID/cwd is the thread's.
		_, r, ok := strings.Cut(rest, "/")
		if !ok {
			return "", false
		}
		name, rest, _ = strings.Cut(r, "/")
	}
	switch name {
	case "cwd":
	case "fd":
		n, r, _ := strings.Cut(rest, "/")
		if n == "" || !isDigits(n) {
			return "", false
		}
		name, rest = "fd/"+n, r
	default:
		return "", false
	}
	self := pid == "self" || pid == "thread-self"
	base := ""
	switch {
	case self && name == "cwd":
		base = w.cwd
	case !self && isDigits(pid) && w.opts.Readlink != nil:
		if t, err := w.opts.Readlink("/proc/" + pid + "/" + name); err == nil && strings.HasPrefix(t, "/") {
			base = t
		}
	}
	if base == "" {
		base = "/"
	}
	return cleanPath(base + "/" + rest), true
}

// resolveFS follows the first symbolic link of the machine on a cleaned
// absolute path, through Options.Readlink, and reports whether it found
// one.
func (w *walker) resolveFS(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || p == "/" {
		return p, false
	}
	comps := strings.Split(p[1:], "/")
	dir := ""
	for i, c := range comps {
		next := dir + "/" + c
		if t, err := w.opts.Readlink(next); err == nil && t != "" {
			if !strings.HasPrefix(t, "/") {
				t = dir + "/" + t
			}
			return cleanPath(t + "/" + strings.Join(comps[i+1:], "/")), true
		}
		dir = next
	}
	return p, false
}
