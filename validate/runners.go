package validate

import (
	"path"
	"strings"
)

// Programs that run a command, write a file or delete through an option,
// an operand or a configuration key, beyond the ones with handlers of their
// own elsewhere (find -exec, tar --to-command, ssh -o ProxyCommand, vim -c,
// git -c core.pager, …). Each is judged as what it runs or writes; what the
// checker cannot see (a directory of scripts, a package built from a local
// directory, Go code on stdin) is refused with RuleHiddenCode.

// isStdinPath reports whether a path names the standard input.
func isStdinPath(s string) bool {
	return oneOf(s, "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
}

// strace -o '|cmd' and -o '!cmd' pipe the trace to a shell command; the
// traced command is judged as strace's wrapper table says.
func (w *walker) strace(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		var v field
		switch {
		case a.s == "--":
			i = len(args)
			continue
		case (a.s == "-o" || a.s == "--output") && i+1 < len(args):
			i++
			v = args[i]
		case strings.HasPrefix(a.s, "--output="):
			v = field{s: a.s[len("--output="):], pos: a.pos}
		case strings.HasPrefix(a.s, "-o") && len(a.s) > 2:
			v = field{s: a.s[2:], pos: a.pos}
		default:
			continue
		}
		if !v.exact() {
			if p := v.prefix(); p == "" || p[0] == '|' || p[0] == '!' {
				w.report(inv, RuleHiddenCode, name+" -o "+v.show()+at(v.pos)+" may pipe the trace to a command (|cmd), and the value is only known at run time")
			}
			continue
		}
		if strings.HasPrefix(v.s, "|") || strings.HasPrefix(v.s, "!") {
			w.payload(inv, field{s: v.s[1:], pos: v.pos}, name+" -o pipe command", nil, false)
		} else {
			w.writeTarget(inv, v, name+" -o")
		}
	}
	w.wrapper(inv, name)
}

// zipRunner checks zip's -TT/--unzip-command, which runs a shell command to
// test the archive, before the archiver table.
func (w *walker) zipRunner(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		switch {
		case (a.s == "-TT" || a.s == "--unzip-command") && i+1 < len(args):
			i++
			w.payload(inv, args[i], "zip "+a.s+" command", nil, false)
		case strings.HasPrefix(a.s, "--unzip-command="):
			w.payload(inv, field{s: a.s[len("--unzip-command="):], pos: a.pos}, "zip --unzip-command", nil, false)
		case strings.HasPrefix(a.s, "-TT") && len(a.s) > 3:
			w.payload(inv, field{s: strings.TrimPrefix(a.s[3:], "="), pos: a.pos}, "zip -TT command", nil, false)
		}
	}
	w.archiver(inv, name)
}

// compiler checks gcc, cc, clang and cpp: -wrapper runs a program (with
// its comma-separated arguments) around each compiler pass, -o writes a
// file, and -fplugin and -specs load code the checker cannot see.
func (w *walker) compiler(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		switch {
		case a.s == "-wrapper" && i+1 < len(args):
			i++
			v := args[i]
			if !v.exact() {
				w.report(inv, RuleHiddenCode, name+" -wrapper "+v.show()+at(v.pos)+" runs a program known only at run time around each compiler pass")
				continue
			}
			var argv []field
			for _, s := range strings.Split(v.s, ",") {
				argv = append(argv, field{s: s, pos: v.pos})
			}
			if len(argv) > 0 && argv[0].s != "" {
				sub := inv.sub(argv, name+" -wrapper")
				sub.stdin = nil
				w.invoke(sub)
			}
		case a.s == "-o" && i+1 < len(args):
			i++
			w.writeTarget(inv, args[i], name+" -o")
		case strings.HasPrefix(a.s, "-o") && len(a.s) > 2:
			w.writeTarget(inv, field{s: a.s[2:], pos: a.pos}, name+" -o")
		case strings.HasPrefix(a.s, "-fplugin=") || strings.HasPrefix(a.s, "-specs="), a.s == "-specs" && i+1 < len(args):
			w.report(inv, RuleHiddenCode, name+" "+a.s+at(a.pos)+" loads a plugin or spec file, code or commands the checker cannot see")
		}
	}
}

// npx -c/--call and npm exec -c run a shell command.
func (w *walker) npx(inv *invocation, name string) {
	args := inv.args()
	if name == "npm" {
		if len(args) == 0 || !args[0].exact() || !oneOf(args[0].s, "exec", "x") {
			return
		}
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		switch {
		case a.s == "--":
			return
		case (a.s == "-c" || a.s == "--call") && i+1 < len(args):
			i++
			w.payload(inv, args[i], name+" "+a.s+" command", nil, false)
		case strings.HasPrefix(a.s, "--call="):
			w.payload(inv, field{s: a.s[len("--call="):], pos: a.pos}, name+" --call command", nil, false)
		}
	}
}

