package validate

import (
	"strings"
)

// Programs with a shell of their own: debuggers (gdb shell, lldb platform
// shell), make recipes, terminal multiplexers (tmux new-session CMD,
// send-keys), database shells (\!, .shell) and man's pager.

// gdb runs -ex commands and -x files; "shell CMD" and "!CMD" run a shell,
// "call system(…)" too, and --args names the program it runs.
func (w *walker) gdb(inv *invocation, name string) {
	args := inv.args()
	var cmds []field
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		s := strings.TrimPrefix(a.s, "-")
		val, hasVal := "", false
		if k, v, ok := strings.Cut(s, "="); ok {
			s, val, hasVal = k, v, true
		}
		switch s {
		case "ex", "-ex", "iex", "-iex", "eval-command", "-eval-command", "init-eval-command", "-init-eval-command", "o", "one-line", "-one-line", "O", "one-line-before-file", "-one-line-before-file":
			if hasVal {
				cmds = append(cmds, field{s: val, pos: a.pos})
			} else if i+1 < len(args) {
				i++
				cmds = append(cmds, args[i])
			}
		case "x", "command", "-command", "ix", "init-command", "-init-command", "s", "source", "-source":
			f := field{s: val, pos: a.pos}
			if !hasVal && i+1 < len(args) {
				i++
				f = args[i]
			}
			if c, ok := w.knownFile(f); ok {
				cmds = append(cmds, splitLines(c)...)
			}
		case "args", "-args", "-":
			if s == "-" && name != "lldb" {
				continue
			}
			if i+1 < len(args) {
				sub := inv.sub(args[i+1:], name+" --args")
				sub.stdin = nil
				w.invoke(sub)
			}
			i = len(args)
		}
	}
	for _, c := range cmds {
		if !c.exact() {
			continue
		}
		t := strings.TrimSpace(c.s)
		for _, pre := range []string{"shell ", "!", "platform shell ", "pipe ", "| "} {
			if rest, ok := strings.CutPrefix(t, pre); ok {
				if pre == "pipe " || pre == "| " {
					// pipe COMMAND | SHELL_COMMAND
					if _, sh, ok := strings.Cut(rest, "|"); ok {
						rest = sh
					} else {
						rest = ""
					}
				}
				w.payload(inv, field{s: rest, pos: c.pos}, name+" shell command", nil, true)
				t = ""
				break
			}
		}
		if rest, ok := strings.CutPrefix(t, "script "); ok && name == "lldb" {
			w.inlineCode(inv, "python", field{s: rest, pos: c.pos}, name+" script")
			continue
		}
		if t != "" && strings.Contains(t, "system") {
			w.inlineCode(inv, "c", field{s: t, pos: c.pos}, name+" command")
		}
	}
}

// make runs the recipes of a makefile through a shell: the makefile read
// from stdin (make -f -), from a file written earlier in the line, or
// given with --eval. $(shell …) runs while the makefile is read.
func (w *walker) make(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "fCIjlWoE", argLong: []string{"file", "makefile", "directory", "include-dir", "jobs", "load-average", "what-if", "new-file", "assume-new", "old-file", "assume-old", "eval"}})
	dry := p.has("nq", "just-print", "dry-run", "recon", "question")
	var texts []field
	files := false
	for _, v := range p.vals {
		switch {
		case v.name == "f" || len(v.name) > 1 && (strings.HasPrefix("file", v.name) || strings.HasPrefix("makefile", v.name)):
			files = true
			if v.val.exact() && isStdinPath(v.val.s) {
				if src := inv.stdin; src != nil && src.has {
					texts = append(texts, src.text)
				}
				continue
			}
			if c, ok := w.knownFile(v.val); ok {
				texts = append(texts, c)
			}
		case v.name == "E" || len(v.name) > 1 && strings.HasPrefix("eval", v.name):
			texts = append(texts, v.val)
		}
	}
	if !files {
		for _, def := range []string{"GNUmakefile", "makefile", "Makefile"} {
			if c, ok := w.knownFile(exactField(def)); ok {
				texts = append(texts, c)
				break
			}
		}
	}
	for _, t := range texts {
		for _, r := range makeRecipes(renderPayload(t), dry) {
			w.payload(inv, field{s: r, pos: t.pos}, name+" recipe", nil, true)
		}
	}
}

