package validate

import "strings"

// The interpreters' inline code (python -c, perl -e, node -e, awk
// programs, …) is not shell, and no checker can decide what a program does.
// scanInline looks for the plain cases: a string literal handed to a
// function that runs a shell command, an argument list handed to a function
// that runs a program, and a literal path handed to a recursive delete.

type inlineFind struct {
	shell   []string
	argv    [][]string
	deletes []string // recursive deletes
	removes []string // single files deleted
	writes  []string // files written
	moves   []string // files or directories renamed away
	bomb    bool     // a process forks in an endless loop
	kills   []string // pids signalled: 1 (init) or -1 (every process)
	hidden  []string // code handed to a program the checker cannot see
}

type itok struct {
	kind byte // 'i' identifier, 's' string, 'b' backtick command, 'p' punctuation
	text string
}

// execFuncs run their string argument through a shell (or, given a list,
// run the program it names).
var execFuncs = map[string]bool{
	"system": true, "popen": true, "exec": true, "execSync": true, "check_output": true,
	"check_call": true, "call": true, "run": true, "Popen": true, "getoutput": true,
	"getstatusoutput": true, "shell_exec": true, "passthru": true, "proc_open": true,
	"execute": true, "capture2": true, "capture2e": true, "capture3": true, "popen2": true,
	"popen3": true, "spawn": true, "spawnSync": true, "execFile": true, "execFileSync": true,
	"execvp": true, "execv": true, "execve": true, "execl": true, "execlp": true, "qx": true,
	"pipeline": true, "run_command": true, "cmd": true, "system2": true, "shell": true,
}

// argvFuncs take a program name and then its arguments.
var argvFuncs = map[string]bool{
	"spawn": true, "spawnSync": true, "execFile": true, "execFileSync": true,
	"execvp": true, "execv": true, "execve": true, "execl": true, "execlp": true, "system2": true,
}

// removeFuncs delete one file.
var removeFuncs = map[string]bool{
	"remove": true, "unlink": true, "unlinkSync": true, "Remove": true, "delete": true, "rmdir": true,
}

// writeFuncs write the file they are given.
var writeFuncs = map[string]bool{
	"writeFileSync": true, "appendFileSync": true, "writeFile": true, "appendFile": true,
	"file_put_contents": true, "WriteFile": true, "truncate": true, "File.write": true, "IO.write": true,
	"File.binwrite": true, "IO.binwrite": true, "writeLines": true, "sink": true, "outputFileSync": true,
	"file.create": true,
}

// moveFuncs rename their first argument to their second; copyFuncs write
// their second.
var moveFuncs = map[string]bool{
	"rename": true, "renameSync": true, "renames": true, "move": true, "mv": true, "moveSync": true,
	"os.replace": true, "file.rename": true,
}

var copyFuncs = map[string]bool{
	"copy": true, "copyfile": true, "copy2": true, "copyFileSync": true, "copyFile": true, "cp": true,
	"copy_file": true, "cpSync": true, "copySync": true, "copytree": true, "file.copy": true,
}

// deleteFuncs delete a directory tree.
var deleteFuncs = map[string]bool{
	"rmtree": true, "rm_rf": true, "rm_r": true, "remove_dir": true, "rmSync": true,
	"rmdirSync": true, "removedirs": true, "rimraf": true, "remove_entry_secure": true,
	"remove_entry": true, "remove_dir_all": true, "RemoveAll": true, "rm": true, "remove_tree": true,
	"rmtree_p": true, "emptyDirSync": true, "removeSync": true, "remove_dir_all_p": true,
}