// trash moves files to the trash, which deletes them from where they were:
// gio trash/remove, trash-put, gvfs-trash.
func (w *walker) trash(inv *invocation, name string) {
	args := inv.args()
	label := name
	if name == "gio" {
		if len(args) == 0 || !args[0].exact() || !oneOf(args[0].s, "trash", "remove", "rm") {
			return
		}
		label = "gio " + args[0].s
		args = args[1:]
	}
	p := parseArgs(args, &optSyntax{})
	for _, f := range p.ops {
		w.deleteTarget(inv, label, f, true, false)
	}
}

// runParts runs every program in a directory, which the checker cannot
// see; --test and --list only print their names.
func (w *walker) runParts(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "a", argLong: []string{"arg", "umask", "regex", "lsbsysinit"}})
	if p.has("h", "test", "list", "help", "version") || len(p.ops) == 0 {
		return
	}
	w.report(inv, RuleHiddenCode, name+" "+p.ops[0].show()+at(p.ops[0].pos)+" runs every program in the directory, code the checker cannot see")
}

// pip install of a local directory or source archive runs its build
// scripts (setup.py), code the checker cannot see; installing a named
// package or a wheel does not run code from the line.
func (w *walker) pip(inv *invocation, name string) {
	args := inv.args()
	if len(args) == 0 || !args[0].exact() || !oneOf(args[0].s, "install", "wheel", "download") {
		return
	}
	p := parseArgs(args[1:], &optSyntax{argShort: "rcetibf", argLong: []string{"requirement", "constraint", "editable", "target", "index-url", "extra-index-url", "find-links", "prefix", "root", "src", "upgrade-strategy", "python-version", "platform", "implementation", "abi", "progress-bar", "log", "proxy", "retries", "timeout", "cache-dir", "config-settings", "global-option", "no-binary", "only-binary", "report"}})
	if e, ok := p.val('e', "editable"); ok {
		w.report(inv, RuleHiddenCode, name+" install -e "+e.show()+at(e.pos)+" builds the project in that directory, running its build scripts, code the checker cannot see")
		return
	}
	for _, f := range p.ops {
		if !f.exact() {
			continue
		}
		s := f.s
		local := s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "file:")
		if local && !strings.HasSuffix(s, ".whl") {
			w.report(inv, RuleHiddenCode, name+" install "+f.show()+at(f.pos)+" builds a local project or source archive, running its build scripts (setup.py), code the checker cannot see")
			return
		}
	}
}

// goTool refuses go run of a program read from stdin: Go code is not
// judged.
func (w *walker) goTool(inv *invocation, name string) {
	args := inv.args()
	if len(args) == 0 || !args[0].exact() || args[0].s != "run" {
		return
	}
	for _, f := range args[1:] {
		if f.exact() && isStdinPath(f.s) {
			w.report(inv, RuleHiddenCode, "go run "+f.s+at(f.pos)+" compiles and runs Go code read from stdin, which the checker does not judge")
			return
		}
	}
}

// pager checks less and more: a +CMD initial command that starts with !
// runs a shell command.
func (w *walker) pager(inv *invocation, name string) {
	for _, a := range inv.args() {
		if !a.exact() {
			continue
		}
		if c, ok := strings.CutPrefix(a.s, "+"); ok {
			c = strings.TrimPrefix(c, "+")
			if strings.HasPrefix(c, "!") {
				w.payload(inv, field{s: c[1:], pos: a.pos}, name+" "+a.s+" command", nil, false)
			}
		}
	}
	w.reader(inv, name)
}

