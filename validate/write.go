package validate

import (
	"strings"
)

var copySyntax = map[string]optSyntax{
	"cp":      {argShort: "tS", argLong: []string{"target-directory", "suffix"}},
	"install": {argShort: "mogtS", argLong: []string{"mode", "owner", "group", "target-directory", "suffix", "strip-program"}},
	"ln":      {argShort: "tS", argLong: []string{"target-directory", "suffix"}},
}

func (w *walker) copyLike(inv *invocation, name string) {
	syn := copySyntax[name]
	p := parseArgs(inv.args(), &syn)
	if name == "install" && p.hasShort('d') {
		return
	}
	srcs, dest, hasDest := p.ops, field{}, false
	if d, ok := p.val('t', "target-directory"); ok {
		dest, hasDest = d, true
	} else if len(srcs) >= 2 {
		dest, hasDest = srcs[len(srcs)-1], true
		srcs = srcs[:len(srcs)-1]
	}
	if name == "cp" {
		for _, s := range srcs {
			w.readTarget(inv, s, "cp")
		}
	}
	if hasDest {
		w.destination(inv, name, srcs, dest, name != "ln")
		if name == "ln" && (p.hasShort('s') || p.hasLong("symbolic", 2)) && len(srcs) == 1 {
			w.recordLink(srcs[0], dest)
		}
		if name != "ln" && len(srcs) == 1 {
			// cp x.sh run.sh; ./run.sh runs what x.sh held.
			if c, ok := w.knownFile(srcs[0]); ok {
				w.recordFile(dest, c, false)
			} else {
				w.forgetFile(dest)
			}
		}
	}
}

// keyValue splits a dd operand such as of=/dev/sda.
func keyValue(f field, key string) (field, bool) {
	if f.exact() {
		if v, ok := strings.CutPrefix(f.s, key); ok {
			return field{s: v, pos: f.pos}, true
		}
		return field{}, false
	}
	if len(f.toks) < len(key) {
		return field{}, false
	}
	for i := 0; i < len(key); i++ {
		if f.toks[i].kind != tLit || f.toks[i].b != key[i] {
			return field{}, false
		}
	}
	rest := f.toks[len(key):]
	if allLit(rest) {
		return field{s: litString(rest), pos: f.pos}, true
	}
	show := tokString(rest)
	if strings.HasPrefix(f.s, key) {
		show = f.s[len(key):]
	}
	return field{toks: rest, s: show, pos: f.pos}, true
}

func (w *walker) dd(inv *invocation, name string) {
	for _, a := range inv.args() {
		if v, ok := keyValue(a, "of="); ok {
			w.writeTarget(inv, v, name+" of="+v.show())
		}
		if v, ok := keyValue(a, "if="); ok && !inv.dyn {
			w.readTarget(inv, v, name+" if="+v.show())
		}
	}
}

func (w *walker) ddrescue(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "abBcCeEiIKlLmMOsTxXZ", argLong: []string{"input-position", "output-position", "size", "domain-mapfile"}})
	if len(p.ops) >= 2 {
		w.readTarget(inv, p.ops[0], "ddrescue")
		w.writeTarget(inv, p.ops[1], "ddrescue")
	}
}

func (w *walker) tee(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{})
	appendTo := p.has("a", "append")
	for _, f := range p.ops {
		w.writeTarget(inv, f, name)
		if src := inv.stdin; src != nil && src.has && name == "tee" {
			// tee x.sh <<< 'rm -rf /'; sh x.sh
			w.recordFile(f, src.text, appendTo)
		} else if !appendTo {
			w.forgetFile(f)
		}
	}
}

// mount --bind SRC DIR makes DIR another name of SRC, as a symbolic link
// does.
func (w *walker) mount(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "otLUTNO", argLong: []string{"options", "types", "label", "uuid", "fstab", "namespace", "test-opts", "source", "target"}})
	bind := p.has("B", "bind", "rbind")
	if o, ok := p.val('o', "options"); ok && o.exact() {
		for _, opt := range strings.Split(o.s, ",") {
			bind = bind || opt == "bind" || opt == "rbind"
		}
	}
	if bind && len(p.ops) == 2 {
		w.recordLink(p.ops[0], p.ops[1])
	}
}

