package validate

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Read-only classification.
//
// A command line is read-only when every command in it is a program of the
// observers table below, called with arguments that table accepts, and the
// line has nothing else that could change the machine or run an unknown
// program. It is a conservative, syntactic judgement made on the parse the
// policy already did: whatever it cannot see through is not read-only
// (which only means the call is audited as one that may change something).
//
// Refused, whatever the programs:
//   - any word that may name a device ("dev/" in it, but /dev/null), and
//     any command run in /dev: opening some devices acts (/dev/watchdog
//     arms the watchdog). A link of another name to a device is beyond a
//     syntactic check;
//   - any expansion that runs or computes something: command and process
//     substitution, arithmetic, parameter expansion ($X could carry an
//     option such as -delete), globs and brace expansion (a file named
//     "-delete" would become an option), ANSI-C and locale quoting, and
//     backslashes outside single quotes;
//   - assignments, function definitions, compound commands other than
//     { …; } and ( … ), background jobs and coprocesses;
//   - every redirection except input (<, <<, <<<, here-documents whose
//     body has no expansion), duplicating an output onto another (2>&1,
//     >&2) and output to /dev/null.
//
// Only lists (;, &&, ||, newline), pipelines (|, |&), negation (!) and
// groups combine observers.
//
// The table names programs by their bare name (found on PATH) or by their
// path in /bin, /usr/bin, /usr/local/bin, /sbin or /usr/sbin. What it
// trusts and what it leaves out:
//   - programs that never write: cat, ls, head, tail, wc, grep, stat, ps,
//     df, du, id, uname, … (see observers); tail -f runs until its timeout,
//     which changes nothing;
//   - with their writing options refused: date (-s/--set), hostname (a new
//     name), file (-C), sort (-o, --output and --compress-program: only
//     known short flags and a few long ones), uniq (an output operand),
//     find (-delete, -exec, -execdir, -ok, -okdir, -fprint, -fprint0,
//     -fprintf, -fls), env and printenv (env with arguments runs a
//     program; the values they print pass the gateway's secret masking);
//   - git status, log, diff, show, blame, shortlog, describe, rev-parse,
//     ls-files, branch (listing flags only) and remote (no argument or -v),
//     after -C DIR or --no-pager, with --output and --ext-diff refused.
//     Git reads the repository's own configuration, which can name
//     programs (core.fsmonitor, diff.external, core.pager): the
//     classification trusts the repository's configuration as the
//     operator's. git status may refresh the index's cached file times
//     (no content changes);
//   - never: sed (w and e commands, -i), awk (system(), print > file), tee,
//     xargs, cp, mv, anything that runs another program (sudo, env CMD,
//     nice, timeout, sh -c, eval, command, exec), and every program not
//     listed.

// observer checks the arguments (after the program name) of one program
// of the table; it reports whether the call only observes.
type observer func(args []string) bool

func anyArgs([]string) bool { return true }

func noArgs(args []string) bool { return len(args) == 0 }

// observers is the table of programs that only observe.
var observers = map[string]observer{
	// Files and directories.
	"cat": anyArgs, "tac": anyArgs, "nl": anyArgs, "head": anyArgs, "tail": anyArgs,
	"ls": anyArgs, "dir": anyArgs, "vdir": anyArgs, "stat": anyArgs, "wc": anyArgs,
	"du": anyArgs, "df": anyArgs, "readlink": anyArgs, "realpath": anyArgs,
	"basename": anyArgs, "dirname": anyArgs, "pwd": anyArgs, "cmp": anyArgs,
	"diff": anyArgs, "md5sum": anyArgs, "sha1sum": anyArgs, "sha224sum": anyArgs,
	"sha256sum": anyArgs, "sha384sum": anyArgs, "sha512sum": anyArgs, "b2sum": anyArgs,
	"cksum": anyArgs, "od": anyArgs, "hexdump": anyArgs, "strings": anyArgs,
	"grep": anyArgs, "egrep": anyArgs, "fgrep": anyArgs, "zcat": anyArgs,
	"cut": anyArgs, "tr": anyArgs, "rev": anyArgs, "column": anyArgs, "jq": anyArgs,
	"file": fileArgs, "find": findArgs, "sort": sortArgs, "uniq": uniqArgs,
	// Text the shell itself prints, and tests.
	"echo": anyArgs, "printf": printfArgs, "true": anyArgs, "false": anyArgs,
	"test": testArgs, "[": testArgs, "which": anyArgs, "type": anyArgs,
	// The system and its processes.
	"ps": anyArgs, "uname": anyArgs, "id": anyArgs, "whoami": anyArgs, "groups": anyArgs,
	"who": anyArgs, "w": anyArgs, "uptime": anyArgs, "nproc": anyArgs, "free": anyArgs,
	"lscpu": anyArgs, "lsblk": anyArgs, "findmnt": anyArgs, "lsof": anyArgs,
	"ss": anyArgs, "netstat": anyArgs, "tty": anyArgs, "locale": anyArgs,
	"getent": anyArgs, "printenv": anyArgs, "env": noArgs, "mount": noArgs,
	"date": dateArgs, "hostname": hostnameArgs, "git": gitArgs,
}