// gitSub checks what git's subcommands run or delete: clean -f deletes the
// untracked files of the working tree, difftool -x and rebase -x run a
// command, bisect run and submodule foreach run a program, filter-branch
// runs shell filters, and an ext:: URL runs a program as the transport.
func (w *walker) gitSub(inv *invocation, args []field, dir string) {
	sub := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			return
		}
		if oneOf(a.s, "-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path", "--super-prefix") && i+1 < len(args) {
			i++
			continue
		}
		if !strings.HasPrefix(a.s, "-") {
			sub = i
			break
		}
	}
	for _, a := range args {
		if a.exact() && strings.HasPrefix(a.s, "ext::") {
			w.gitExt(inv, a)
		}
	}
	if sub < 0 {
		return
	}
	cmd, rest := args[sub].s, args[sub+1:]
	switch cmd {
	case "clean":
		w.gitClean(inv, rest, dir)
	case "difftool", "mergetool":
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			switch {
			case !a.exact():
			case (a.s == "-x" || a.s == "--extcmd") && i+1 < len(rest):
				i++
				w.payload(inv, rest[i], "git "+cmd+" "+a.s+" command", nil, false)
			case strings.HasPrefix(a.s, "--extcmd="):
				w.payload(inv, field{s: a.s[len("--extcmd="):], pos: a.pos}, "git "+cmd+" --extcmd command", nil, false)
			}
		}
	case "rebase":
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			switch {
			case !a.exact():
			case (a.s == "-x" || a.s == "--exec") && i+1 < len(rest):
				i++
				w.payload(inv, rest[i], "git rebase "+a.s+" command", nil, false)
			case strings.HasPrefix(a.s, "--exec="):
				w.payload(inv, field{s: a.s[len("--exec="):], pos: a.pos}, "git rebase --exec command", nil, false)
			}
		}
	case "bisect":
		if len(rest) > 1 && rest[0].exact() && rest[0].s == "run" {
			s := inv.sub(rest[1:], "git bisect run")
			s.stdin = nil
			w.invoke(s)
		}
	case "submodule":
		for i, a := range rest {
			if a.exact() && a.s == "foreach" && i+1 < len(rest) {
				w.payload(inv, joinAll(rest[i+1:]), "git submodule foreach command", nil, false)
				break
			}
		}
	case "filter-branch":
		for i := 0; i+1 < len(rest); i++ {
			a := rest[i]
			if a.exact() && oneOf(a.s, "--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter", "--commit-filter", "--tag-name-filter") {
				i++
				w.payload(inv, rest[i], "git filter-branch "+a.s, nil, false)
			}
		}
	}
}

// gitExt judges the program of an ext:: URL: words separated by spaces,
// with "% " a literal space and "%%" a percent sign.
func (w *walker) gitExt(inv *invocation, a field) {
	spec := a.s[len("ext::"):]
	var argv []field
	var cur strings.Builder
	for i := 0; i < len(spec); i++ {
		c := spec[i]
		switch {
		case c == '%' && i+1 < len(spec):
			i++
			switch spec[i] {
			case ' ':
				cur.WriteByte(' ')
			case '%':
				cur.WriteByte('%')
			case 's', 'S':
				cur.WriteString("git-upload-pack")
			case 'G', 'V':
				i++ // %G<repo>, %V<vhost> end the word's meaning; keep the rest
			}
		case c == ' ':
			if cur.Len() > 0 {
				argv = append(argv, field{s: cur.String(), pos: a.pos})
				cur.Reset()
			}
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		argv = append(argv, field{s: cur.String(), pos: a.pos})
	}
	if len(argv) == 0 {
		return
	}
	s := inv.sub(argv, "git ext:: transport")
	s.stdin = nil
	w.invoke(s)
}

// gitClean judges git clean -f as deleting the untracked files of the
// working tree: every entry of the directory, recursively with -d, -x or
// -X, or the paths given.
func (w *walker) gitClean(inv *invocation, args []field, dir string) {
	p := parseArgs(args, &optSyntax{argShort: "e", argLong: []string{"exclude"}})
	if !p.has("f", "force") || p.has("n", "dry-run") {
		return
	}
	rec := p.has("dxX")
	if len(p.ops) > 0 {
		for _, f := range p.ops {
			if dir != "" && f.exact() && !strings.HasPrefix(f.s, "/") {
				f = field{s: path.Join(dir, f.s), pos: f.pos}
			}
			w.deleteTarget(inv, "git clean", f, rec, false)
		}
		return
	}
	if dir == "" {
		dir = w.cwd
	}
	if dir == "" {
		return
	}
	all := field{s: path.Join(dir, "*"), toks: append(litToks(strings.TrimSuffix(dir, "/")+"/"), ptok{kind: tStar}), pos: inv.argv[0].pos}
	w.deleteTarget(inv, "git clean", all, true, false)
}

// gitConfigEnv judges --config-env=KEY=VAR: the value of KEY is the
// environment variable VAR, which the line may set.
func (w *walker) gitConfigEnv(inv *invocation, spec field) {
	key, env, ok := strings.Cut(spec.s, "=")
	if !ok || !gitRunsKey(strings.ToLower(key)) {
		return
	}
	if b := inv.env[env]; b != nil && len(b.alts) > 0 {
		w.gitValue(inv, key, b.alts[0].f)
		return
	}
	if v, ok := w.lookupScalar(env); ok {
		w.gitValue(inv, key, v)
		return
	}
	w.report(inv, RuleHiddenCode, "git --config-env="+spec.s+at(spec.pos)+" sets "+key+", a command git runs, from the environment variable "+env+", which the checker cannot see")
}

// gitRunsKey reports whether git runs the value of a configuration key as
// a command (or loads code from it).
func gitRunsKey(key string) bool {
	for _, k := range gitShellKeys {
		if key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) {
			return true
		}
	}
	for _, s := range []string{".command", ".textconv", ".driver", ".helper", ".program", ".uploadpack", ".receivepack", ".cmd", ".proxy"} {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	return key == "core.gitproxy"
}