func (w *walker) sed(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "efl", argLong: []string{"expression", "file", "line-length"}})
	var scripts []field
	for _, v := range p.vals {
		if v.name == "e" || len(v.name) > 1 && strings.HasPrefix("expression", v.name) {
			scripts = append(scripts, v.val)
		}
	}
	if _, ok := p.val('f', "file"); !ok && len(scripts) == 0 && len(p.ops) > 0 {
		scripts = append(scripts, p.ops[0])
	}
	for _, sc := range scripts {
		if sc.exact() && sedSubstExec(sc.s) {
			w.report(inv, RuleHiddenCode, "sed's s///e"+at(sc.pos)+" runs each line it substitutes as a shell command, and the lines are only known at run time")
		}
		if sc.exact() {
			for _, cmd := range sedExecs(sc.s) {
				w.payload(inv, field{s: cmd, pos: sc.pos}, "sed e command", nil, true)
			}
			for _, f := range sedWrites(sc.s) {
				w.writeTarget(inv, field{s: f, pos: sc.pos}, "sed w command")
			}
		}
	}
	if !p.hasShort('i') && !p.hasLong("in-place", 3) {
		return
	}
	files := p.ops
	if _, ok := p.val('e', "expression"); !ok {
		if _, ok := p.val('f', "file"); !ok && len(files) > 0 {
			files = files[1:]
		}
	}
	for _, f := range files {
		w.writeTarget(inv, f, "sed -i")
	}
}

// curl and wget write files that a later command may run.
func (w *walker) curl(inv *invocation, name string) {
	args := inv.args()
	remote := false
	var urls []field
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		switch {
		case a.s == "-o" || a.s == "--output":
			if i+1 < len(args) {
				i++
				w.writeTarget(inv, args[i], "curl -o")
				w.recordFetch(args[i], "curl"+at(a.pos))
			}
		case strings.HasPrefix(a.s, "--output="):
			f := field{s: a.s[len("--output="):], pos: a.pos}
			w.writeTarget(inv, f, "curl -o")
			w.recordFetch(f, "curl"+at(a.pos))
		case a.s == "-O" || a.s == "--remote-name" || a.s == "--remote-name-all":
			remote = true
		case strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.HasSuffix(a.s, "o") && len(a.s) > 2:
			if i+1 < len(args) {
				i++
				w.writeTarget(inv, args[i], "curl -o")
				w.recordFetch(args[i], "curl"+at(a.pos))
			}
		case strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.ContainsRune(a.s, 'O'):
			remote = true
		case strings.Contains(a.s, "://"):
			urls = append(urls, a)
		}
	}
	if remote {
		for _, u := range urls {
			w.recordFetch(exactField(urlBase(u.s)), "curl"+at(u.pos))
		}
	}
}

func (w *walker) wget(inv *invocation, name string) {
	args := inv.args()
	var out *field
	var urls []field
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		switch {
		case a.s == "-O" || a.s == "--output-document":
			if i+1 < len(args) {
				i++
				f := args[i]
				out = &f
			}
		case strings.HasPrefix(a.s, "--output-document="):
			f := field{s: a.s[len("--output-document="):], pos: a.pos}
			out = &f
		case strings.HasPrefix(a.s, "-O") && len(a.s) > 2:
			f := field{s: a.s[2:], pos: a.pos}
			out = &f
		case strings.Contains(a.s, "://"):
			urls = append(urls, a)
		}
	}
	if out != nil {
		w.writeTarget(inv, *out, name+" -O")
		w.recordFetch(*out, name)
		return
	}
	for _, u := range urls {
		w.recordFetch(exactField(urlBase(u.s)), name+at(u.pos))
	}
}