// printfArgs refuses -v, which assigns a shell variable (harmless outside
// the shell, but not output).
func printfArgs(args []string) bool {
	return len(args) == 0 || args[0] != "-v"
}

// testArgs accepts test and [ with unary file tests and comparisons of
// literal words; -v and -R take a variable name, whose subscript bash
// evaluates as code (test -v 'x[$(…)]').
func testArgs(args []string) bool {
	for _, a := range args {
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		if !strings.Contains(testOps, " "+a+" ") {
			return false
		}
	}
	return true
}

// testOps are the operators of test that only look at files and words.
const testOps = " -a -b -c -d -e -f -g -h -k -L -n -N -O -G -p -r -s -S -t -u -w -x -z -o -eq -ne -lt -le -gt -ge -nt -ot -ef "

func dateArgs(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
		if strings.HasPrefix(a, "--s") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 's')) {
			return false // --set, -s
		}
	}
	return true
}

// hostnameArgs accepts only the printing flags: an operand or -F sets the
// name.
func hostnameArgs(args []string) bool {
	for _, a := range args {
		switch a {
		case "-s", "--short", "-f", "--fqdn", "--long", "-i", "--ip-address", "-I", "--all-ip-addresses",
			"-d", "--domain", "-A", "--all-fqdns", "-a", "--alias":
		default:
			return false
		}
	}
	return true
}

func fileArgs(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
		if strings.HasPrefix(a, "--c") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'C')) {
			return false // --compile, -C
		}
	}
	return true
}