// makeRecipes returns the shell commands of a makefile: recipe lines, the
// recipe after "target: ;", and $(shell …). With dry (make -n) only the
// lines that run anyway: $(shell …) and +lines.
func makeRecipes(text string, dry bool) []string {
	var out []string
	text = strings.ReplaceAll(text, "\\\n", " ")
	for i := 0; i < len(text) && len(out) < 256; {
		j := strings.Index(text[i:], "$(shell ")
		if j < 0 {
			break
		}
		start := i + j + len("$(shell ")
		depth, k := 1, start
		for ; k < len(text) && depth > 0; k++ {
			switch text[k] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		out = append(out, makeUnescape(text[start:max(start, k-1)]))
		i = k
	}
	inRule := false
	for _, line := range strings.Split(text, "\n") {
		if len(out) >= 256 {
			break
		}
		if strings.HasPrefix(line, "\t") {
			if inRule {
				r := strings.TrimLeft(line, "\t ")
				force := strings.Contains(r[:min(len(r), 3)], "+")
				r = strings.TrimLeft(r, "@-+")
				if !dry || force {
					out = append(out, makeUnescape(r))
				}
			}
			continue
		}
		t := strings.TrimSpace(line)
		inRule = false
		if t == "" || t[0] == '#' {
			continue
		}
		c := strings.IndexByte(t, ':')
		eq := strings.IndexByte(t, '=')
		if c < 0 || eq >= 0 && eq < c || strings.HasPrefix(t[c:], ":=") || strings.HasPrefix(t[c:], "::=") {
			continue
		}
		inRule = true
		if k := strings.IndexByte(t[c:], ';'); k >= 0 && !dry {
			out = append(out, makeUnescape(strings.TrimLeft(strings.TrimSpace(t[c+k+1:]), "@-+")))
		}
	}
	return out
}

// makeUnescape turns make's $$ into the shell's $.
func makeUnescape(s string) string {
	return strings.ReplaceAll(s, "$$", "$")
}

// tmux runs shell commands given to new-session, new-window,
// split-window, respawn-pane, run-shell and if-shell, and types the keys of
// send-keys into a shell.
func (w *walker) tmux(inv *invocation, name string) {
	args := inv.args()
	i := 0
	for i < len(args) && args[i].exact() && strings.HasPrefix(args[i].s, "-") {
		if oneOf(args[i].s, "-L", "-S", "-f", "-c", "-T") {
			if args[i].s == "-c" && i+1 < len(args) {
				w.payload(inv, args[i+1], name+" -c command", nil, false)
			}
			i++
		}
		i++
	}
	// Commands are separated by ";" words.
	var cmd []field
	flush := func() {
		if len(cmd) > 0 {
			w.tmuxCommand(inv, name, cmd)
		}
		cmd = nil
	}
	for _, a := range args[min(i, len(args)):] {
		if a.exact() && (a.s == ";" || a.s == `\;`) {
			flush()
			continue
		}
		cmd = append(cmd, a)
	}
	flush()
}

func (w *walker) tmuxCommand(inv *invocation, name string, cmd []field) {
	if !cmd[0].exact() {
		return
	}
	sub := cmd[0].s
	p := parseArgs(cmd[1:], &optSyntax{argShort: "sncteFxyfblpTwNRXHM", posix: true})
	switch sub {
	case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp",
		"respawn-window", "respawnw", "run-shell", "run", "display-popup", "popup", "pipe-pane", "pipep":
		if len(p.ops) > 0 {
			w.payload(inv, joinAll(p.ops), name+" "+sub+" command", nil, false)
		}
	case "if-shell", "if":
		if len(p.ops) > 0 {
			w.payload(inv, p.ops[0], name+" if-shell command", nil, false)
		}
	case "send-keys", "send":
		var keys []field
		for _, k := range p.ops {
			if k.exact() && oneOf(k.s, "Enter", "C-m", "KPEnter", "C-j") {
				keys = append(keys, exactField("\n"))
				continue
			}
			if k.exact() && k.s == "Space" {
				keys = append(keys, exactField(" "))
				continue
			}
			keys = append(keys, k)
		}
		if len(keys) > 0 {
			w.payload(inv, concatFields(keys, ""), name+" send-keys", nil, true)
		}
	}
}

// screen runs its operands as a program, and screen -X stuff types text
// into a window's shell.
func (w *walker) screen(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() || !strings.HasPrefix(a.s, "-") {
			sub := inv.sub(args[i:], name)
			sub.stdin = nil
			w.invoke(sub)
			return
		}
		switch {
		case a.s == "-X":
			rest := args[i+1:]
			if len(rest) >= 2 && rest[0].exact() && rest[0].s == "stuff" {
				t := rest[1]
				if t.exact() {
					t.s = strings.NewReplacer(`\n`, "\n", `\r`, "\n", "^M", "\n", "\r", "\n").Replace(t.s)
				}
				w.payload(inv, t, name+" stuff", nil, true)
			}
			return
		case oneOf(a.s, "-S", "-c", "-e", "-h", "-p", "-s", "-T", "-t", "-Logfile", "-r", "-x", "-R"):
			i++
		case strings.HasSuffix(a.s, "S") && len(a.s) > 2:
			i++ // -dmS NAME
		}
	}
}

