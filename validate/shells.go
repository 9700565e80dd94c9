package validate

import (
	"strings"
)

// shell checks sh, bash, zsh, …: the -c payload, a script given as a
// process substitution or a downloaded file, or the program on stdin.
func (w *walker) shell(inv *invocation, name string) {
	args := inv.args()
	var cflag, sflag, dynOpt bool
	i := 0
loop:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			if strings.HasPrefix(a.prefix(), "-") {
				dynOpt = true
				continue
			}
			break
		}
		s := a.s
		switch {
		case s == "--" || s == "-":
			i++
			break loop
		case strings.HasPrefix(s, "--"):
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			for _, c := range s[1:] {
				switch c {
				case 'c':
					if s[0] == '-' {
						cflag = true
					}
				case 's':
					sflag = true
				case 'o', 'O':
					i++
				}
			}
		default:
			break loop
		}
	}
	ops := args[min(i, len(args)):]
	// BASH_ENV and ENV name a file the shell reads first.
	for _, v := range []string{"BASH_ENV", "ENV"} {
		if b := inv.env[v]; b != nil && len(b.alts) > 0 && b.alts[0].f.exact() {
			w.scriptOperand(inv, b.alts[0].f, name+" "+v)
		}
	}
	if !cflag && len(ops) > 1 && ops[0].mayBeOption() && !ops[0].exact() {
		// bash $OPTS 'text': the unknown word may be -c.
		dynOpt = true
		ops = ops[1:]
	}
	if inv.net {
		w.report(inv, RuleRemoteScript, name+" is connected to a network socket, so it runs commands sent over the network"+at(inv.argv[0].pos))
	}
	switch {
	case cflag:
		if len(ops) > 0 {
			w.payload(inv, ops[0], name+" -c payload", append([]field{}, ops[1:]...), false)
		}
	case dynOpt:
		for k, o := range ops {
			if k >= 4 {
				break
			}
			w.payload(inv, o, name+" payload", append([]field{}, ops[k+1:]...), true)
		}
		w.stdinProgram(inv, name)
	case len(ops) > 0 && !sflag:
		w.scriptOperand(inv, ops[0], name)
	default:
		w.stdinProgram(inv, name)
	}
}

// scriptOperand checks a script file operand: a process substitution, stdin
// or a file downloaded earlier.
func (w *walker) scriptOperand(inv *invocation, f field, name string) {
	if f.proc != nil {
		w.runProgram(inv, w.procSource(f.proc), name+" <(…)")
		return
	}
	if !f.exact() {
		if f.taint != 0 {
			w.report(inv, RuleRemoteScript, name+" runs a script named by "+f.taint.String()+at(f.pos))
		}
		return
	}
	switch f.s {
	case "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0", "-":
		w.stdinProgram(inv, name)
		return
	}
	if strings.HasPrefix(f.s, "/dev/tcp/") || strings.HasPrefix(f.s, "/dev/udp/") {
		w.report(inv, RuleRemoteScript, name+" runs a script read from the network socket "+f.s+at(f.pos))
		return
	}
	if by, ok := w.fetchedFile(f); ok {
		w.report(inv, RuleRemoteScript, name+" runs "+f.s+at(f.pos)+", downloaded by "+by)
		return
	}
	if c, ok := w.knownFile(f); ok {
		if name == "source" || name == "." {
			w.payloadHere(inv, c, name+" script "+f.s+" (written earlier)")
			return
		}
		w.payload(inv, c, name+" script "+f.s+" (written earlier)", []field{f}, false)
	}
}

func (w *walker) stdinProgram(inv *invocation, name string) {
	w.runProgram(inv, inv.stdin, name+" reading stdin")
}

// runProgram checks program text from a source.
func (w *walker) runProgram(inv *invocation, src *source, label string) {
	if src == nil {
		return
	}
	if src.has {
		w.payload(inv, src.text, label+" ("+src.desc+")", nil, false)
		return
	}
	if src.taint != 0 {
		w.report(inv, RuleRemoteScript, label+" runs "+src.taint.String()+" from "+src.desc)
	}
}