// findWrites are find's actions that write, delete or run programs.
var findWrites = []string{"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}

func findArgs(args []string) bool {
	for _, a := range args {
		if slices.Contains(findWrites, a) {
			return false
		}
	}
	return true
}

// sortArgs accepts operands, short flags that only change the order, and
// -k/-t with their values; -o (output), --compress-program and every other
// long option are refused.
func sortArgs(args []string) bool {
	value := false
	for _, a := range args {
		switch {
		case value:
			value = false
		case a == "--":
			return true
		case strings.HasPrefix(a, "--"):
			switch a {
			case "--reverse", "--numeric-sort", "--unique", "--ignore-case", "--human-numeric-sort",
				"--general-numeric-sort", "--version-sort", "--month-sort", "--ignore-leading-blanks",
				"--dictionary-order", "--stable", "--zero-terminated", "--check":
			default:
				if !strings.HasPrefix(a, "--key=") && !strings.HasPrefix(a, "--field-separator=") {
					return false
				}
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for i, c := range a[1:] {
				if strings.ContainsRune("bdfghiMnrRsuVcCz", c) {
					continue
				}
				if c == 'k' || c == 't' {
					value = i+2 == len(a) // the value is the next argument
					break
				}
				return false
			}
		}
	}
	return true
}

// uniqArgs refuses a second operand, which uniq writes to, and every
// option that takes a value (its value would be taken for an operand).
func uniqArgs(args []string) bool {
	operands := 0
	for _, a := range args {
		switch {
		case a == "-" || !strings.HasPrefix(a, "-"):
			operands++
		case strings.Trim(a, "-cdiuzD") != "":
			return false
		}
	}
	return operands <= 1
}

// gitReaders are the git commands that only read the repository.
var gitReaders = []string{"status", "log", "diff", "show", "blame", "shortlog", "describe", "rev-parse", "ls-files", "branch", "remote"}

func gitArgs(args []string) bool {
	// Global options: -C DIR and --no-pager only.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-C":
			if len(args) < 2 {
				return false
			}
			args = args[2:]
		case "--no-pager":
			args = args[1:]
		default:
			return false
		}
	}
	if len(args) == 0 || !slices.Contains(gitReaders, args[0]) {
		return false
	}
	sub, rest := args[0], args[1:]
	for _, a := range rest {
		if strings.HasPrefix(a, "--output") || strings.HasPrefix(a, "--ext-diff") || a == "-o" {
			return false
		}
	}
	switch sub {
	case "branch":
		for _, a := range rest {
			switch a {
			case "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--list", "--show-current", "--no-color":
			default:
				return false // a name creates a branch; -d, -m, -c change them
			}
		}
	case "remote":
		return len(rest) == 0 || (len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose"))
	}
	return true
}

// systemDirs are where a program named by its path is taken for the
// table's program of the same name.
var systemDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"}

// observes reports whether argv is a program of the table called with
// arguments it accepts.
func observes(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name := argv[0]
	if strings.Contains(name, "/") {
		if !slices.Contains(systemDirs, path.Dir(name)) {
			return false
		}
		name = path.Base(name)
	}
	ok, found := observers[name]
	return found && ok(argv[1:])
}

// observesArgv is observes for an argument vector run without a shell.
func observesArgv(argv []string) bool {
	for _, a := range argv {
		if touchesDev(a) {
			return false
		}
	}
	return observes(argv)
}

// readOnlyFile reports whether every command of a parsed command line,
// run in dir, only observes.
func readOnlyFile(f *syntax.File, dir string) bool {
	return len(f.Stmts) > 0 && !inDev(dir) && readOnlyStmts(f.Stmts)
}

// inDev reports whether dir is /dev or below it: opening some devices acts
// (/dev/watchdog arms the watchdog, a tape device rewinds), so a relative
// path there is not taken for a file that only gets read.
func inDev(dir string) bool {
	return dir == "/dev" || strings.HasPrefix(dir, "/dev/")
}

// touchesDev reports whether a word may name a device: anything with
// "dev/" in it but /dev/null (and ../dev/watchdog is seen too). Reading a
// device through a link of another name is beyond this check.
func touchesDev(v string) bool {
	return v != "/dev/null" && (strings.Contains(v, "dev/") || v == "/dev" || strings.HasSuffix(v, "/dev"))
}

func readOnlyStmts(list []*syntax.Stmt) bool {
	for _, s := range list {
		if !readOnlyStmt(s) {
			return false
		}
	}
	return true
}

func readOnlyStmt(s *syntax.Stmt) bool {
	if s == nil || s.Background || s.Coprocess || s.Cmd == nil {
		return false
	}
	for _, r := range s.Redirs {
		if !readOnlyRedirect(r) {
			return false
		}
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 || len(c.Args) == 0 {
			return false
		}
		argv := make([]string, len(c.Args))
		for i, w := range c.Args {
			v, ok := literalWord(w)
			if !ok || touchesDev(v) {
				return false
			}
			argv[i] = v
		}
		return observes(argv)
	case *syntax.BinaryCmd:
		return readOnlyStmt(c.X) && readOnlyStmt(c.Y)
	case *syntax.Block:
		return readOnlyStmts(c.Stmts)
	case *syntax.Subshell:
		return readOnlyStmts(c.Stmts)
	}
	return false
}

func readOnlyRedirect(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrIn, syntax.WordHdoc:
		v, ok := literalWord(r.Word)
		return ok && (r.Op == syntax.WordHdoc || !touchesDev(v))
	case syntax.Hdoc, syntax.DashHdoc:
		// The body of an unquoted here-document expands: it must hold
		// text alone.
		if r.Hdoc == nil {
			return true
		}
		for _, p := range r.Hdoc.Parts {
			if _, ok := p.(*syntax.Lit); !ok {
				return false
			}
		}
		return true
	case syntax.DplOut, syntax.DplIn:
		v, ok := literalWord(r.Word)
		return ok && (v == "-" || isDigits(v))
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
		v, ok := literalWord(r.Word)
		return ok && v == "/dev/null"
	}
	return false
}

// literalWord returns the value of a word that expands to itself alone:
// unquoted text without globs, braces or backslashes (a leading ~ is
// allowed: it is a home directory), single-quoted text, and double-quoted
// text without expansions or backslashes.
func literalWord(w *syntax.Word) (string, bool) {
	if w == nil || len(w.Parts) == 0 {
		return "", false
	}
	var sb strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(x.Value, "*?[]{}\\") {
				return "", false
			}
			sb.WriteString(x.Value)
		case *syntax.SglQuoted:
			if x.Dollar {
				return "", false
			}
			sb.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar {
				return "", false
			}
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsRune(l.Value, '\\') {
					return "", false
				}
				sb.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return sb.String(), true
}