// dbShell checks the shell escapes of database shells: psql and mysql
// \! CMD, mysql system CMD, sqlite3 .shell and .system, psql \o |CMD and
// COPY … TO PROGRAM.
func (w *walker) dbShell(inv *invocation, name string) {
	args := inv.args()
	var texts []field
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		switch {
		case oneOf(a.s, "-c", "--command", "-e", "--execute", "-cmd") && i+1 < len(args):
			i++
			texts = append(texts, args[i])
		case strings.HasPrefix(a.s, "--command=") || strings.HasPrefix(a.s, "--execute="):
			texts = append(texts, field{s: a.s[strings.IndexByte(a.s, '=')+1:], pos: a.pos})
		case name == "sqlite3" && !strings.HasPrefix(a.s, "-"):
			texts = append(texts, a) // the database, then SQL or dot-commands
		}
	}
	if src := inv.stdin; src != nil && src.has {
		texts = append(texts, src.text)
	}
	for _, t := range texts {
		for _, line := range splitLines(t) {
			if !line.exact() {
				continue
			}
			l := strings.TrimSpace(line.s)
			var cmd string
			switch {
			case strings.HasPrefix(l, `\!`):
				cmd = l[2:]
			case name == "mysql" && strings.HasPrefix(strings.ToLower(l), "system "):
				cmd = l[len("system "):]
			case name == "sqlite3" && (strings.HasPrefix(l, ".shell ") || strings.HasPrefix(l, ".system ")):
				cmd = l[strings.IndexByte(l, ' ')+1:]
			case strings.HasPrefix(l, `\o |`) || strings.HasPrefix(l, `\g |`):
				cmd = l[4:]
			default:
				up := strings.ToUpper(l)
				if k := strings.Index(up, "PROGRAM '"); k >= 0 {
					rest := l[k+len("PROGRAM '"):]
					if e := strings.IndexByte(rest, '\''); e >= 0 {
						cmd = rest[:e]
					}
				}
			}
			if strings.TrimSpace(cmd) != "" {
				w.payload(inv, field{s: cmd, pos: line.pos}, name+" shell escape", nil, true)
			}
		}
	}
}

// man runs its pager (-P, --pager) through a shell.
func (w *walker) man(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "PMLmSsCeRrEH", argLong: []string{"pager", "manpath", "locale", "systems", "sections", "config-file", "extension", "recode", "prompt", "encoding", "html"}})
	for _, v := range p.vals {
		if v.name == "P" || len(v.name) > 1 && strings.HasPrefix("pager", v.name) || v.name == "H" || len(v.name) > 1 && strings.HasPrefix("html", v.name) {
			w.payload(inv, v.val, name+" pager", nil, true)
		}
	}
}