func urlBase(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	u = strings.TrimRight(u, "/")
	if i := strings.Index(u, "://"); i >= 0 && strings.IndexByte(u[i+3:], '/') < 0 {
		return "index.html"
	}
	return u[strings.LastIndexByte(u, '/')+1:]
}

// readerArgs lists the short options that take an argument for commands
// that read their operands.
var readerArgs = map[string]string{
	"tac": "s", "head": "nc", "tail": "ncs", "od": "AjNtw", "xxd": "cglos", "hexdump": "efns", "hd": "efns",
	"strings": "nte", "base64": "w", "base32": "w", "pv": "LsNiDBWR", "nl": "bdfhilnsvw", "zstd": "oDT",
	"xz": "CFTM", "lz4": "B",
}

// reader refuses byte dumps of raw disks and kernel memory (cat /dev/sda,
// head -c 512 /dev/nvme0n1, strings /dev/mem).
func (w *walker) reader(inv *invocation, name string) {
	if inv.dyn {
		return
	}
	p := parseArgs(inv.args(), &optSyntax{argShort: readerArgs[name]})
	for _, f := range p.ops {
		w.readTarget(inv, f, name)
	}
}

// sedExecs returns the commands of GNU sed's e command in a script.
func sedExecs(script string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
		part = strings.TrimLeft(part, " \t0123456789$,!~")
		if strings.HasPrefix(part, "/") {
			if end := strings.IndexByte(part[1:], '/'); end >= 0 {
				part = strings.TrimLeft(part[end+2:], " \t,!")
			}
		}
		if rest, ok := strings.CutPrefix(part, "e"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			if cmd := strings.TrimSpace(rest); cmd != "" {
				out = append(out, cmd)
			}
		}
	}
	return out
}

// sedWrites returns the files that the w command and the w flag of s
// write in a sed script (sed 's/a/b/w /etc/passwd', sed -n 'w out').
func sedWrites(script string) []string {
	var out []string
	for _, line := range strings.Split(script, "\n") {
		for _, part := range strings.Split(line, ";") {
			part = strings.TrimLeft(part, " \t0123456789$,!~{")
			if strings.HasPrefix(part, "/") {
				if end := strings.IndexByte(part[1:], '/'); end >= 0 {
					part = strings.TrimLeft(part[end+2:], " \t,!")
				}
			}
			switch {
			case strings.HasPrefix(part, "w ") || strings.HasPrefix(part, "W "):
				out = append(out, strings.TrimSpace(part[2:]))
			case len(part) > 3 && part[0] == 's':
				d := part[1]
				// s/re/repl/flags: the flags follow the third delimiter.
				n, i := 0, 2
				for ; i < len(part) && n < 2; i++ {
					switch part[i] {
					case '\\':
						i++
					case d:
						n++
					}
				}
				if n == 2 {
					flags := part[i:]
					if k := strings.IndexByte(flags, 'w'); k >= 0 && strings.Trim(flags[:k], "gpiIme0123456789") == "" {
						if f := strings.TrimSpace(flags[k+1:]); f != "" {
							out = append(out, f)
						}
					}
				}
			}
		}
	}
	return out
}

// sedSubstExec reports whether a sed script has an s command with the e
// flag (GNU sed: run the pattern space as a command).
func sedSubstExec(script string) bool {
	for _, part := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
		part = strings.TrimLeft(part, " \t0123456789$,!~")
		if strings.HasPrefix(part, "/") {
			if end := strings.IndexByte(part[1:], '/'); end >= 0 {
				part = strings.TrimLeft(part[end+2:], " \t,!")
			}
		}
		if len(part) < 2 || part[0] != 's' {
			continue
		}
		delim, n, i := part[1], 0, 2
		for ; i < len(part) && n < 2; i++ {
			switch part[i] {
			case '\\':
				i++
			case delim:
				n++
			}
		}
		if n < 2 {
			continue
		}
		for ; i < len(part); i++ {
			c := part[i]
			if c == 'e' {
				return true
			}
			if c == 'w' || c == ' ' || c == '\t' {
				break
			}
		}
	}
	return false
}