// payload checks shell text that a command will run.
func (w *walker) payload(inv *invocation, f field, label string, positional []field, speculative bool) {
	if f.taint != 0 {
		w.report(inv, RuleRemoteScript, "the "+label+at(f.pos)+" runs "+f.taint.String())
	}
	if w.depth+1 > maxDepth {
		w.complex("shell payloads are nested more than " + itoa(maxDepth) + " deep")
		return
	}
	text := renderPayload(f)
	if strings.TrimSpace(text) == "" || !w.charge(len(text)) {
		return
	}
	file, err := parse(text)
	if err != nil {
		if f.exact() && !speculative {
			w.report(inv, RuleParseError, "the "+label+at(f.pos)+" does not parse: "+err.Error())
		}
		return
	}
	if positional == nil {
		positional = []field{}
	}
	c := w.child(label, f.pos, positional, inv.env)
	c.stmts(file.Stmts, nil)
	c.finish()
}

// payloadHere checks shell text that runs in the current shell (eval,
// source of a known file): variables it sets and directories it enters
// stay in effect for the commands that follow.
func (w *walker) payloadHere(inv *invocation, f field, label string) {
	if f.taint != 0 {
		w.report(inv, RuleRemoteScript, "the "+label+at(f.pos)+" runs "+f.taint.String())
	}
	if w.depth+1 > maxDepth {
		w.complex("shell payloads are nested more than " + itoa(maxDepth) + " deep")
		return
	}
	text := renderPayload(f)
	if strings.TrimSpace(text) == "" || !w.charge(len(text)) {
		return
	}
	file, err := parse(text)
	if err != nil {
		if f.exact() {
			w.report(inv, RuleParseError, "the "+label+at(f.pos)+" does not parse: "+err.Error())
		}
		return
	}
	where, depth := w.where, w.depth
	w.where = " in the " + label + at(f.pos) + w.where
	w.depth++
	w.stmts(file.Stmts, inv.stdin)
	w.where, w.depth = where, depth
}

// interp checks interpreters given inline code: python -c, perl -e, node -e,
// awk programs, … for the shell commands and deletions they contain.
func (w *walker) interp(inv *invocation, name string) {
	args := inv.args()
	var code []field
	script := -1
	readsStdin, inPlace := false, false
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
	i := 0
loop:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			if a.mayBeOption() {
				continue
			}
			script = i
			break
		}
		s := a.s
		if s == "--" {
			if i+1 < len(args) {
				script = i + 1
			}
			break
		}
		if s == "-" {
			readsStdin = true
			break
		}
		if len(s) < 2 || s[0] != '-' {
			script = i
			break
		}
		switch lang {
		case "python":
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'c':
					code = append(code, rest(s, j, args, &i))
					break loop
				case 'm':
					return
				case 'W', 'X', 'Q':
					if j+1 == len(s) {
						i++
					}
					j = len(s)
				}
			}
		case "perl", "ruby", "lua":
			for j := 1; j < len(s); j++ {
				c := s[j]
				if c == 'i' && lang != "lua" {
					inPlace = true // -i[EXT]: the rest is a backup suffix
					break
				}
				if c == 'e' || c == 'E' && lang == "perl" {
					code = append(code, rest(s, j, args, &i))
					break
				}
				if strings.IndexByte("IMmrCxlW", c) >= 0 && lang != "perl" || strings.IndexByte("IMmx", c) >= 0 {
					if j+1 == len(s) && c != 'x' && !(lang == "perl" && c == 'l') {
						i++
					}
					break
				}
			}
		case "node":
			switch {
			case s == "-e" || s == "--eval" || s == "-p" || s == "--print":
				if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
			case strings.HasPrefix(s, "--eval=") || strings.HasPrefix(s, "--print="):
				code = append(code, field{s: s[strings.IndexByte(s, '=')+1:], pos: a.pos})
			case s == "-r" || s == "--require" || s == "--import" || s == "--loader":
				i++
			case s[1] != '-' && (strings.HasSuffix(s, "e") || strings.HasSuffix(s, "p")) && i+1 < len(args):
				// -pe 'code'
				i++
				code = append(code, args[i])
			}
		case "php":
			switch s {
			case "-r", "-B", "-R", "-E":
				if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
			case "-f":
				return
			case "-d", "-c", "-z":
				i++
			}
		case "r":
			switch {
			case s == "-e":
				if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
			case s == "-f" && i+1 < len(args):
				i++
				script = i
				break loop
			case strings.HasPrefix(s, "--file="):
				f := field{s: s[len("--file="):], pos: a.pos}
				if c, ok := w.knownFile(f); ok {
					code = append(code, c)
				}
			}
		case "tcl":
			switch {
			case s == "-c" && name == "expect":
				if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
			case s == "-f" && name == "expect" && i+1 < len(args):
				i++
				script = i
				break loop
			case s == "-encoding" || s == "-D" && name == "expect":
				i++
			}
		case "awk":
			switch {
			case s == "-f" || strings.HasPrefix(s, "--file"):
				return
			case s == "-e" || s == "--source":
				if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
			case s == "-v" || s == "-F" || s == "--assign" || s == "--field-separator":
				i++
			case s == "-i" || s == "--include":
				if i+1 < len(args) && args[i+1].exact() && strings.TrimSuffix(args[i+1].s, ".awk") == "inplace" {
					inPlace = true
				}
				i++
			}
		}
	}
	if lang == "awk" && len(code) == 0 && script >= 0 {
		code = append(code, args[script])
		script++
		if script >= len(args) {
			script = -1
		}
	}
	if inPlace && len(code) > 0 && script >= 0 {
		// perl -i, ruby -i, gawk -i inplace: the file operands are rewritten.
		for _, f := range args[script:] {
			w.writeTarget(inv, f, name+" -i")
		}
	}
	label := name + " code"
	for _, c := range code {
		w.inlineCode(inv, lang, c, label)
	}
	if len(code) > 0 {
		return
	}
	if script >= 0 && script < len(args) {
		f := args[script]
		if f.proc != nil {
			w.interpSource(inv, lang, w.procSource(f.proc), name+" <(…)")
			return
		}
		if by, ok := w.fetchedFile(f); ok {
			w.report(inv, RuleRemoteScript, name+" runs "+f.s+at(f.pos)+", downloaded by "+by)
		}
		if c, ok := w.knownFile(f); ok {
			w.inlineCode(inv, lang, c, name+" script "+f.s)
			return
		}
		if !f.exact() || !oneOf(f.s, "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0") {
			return
		}
		readsStdin = true
	}
	if script < 0 || readsStdin {
		w.interpSource(inv, lang, inv.stdin, name+" reading stdin")
	}
}

