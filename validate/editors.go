package validate

import (
	"strings"
)

// vim, vi, nvim, ex and view run ex commands from -c, --cmd and +CMD, and
// ex mode (ex, vim -e, -es) reads them from stdin. ":!cmd", ":r !cmd",
// ":w !cmd" and system() run shell commands; ":w", ":x", ":wq" and friends
// write the files being edited (or the file they name). An editor driven by
// a script that writes, or by a script that is not known, is judged as
// writing its file operands; an interactive edit is not.
func (w *walker) vim(inv *invocation, name string) {
	args := inv.args()
	var cmds []field
	var files []field
	exMode := name == "ex"
	scriptUnknown := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			files = append(files, a)
			continue
		}
		s := a.s
		switch {
		case (s == "-c" || s == "--cmd") && i+1 < len(args):
			i++
			cmds = append(cmds, args[i])
		case strings.HasPrefix(s, "+") && len(s) > 1:
			cmds = append(cmds, field{s: s[1:], pos: a.pos})
		case s == "-S" && i+1 < len(args):
			i++
			if c, ok := w.knownFile(args[i]); ok {
				cmds = append(cmds, splitLines(c)...)
			} else {
				scriptUnknown = true
			}
		case s == "-s" && name != "ex" && !exMode && i+1 < len(args):
			i++ // scriptin: normal-mode keys from a file
			scriptUnknown = true
		case oneOf(s, "-u", "-U", "-i", "-T", "-w", "-W", "-t", "-q", "-r", "--servername", "--remote", "--startuptime"):
			if oneOf(s, "-u", "-U", "-i", "-T", "-W", "-t", "-q", "--servername", "--startuptime") {
				i++
			}
		case s == "-e" || s == "-E" || s == "-es" || s == "-Es" || s == "-se" || s == "-sE":
			exMode = true
		case s == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && len(s) > 2:
			// A cluster: ex -sc CMD, vim -Nesc CMD.
			if strings.ContainsAny(s, "eE") || name == "ex" && strings.IndexByte(s, 's') >= 0 {
				exMode = true
			}
			if strings.HasSuffix(s, "c") && i+1 < len(args) {
				i++
				cmds = append(cmds, args[i])
			}
		case strings.HasPrefix(s, "-") && s != "-":
		default:
			files = append(files, a)
		}
	}
	if exMode {
		switch src := inv.stdin; {
		case src != nil && src.has:
			cmds = append(cmds, splitLines(src.text)...)
		case src != nil:
			scriptUnknown = true
		}
	}
	writes := false
	for _, c := range cmds {
		if !c.exact() {
			scriptUnknown = true
			continue
		}
		for _, ec := range splitEx(c.s) {
			if w.exCommand(inv, name, ec, c) {
				writes = true
			}
		}
	}
	if writes || scriptUnknown {
		for _, f := range files {
			w.writeTarget(inv, f, name+" script")
		}
	}
}

// ed and red read editing commands on stdin.
func (w *walker) ed(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "p", argLong: []string{"prompt"}})
	src := inv.stdin
	if src == nil {
		return // interactive
	}
	writes := !src.has
	if src.has {
		for _, line := range splitLines(src.text) {
			if !line.exact() {
				writes = true
				continue
			}
			if w.exCommand(inv, name, strings.TrimSpace(line.s), line) {
				writes = true
			}
		}
	}
	if writes {
		for _, f := range p.ops {
			w.writeTarget(inv, f, name+" script")
		}
	}
}

func splitLines(f field) []field {
	if !f.exact() {
		return []field{f}
	}
	var out []field
	for _, l := range strings.Split(f.s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, field{s: l, pos: f.pos})
		}
	}
	return out
}

// splitEx splits ex commands at '|', except that :! takes the rest of the
// line.
func splitEx(s string) []string {
	var out []string
	for {
		t := strings.TrimLeft(s, " \t:")
		bang := strings.IndexByte(t, '!')
		bar := strings.IndexByte(t, '|')
		if bar < 0 || bang >= 0 && bang < bar {
			return append(out, t)
		}
		out = append(out, t[:bar])
		s = t[bar+1:]
	}
}

// exCommand checks one ex or ed command: shell escapes are judged as shell
// text, and it reports whether the command writes the edited file. A write
// to a named file (w /etc/passwd) is judged as such.
func (w *walker) exCommand(inv *invocation, name, c string, at field) bool {
	c = strings.TrimLeft(c, " \t:")
	// A range: %, $, ., numbers, marks, /pattern/.
	for len(c) > 0 && strings.IndexByte("%$.,;0123456789'<>+-", c[0]) >= 0 {
		if c[0] == '\'' && len(c) > 1 {
			c = c[1:]
		}
		c = c[1:]
	}
	c = strings.TrimSpace(c)
	for _, pre := range []string{"silent!", "silent", "sil!", "sil", "exe", "execute", "keepalt", "noautocmd"} {
		if rest, ok := strings.CutPrefix(c, pre); ok && (rest == "" || rest[0] == ' ') {
			c = strings.TrimSpace(rest)
		}
	}
	if strings.ContainsAny(c, "'\"") && strings.Contains(c, "system") {
		for _, sh := range scanInline(c, "vim").shell {
			w.payload(inv, field{s: sh, pos: at.pos}, name+" system() command", nil, true)
		}
	}
	if rest, ok := strings.CutPrefix(c, "!"); ok {
		w.payload(inv, field{s: rest, pos: at.pos}, name+" :! command", nil, true)
		return false
	}
	word := c
	arg := ""
	if i := strings.IndexAny(c, " \t"); i >= 0 {
		word, arg = c[:i], strings.TrimSpace(c[i+1:])
	}
	word = strings.TrimSuffix(word, "!")
	if oneOf(word, "r", "read", "e", "edit", "w", "write") && strings.HasPrefix(arg, "!") {
		w.payload(inv, field{s: arg[1:], pos: at.pos}, name+" :"+word+" !command", nil, true)
		return false
	}
	if !oneOf(word, "w", "W", "wq", "wq!", "x", "xit", "exi", "exit", "wa", "wall", "wqa", "wqall", "xa", "xall", "up", "update", "sav", "saveas", "wn", "wnext", "wN", "wp") {
		return false
	}
	if arg != "" && !strings.HasPrefix(arg, ">>") && !strings.HasPrefix(arg, "++") {
		w.writeTarget(inv, field{s: arg, pos: at.pos}, name+" :"+word)
		return false
	}
	return true
}