func scanInline(code, lang string) inlineFind {
	if lang == "tcl" {
		return scanTcl(code, 0)
	}
	var out inlineFind
	toks := propagate(tokenizeInline(code, lang), lang)
	out.bomb = forkLoop(toks)
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		switch t.kind {
		case 'b':
			out.shell = append(out.shell, t.text)
			continue
		case 's':
			// awk: "cmd" | getline, and print | "cmd".
			if lang == "awk" {
				if k+2 < len(toks) && toks[k+1].text == "|" && toks[k+2].text == "getline" ||
					k > 0 && toks[k-1].text == "|" {
					out.shell = append(out.shell, t.text)
					if k > 0 && toks[k-1].text == "|" && readsCode(t.text) {
						out.hidden = append(out.hidden, "awk prints into "+strings.TrimSpace(t.text)+", which runs what it reads as code")
					}
				}
				if k > 0 && toks[k-1].text == ">" {
					// print > "file", print >> "file"
					out.writes = append(out.writes, t.text)
				}
			}
			continue
		case 'i':
		default:
			continue
		}
		name := t.text[strings.LastIndexAny(t.text, ".:")+1:]
		if isPathCtor(name) && k+5 < len(toks) && toks[k+1].text == "(" && toks[k+2].kind == 's' && toks[k+3].text == ")" && toks[k+4].text == "." {
			// pathlib: Path('/etc/passwd').unlink(), .write_text(…), .rename(…).
			path, m := toks[k+2].text, toks[k+5].text
			switch m {
			case "unlink", "rmdir":
				out.removes = append(out.removes, path)
			case "write_text", "write_bytes", "touch":
				out.writes = append(out.writes, path)
			case "rename", "replace":
				out.moves = append(out.moves, path)
			case "open":
				if k+7 < len(toks) && toks[k+6].text == "(" && toks[k+7].kind == 's' && strings.ContainsAny(toks[k+7].text, "wa+") {
					out.writes = append(out.writes, path)
				}
			}
			k += 5
			continue
		}
		if name == "kill" || name == "killpg" || name == "posix_kill" {
			out.kills = append(out.kills, killedPids(toks[k+1:], lang)...)
			continue
		}
		if lang == "perl" && name == "open" {
			perlOpen(toks[k+1:], &out)
			continue
		}
		if lang == "r" && name == "unlink" {
			rUnlink(toks[k+1:], &out)
			continue
		}
		isExec := execFuncs[name] && !(lang == "python" && (name == "exec" || name == "eval"))
		isDel := deleteFuncs[name]
		isRemove := removeFuncs[name]
		isWrite := writeFuncs[name] || writeFuncs[t.text] || name == "open" || name == "fopen"
		isMove := moveFuncs[name] && name != "replace" || moveFuncs[t.text]
		isCopy := copyFuncs[name] || copyFuncs[t.text]
		if lang == "r" && (name == "writeLines" || name == "cat" || name == "write" || name == "sink" || name == "saveRDS") {
			rFileArg(toks[k+1:], name, &out)
			continue
		}
		if lang == "python" && (name == "exec" || name == "eval") {
			// Python code run by Python: scan it the same way.
			j := k + 1
			if j < len(toks) && toks[j].text == "(" {
				j++
			}
			if j < len(toks) && toks[j].kind == 's' {
				inner := scanInline(toks[j].text, lang)
				out.shell = append(out.shell, inner.shell...)
				out.argv = append(out.argv, inner.argv...)
				out.deletes = append(out.deletes, inner.deletes...)
			}
			continue
		}
		if !isExec && !isDel && !isRemove && !isWrite && !isMove && !isCopy {
			continue
		}
		j := k + 1
		if j < len(toks) && toks[j].text == "(" {
			j++
		}
		var strs []string
		list := false
		if j < len(toks) && toks[j].text == "[" {
			list = true
			j++
		}
		for j < len(toks) {
			if toks[j].kind == 'i' && isPathCtor(toks[j].text[strings.LastIndexAny(toks[j].text, ".:")+1:]) && j+2 < len(toks) && toks[j+1].text == "(" && toks[j+2].kind == 's' {
				// shutil.rmtree(Path('/')).
				j += 2
				strs = append(strs, toks[j].text)
				j++
				if j < len(toks) && toks[j].text == ")" {
					j++
				}
			} else if toks[j].kind == 's' {
				strs = append(strs, toks[j].text)
				j++
			} else {
				break
			}
			if j < len(toks) && toks[j].text == "," {
				j++
				if !list && argvFuncs[name] && j < len(toks) && toks[j].text == "[" {
					list = true
					j++
				}
				if !list && argvFuncs[name] && lang == "r" && j+1 < len(toks) && toks[j].text == "c" && toks[j+1].text == "(" {
					list = true // system2("rm", c("-rf", "/"))
					j += 2
				}
				continue
			}
			break
		}
		if len(strs) == 0 {
			continue
		}
		switch {
		case isMove:
			out.moves = append(out.moves, strs[0])
			if len(strs) > 1 {
				out.writes = append(out.writes, strs[1])
			}
		case isCopy:
			if len(strs) > 1 {
				out.writes = append(out.writes, strs[1])
			}
		case isDel:
			out.deletes = append(out.deletes, strs[0])
		case isRemove:
			out.removes = append(out.removes, strs...)
		case isWrite:
			if name != "open" && name != "fopen" || len(strs) > 1 && strings.ContainsAny(strs[1], "wa+") || len(strs) == 1 && openFlagsWrite(toks[j:]) {
				out.writes = append(out.writes, strs[0])
			}
		case !isExec:
		case list || len(strs) > 1 || argvFuncs[name]:
			out.argv = append(out.argv, strs)
		default:
			out.shell = append(out.shell, strs[0])
		}
	}
	return out
}