// rest returns the argument of an option letter at s[j]: the rest of the
// cluster or the next argument.
func rest(s string, j int, args []field, i *int) field {
	if j+1 < len(s) {
		return field{s: s[j+1:], pos: args[*i].pos}
	}
	if *i+1 < len(args) {
		*i++
		return args[*i]
	}
	return field{}
}

func (w *walker) interpSource(inv *invocation, lang string, src *source, label string) {
	if src == nil {
		return
	}
	if src.has {
		w.inlineCode(inv, lang, src.text, label+" ("+src.desc+")")
		return
	}
	if src.taint != 0 {
		w.report(inv, RuleRemoteScript, label+" runs "+src.taint.String()+" from "+src.desc)
	}
}

func (w *walker) inlineCode(inv *invocation, lang string, f field, label string) {
	if f.taint != 0 {
		w.report(inv, RuleRemoteScript, "the "+label+at(f.pos)+" runs "+f.taint.String())
	}
	found := scanInline(renderPayload(f), lang)
	if found.bomb {
		w.report(inv, RuleForkBomb, "the "+label+at(f.pos)+" forks in an endless loop, so processes multiply until the machine stalls")
	}
	for _, pid := range found.kills {
		if pid == "1" {
			w.report(inv, RulePowerState, "the "+label+at(f.pos)+" signals pid 1, init, which halts the machine")
		} else {
			w.report(inv, RulePowerState, "the "+label+at(f.pos)+" signals pid -1, every process")
		}
	}
	for _, h := range found.hidden {
		w.report(inv, RuleHiddenCode, "the "+label+at(f.pos)+": "+h)
	}
	for _, s := range found.shell {
		w.payload(inv, field{s: s, pos: f.pos}, "shell command in the "+label, nil, true)
	}
	for _, argv := range found.argv {
		fields := make([]field, len(argv))
		for i, a := range argv {
			fields[i] = field{s: a, pos: f.pos}
		}
		sub := inv.sub(fields, label)
		sub.stdin = nil
		w.invoke(sub)
	}
	for _, d := range found.deletes {
		w.deleteTarget(inv, "the "+label, field{s: d, pos: f.pos}, true, false)
	}
	for _, d := range found.removes {
		w.deleteTarget(inv, "the "+label, field{s: d, pos: f.pos}, false, false)
	}
	for _, d := range found.writes {
		w.writeTarget(inv, field{s: d, pos: f.pos}, "the "+label)
	}
	for _, d := range found.moves {
		w.moveSource(inv, "the "+label, field{s: d, pos: f.pos})
	}
}

