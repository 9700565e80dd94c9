package validate

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// bashBuiltins are bash's builtins and reserved words: a command named by
// one of them is run by bash itself, never looked up on PATH, so it has no
// argument vector to run without bash.
var bashBuiltins = map[string]bool{
	".": true, ":": true, "[": true, "alias": true, "bg": true, "bind": true, "break": true,
	"builtin": true, "caller": true, "cd": true, "command": true, "compgen": true, "complete": true,
	"compopt": true, "continue": true, "declare": true, "dirs": true, "disown": true, "echo": true,
	"enable": true, "eval": true, "exec": true, "exit": true, "export": true, "false": true, "fc": true,
	"fg": true, "getopts": true, "hash": true, "help": true, "history": true, "jobs": true, "kill": true,
	"let": true, "local": true, "logout": true, "mapfile": true, "popd": true, "printf": true,
	"pushd": true, "pwd": true, "read": true, "readarray": true, "readonly": true, "return": true,
	"set": true, "shift": true, "shopt": true, "source": true, "suspend": true, "test": true,
	"times": true, "trap": true, "true": true, "type": true, "typeset": true, "ulimit": true,
	"umask": true, "unalias": true, "unset": true, "wait": true,
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true, "in": true,
	"function": true, "time": true, "{": true, "}": true, "!": true, "[[": true, "]]": true, "coproc": true,
}

// simpleArgv returns the argument vector of a command line that is one
// simple command of literal words — no expansion of any kind (a ~ anywhere
// is refused: bash expands it after = and : too), no redirection,
// assignment, negation or background — whose program is named by a bare
// name that is not a bash builtin or reserved word: bash would look it up
// on PATH and run it with exactly these arguments. true and false without
// arguments are the exception to the builtin rule: the builtin and the
// program behave the same (no output, exit 0 or 1).
func simpleArgv(f *syntax.File) ([]string, bool) {
	if len(f.Stmts) != 1 {
		return nil, false
	}
	s := f.Stmts[0]
	if s.Negated || s.Background || s.Coprocess || len(s.Redirs) > 0 {
		return nil, false
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil, false
	}
	argv := make([]string, len(c.Args))
	for i, w := range c.Args {
		v, ok := literalWord(w)
		if !ok || strings.ContainsRune(v, '~') {
			return nil, false
		}
		argv[i] = v
	}
	name := argv[0]
	switch {
	case name == "" || strings.ContainsRune(name, '/'):
		return nil, false
	case (name == "true" || name == "false") && len(argv) == 1:
	case bashBuiltins[name]:
		return nil, false
	}
	return argv, true
}

// Argv returns, for an allowed shell command line that is one simple
// command of literal words whose program bash would look up on PATH (not
// a builtin or reserved word; true and false without arguments excepted),
// its argument vector: what bash would run. A runner may run it without
// bash (exec.Command.Direct). Nil otherwise, and for CheckArgv.
func (d Decision) Argv() []string {
	if d.argv == "" {
		return nil
	}
	return strings.Split(d.argv, "\x00")
}