func tokenizeInline(code, lang string) []itok {
	var toks []itok
	for i := 0; i < len(code); {
		c := code[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' && (lang == "python" || lang == "perl" || lang == "ruby" || lang == "awk" || lang == "r"):
			for i < len(code) && code[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"':
			s, n := readQuoted(code[i:], lang)
			toks = append(toks, itok{kind: 's', text: s})
			i += n
		case c == '`':
			s, n := readQuoted(code[i:], lang)
			kind := byte('b')
			if lang == "node" || lang == "python" || lang == "lua" || lang == "awk" {
				kind = 's'
			}
			toks = append(toks, itok{kind: kind, text: s})
			i += n
		case isIdentByte(c):
			j := i
			for j < len(code) && (isIdentByte(code[j]) || code[j] == '.' || code[j] == ':' && j+1 < len(code) && code[j+1] == ':') {
				if code[j] == ':' {
					j++
				}
				j++
			}
			word := code[i:j]
			// Perl qx{…} and Ruby %x(…) run a shell command.
			if (word == "qx" && lang == "perl") && j < len(code) && strings.IndexByte("{([</|!'\"", code[j]) >= 0 {
				s, n := readDelimited(code[j:])
				toks = append(toks, itok{kind: 'b', text: s})
				i = j + n
				continue
			}
			// Python string prefixes.
			if lang == "python" && j < len(code) && (code[j] == '\'' || code[j] == '"') && len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbfu") == "" {
				i = j
				continue
			}
			toks = append(toks, itok{kind: 'i', text: word})
			i = j
		case c == '%' && lang == "ruby" && i+2 < len(code) && code[i+1] == 'x':
			s, n := readDelimited(code[i+2:])
			toks = append(toks, itok{kind: 'b', text: s})
			i += 2 + n
		default:
			toks = append(toks, itok{kind: 'p', text: string(c)})
			i++
		}
	}
	return toks
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// readQuoted reads a string literal starting at s[0] and returns its value
// and length. Triple quotes (Python) are honoured; escapes are decoded in
// double-quoted strings and kept in single-quoted ones except \' and \\.
func readQuoted(s, lang string) (string, int) {
	q := s[0]
	if lang == "python" && len(s) >= 3 && s[1] == q && s[2] == q {
		end := strings.Index(s[3:], s[:3])
		if end < 0 {
			return s[3:], len(s)
		}
		return s[3 : 3+end], 3 + end + 3
	}
	var b strings.Builder
	i := 1
	for i < len(s) && s[i] != q {
		if s[i] == '\\' && i+1 < len(s) {
			n := s[i+1]
			switch {
			case n == q || n == '\\':
				b.WriteByte(n)
			case q == '\'' && lang != "python":
				b.WriteByte('\\')
				b.WriteByte(n)
			default:
				dec, _ := decodeEscapes(s[i:i+2], false)
				b.WriteString(dec)
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	if i < len(s) {
		i++
	}
	return b.String(), i
}

// readDelimited reads a Perl or Ruby quote-like body: {…}, (…), […], <…>,
// or the same character at both ends.
func readDelimited(s string) (string, int) {
	if s == "" {
		return "", 0
	}
	open := s[0]
	close := open
	switch open {
	case '{':
		close = '}'
	case '(':
		close = ')'
	case '[':
		close = ']'
	case '<':
		close = '>'
	}
	depth := 0
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case close:
			if depth == 0 {
				return s[1:i], i + 1
			}
			depth--
		case open:
			if open != close {
				depth++
			}
		}
	}
	return s[1:], len(s)
}

// forkLoop reports code that forks in an endless loop: perl's fork while 1
// and fork while fork, python's while True: os.fork(), ruby's loop { fork },
// node's while(1) child_process.fork(…). A bounded loop (for i in
// range(4)) is not one.
func forkLoop(toks []itok) bool {
	isFork := func(t itok) bool {
		if t.kind != 'i' {
			return false
		}
		n := t.text[strings.LastIndexAny(t.text, ".:")+1:]
		return n == "fork" || n == "pcntl_fork" || n == "forkpty" || n == "Fork"
	}
	forks, endless := false, false
	for k, t := range toks {
		if isFork(t) {
			forks = true
		}
		if t.kind != 'i' {
			continue
		}
		next := func(i int) itok {
			if k+i < len(toks) {
				return toks[k+i]
			}
			return itok{}
		}
		switch t.text {
		case "while", "until":
			c := next(1)
			if c.text == "(" {
				c = next(2)
			}
			if isFork(c) || t.text == "while" && oneOf(c.text, "1", "True", "true", "TRUE", "yes") || t.text == "until" && oneOf(c.text, "0", "false", "False") {
				endless = true
			}
		case "loop":
			endless = endless || next(1).text == "{" || next(1).text == "do"
		case "for":
			endless = endless || next(1).text == "(" && next(2).text == ";" && next(3).text == ";"
		}
	}
	return forks && endless
}

func isPathCtor(name string) bool {
	return name == "Path" || name == "PosixPath" || name == "PurePath" || name == "PurePosixPath"
}

// callArgs returns the tokens of the arguments of a call, up to the closing
// parenthesis or the end of the statement.
func callArgs(toks []itok) []itok {
	depth := 0
	for i, t := range toks {
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth <= 0 {
				return toks[:i]
			}
		case ";":
			if depth <= 0 {
				return toks[:i]
			}
		}
	}
	return toks
}

// perlOpen reads Perl's open: open(F, ">/etc/passwd"), open(my $f, ">>",
// "/etc/passwd"), open(F, "| rm -rf /"), open(F, "-|", "rm", "-rf", "/").
func perlOpen(toks []itok, out *inlineFind) {
	var strs []string
	for _, t := range callArgs(toks) {
		if t.kind == 's' {
			strs = append(strs, t.text)
		}
	}
	if len(strs) == 0 {
		return
	}
	if len(strs) == 1 {
		s := strings.TrimSpace(strs[0])
		switch {
		case strings.HasPrefix(s, "|"):
			out.shell = append(out.shell, strings.TrimSpace(s[1:]))
		case strings.HasSuffix(s, "|"):
			out.shell = append(out.shell, strings.TrimSpace(strings.TrimSuffix(s, "|")))
		case strings.HasPrefix(s, ">") || strings.HasPrefix(s, "+"):
			out.writes = append(out.writes, strings.TrimSpace(strings.TrimLeft(s, "+<>&")))
		}
		return
	}
	mode, _, _ := strings.Cut(strings.TrimSpace(strs[0]), ":")
	switch strings.TrimSpace(mode) {
	case ">", ">>", "+<", "+>", "+>>":
		out.writes = append(out.writes, strs[1])
	case "-|", "|-":
		if len(strs) == 2 {
			out.shell = append(out.shell, strs[1])
		} else {
			out.argv = append(out.argv, strs[1:])
		}
	}
}

// rUnlink reads R's unlink(path, recursive = TRUE).
func rUnlink(toks []itok, out *inlineFind) {
	args := callArgs(toks)
	rec := false
	var path string
	for i, t := range args {
		if t.kind == 's' && path == "" {
			path = t.text
		}
		if t.kind == 'i' && t.text == "recursive" && i+2 < len(args) && args[i+1].text == "=" && (args[i+2].text == "TRUE" || args[i+2].text == "T") {
			rec = true
		}
	}
	if path == "" {
		return
	}
	if rec {
		out.deletes = append(out.deletes, path)
	} else {
		out.removes = append(out.removes, path)
	}
}

// rFileArg reads the file that R's writeLines, cat, write and sink write:
// the file = or con = argument, or writeLines' second argument.
func rFileArg(toks []itok, name string, out *inlineFind) {
	args := callArgs(toks)
	var pos []string
	for i, t := range args {
		if t.kind == 'i' && (t.text == "file" || t.text == "con") && i+2 < len(args) && args[i+1].text == "=" && args[i+2].kind == 's' {
			out.writes = append(out.writes, args[i+2].text)
			return
		}
		if t.kind == 's' && (i == 0 || args[i-1].text != "=") {
			pos = append(pos, t.text)
		}
	}
	switch {
	case name == "sink" && len(pos) > 0:
		out.writes = append(out.writes, pos[0])
	case (name == "writeLines" || name == "saveRDS") && len(pos) > 1:
		out.writes = append(out.writes, pos[1])
	}
}

// openFlagsWrite reports whether the flags of os.open(path, flags) open the
// file for writing (O_WRONLY, O_RDWR, O_TRUNC, O_CREAT).
func openFlagsWrite(toks []itok) bool {
	for _, t := range callArgs(toks) {
		if t.kind == 'i' && (strings.Contains(t.text, "O_WRONLY") || strings.Contains(t.text, "O_RDWR") || strings.Contains(t.text, "O_TRUNC") || strings.Contains(t.text, "O_CREAT")) {
			return true
		}
	}
	return false
}

// killedPids returns the pids 1 and -1 among those a kill call signals:
// os.kill(pid, sig), process.kill(pid), posix_kill(pid, sig) take the pid
// first; Ruby's Process.kill(sig, *pids) and Perl's kill(sig, @pids) after
// the signal.
func killedPids(toks []itok, lang string) []string {
	var args []string
	cur := ""
	for _, t := range callArgs(toks) {
		switch {
		case t.text == "(":
		case t.text == ",":
			args = append(args, cur)
			cur = ""
		default:
			cur += t.text
		}
	}
	args = append(args, cur)
	pids := args[:1]
	if lang == "perl" || lang == "ruby" {
		pids = args[1:]
	}
	var out []string
	for _, p := range pids {
		if p == "1" || p == "-1" {
			out = append(out, p)
		}
	}
	return out
}

// readsCode reports whether a command line is a shell or interpreter
// alone, which runs what it reads on stdin as code.
func readsCode(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return false
	}
	for _, a := range f[1:] {
		if !strings.HasPrefix(a, "-") || a == "-c" || a == "-e" {
			return false
		}
	}
	base := f[0][strings.LastIndexByte(f[0], '/')+1:]
	return oneOf(base, "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "python", "python3", "perl", "ruby", "node", "php")
}

// propagate is the simple data flow of inline code: a name assigned a
// string literal or a number (d = "/etc", my $d = "/etc", const d =
// "/etc", p = Path("/etc")) stands for that literal where it is later
// passed as an argument, and Python f-strings and JavaScript template
// strings have such names substituted ({d}, ${d}).
func propagate(toks []itok, lang string) []itok {
	vals := map[string]itok{}
	out := make([]itok, 0, len(toks))
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		if t.kind == 'i' && k+2 < len(toks) && toks[k+1].text == "=" && toks[k+2].text != "=" && (k == 0 || toks[k-1].text != "=" && toks[k-1].text != "!" && toks[k-1].text != "<" && toks[k-1].text != ">") {
			v := toks[k+2]
			end := k + 3
			if v.kind == 'i' && isPathCtor(v.text[strings.LastIndexAny(v.text, ".:")+1:]) && k+5 < len(toks) && toks[k+3].text == "(" && toks[k+4].kind == 's' && toks[k+5].text == ")" {
				v, end = toks[k+4], k+6
			}
			literal := v.kind == 's' || v.kind == 'i' && isDigits(strings.TrimPrefix(v.text, "-"))
			if literal && (end >= len(toks) || oneOf(toks[end].text, ";", ",", ")", "}") || toks[end].kind == 'i') {
				vals[t.text] = itok{kind: v.kind, text: v.text}
			} else {
				delete(vals, t.text)
			}
			out = append(out, t)
			continue
		}
		switch t.kind {
		case 'i':
			if v, ok := vals[t.text]; ok && k > 0 && oneOf(toks[k-1].text, "(", ",", "[") && (k+1 >= len(toks) || toks[k+1].text != "(" && toks[k+1].text != "=") {
				t = v
			}
		case 's':
			if (lang == "python" || lang == "node") && strings.Contains(t.text, "{") && len(vals) > 0 {
				s := t.text
				for name, v := range vals {
					if v.kind == 's' || v.kind == 'i' {
						s = strings.ReplaceAll(s, "${"+name+"}", v.text)
						s = strings.ReplaceAll(s, "{"+name+"}", v.text)
					}
				}
				t = itok{kind: 's', text: s}
			}
		}
		out = append(out, t)
	}
	return out
}