func (w *walker) eval(inv *invocation, name string) {
	args := inv.args()
	if len(args) > 0 && args[0].exact() && args[0].s == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	w.payloadHere(inv, concatFields(args, " "), "eval payload")
}

// positional returns the current positional parameters for a payload that
// shares them (eval, source).
func (w *walker) positional() []field {
	if !w.hasArgs {
		return nil
	}
	out := []field{{}}
	if w.arg0 != nil {
		out[0] = *w.arg0
	}
	return append(out, w.args...)
}

func (w *walker) source(inv *invocation, name string) {
	args := inv.args()
	if len(args) > 0 && args[0].exact() && args[0].s == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	w.scriptOperand(inv, args[0], name)
}

func (w *walker) trap(inv *invocation, name string) {
	args := inv.args()
	if len(args) > 0 && args[0].exact() && args[0].s == "--" {
		args = args[1:]
	}
	if len(args) < 2 || args[0].exact() && (args[0].s == "-" || args[0].s == "" || strings.HasPrefix(args[0].s, "-")) {
		return
	}
	w.payload(inv, args[0], "trap action", w.positional(), false)
}

// at and batch run the commands on their standard input later.
func (w *walker) at(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "qfdtM"})
	if p.has("ldrc") {
		return
	}
	if f, ok := p.val('f', ""); ok {
		w.scriptOperand(inv, f, name)
		return
	}
	w.stdinProgram(inv, name)
}

// crontab installs a table of commands from a file or stdin.
func (w *walker) crontab(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "uTs"})
	if p.has("lrei") {
		return
	}
	var src *source
	switch {
	case len(p.ops) == 0 || p.ops[0].exact() && p.ops[0].s == "-":
		src = inv.stdin
	case p.ops[0].proc != nil:
		src = w.procSource(p.ops[0].proc)
	}
	if src == nil {
		return
	}
	if !src.has {
		if src.taint != 0 {
			w.report(inv, RuleRemoteScript, "crontab installs "+src.taint.String()+" from "+src.desc)
		}
		return
	}
	text := renderPayload(src.text)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || isAssignment(line) {
			continue
		}
		fs := strings.Fields(line)
		skip := 5
		if strings.HasPrefix(fs[0], "@") {
			skip = 1
		}
		if len(fs) <= skip {
			continue
		}
		cmd := strings.Join(fs[skip:], " ")
		w.payload(inv, field{s: cmd, pos: src.text.pos}, "crontab entry", nil, true)
	}
}

// State-changing builtins.

// alias values run as commands when aliases are expanded (shopt -s
// expand_aliases).
// The value is checked where it is defined, and again with the arguments
// of each later command that uses the alias: aliases are expanded in sh and
// in bash with shopt -s expand_aliases, so the checker always expands them.
func (w *walker) alias(inv *invocation, name string) {
	for _, a := range inv.args() {
		if !a.exact() {
			continue
		}
		if n, v, ok := strings.Cut(a.s, "="); ok {
			w.payload(inv, field{s: v, pos: a.pos}, "alias", nil, true)
			if w.aliases == nil {
				w.aliases = make(map[string]rebind)
			}
			if len(w.aliases) < 64 {
				w.aliases[n] = rebind{v, w.sure()}
			}
		}
	}
}

// expandAlias checks a command whose name is an alias as the text the
// alias stands for, followed by the arguments.
// An alias defined in a branch, loop, subshell or pipeline may not hold:
// the command is then judged both ways.
func (w *walker) expandAlias(inv *invocation, name string, a rebind) {
	delete(w.aliases, name) // an alias is not expanded inside itself
	parts := []field{{s: a.to, pos: inv.argv[0].pos}}
	for _, arg := range inv.args() {
		parts = append(parts, quoteField(arg))
	}
	w.payloadHere(inv, concatFields(parts, " "), "alias "+name)
	if !a.sure {
		w.named(inv, name)
	}
	if w.aliases == nil {
		w.aliases = make(map[string]rebind)
	}
	w.aliases[name] = a
}
