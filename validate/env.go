package validate

import (
	"sort"
	"strconv"
	"strings"
)

// envKind says how CheckEnv treats one environment variable.
type envKind uint8

const (
	envRefuse  envKind = iota + 1 // always refused
	envCommand                    // its value is a command line that programs run: judged by Check
	envPrompt                     // a prompt: refused when it holds a command substitution
	envPath                       // PATH: absolute directories, system directories first
)

// envRule is one row of the environment table.
type envRule struct {
	kind envKind
	why  string // what the variable does
	fix  string // what to do instead
}

// envTable lists the variables that change what runs without the command
// text showing it. It is a constant table.
var envTable = map[string]envRule{
	"BASH_ENV":              {envRefuse, "names a file that every non-interactive bash runs before the command", "put the commands in the command itself (source FILE; …)"},
	"ENV":                   {envRefuse, "names a file that sh, dash and interactive shells run before the command", "put the commands in the command itself (. FILE; …)"},
	"ZDOTDIR":               {envRefuse, "names the directory of the start-up files zsh runs before the command", "put the commands in the command itself"},
	"PROMPT_COMMAND":        {envRefuse, "is run by an interactive bash before every prompt", "run the command itself"},
	"SHELLOPTS":             {envRefuse, "turns on shell options (xtrace, errexit, …) in every bash the command starts", "use set -o OPTION inside the command"},
	"BASHOPTS":              {envRefuse, "turns on shopt options (expand_aliases, extglob, …) in every bash the command starts", "use shopt -s OPTION inside the command"},
	"IFS":                   {envRefuse, "changes how every shell splits words, so the command is not the one checked", "set IFS inside the command where it is needed"},
	"CDPATH":                {envRefuse, "makes cd resolve directory names elsewhere, so paths are not the ones checked", "cd to absolute or ./relative directories"},
	"GCONV_PATH":            {envRefuse, "makes the C library load conversion modules (code) from another directory", "leave it unset"},
	"PYTHONSTARTUP":         {envRefuse, "names a file that an interactive Python runs first", "run the file explicitly (python3 FILE)"},
	"PYTHONHOME":            {envRefuse, "replaces the Python standard library, so every import may run other code", "use a virtual environment (python3 -m venv) and run its python"},
	"PERL5OPT":              {envRefuse, "adds command-line switches (-M modules) to every perl", "pass the switches on the perl command line"},
	"PERL5DB":               {envRefuse, "is code that perl -d runs", "pass the code on the command line"},
	"RUBYOPT":               {envRefuse, "adds command-line switches (-r libraries) to every ruby", "pass the switches on the ruby command line"},
	"NODE_OPTIONS":          {envRefuse, "adds options such as --require FILE to every node", "pass the options on the node command line"},
	"JAVA_TOOL_OPTIONS":     {envRefuse, "adds options such as -javaagent to every JVM", "pass the options on the java command line"},
	"_JAVA_OPTIONS":         {envRefuse, "adds options such as -javaagent to every JVM", "pass the options on the java command line"},
	"JDK_JAVA_OPTIONS":      {envRefuse, "adds options such as -javaagent to every java launcher", "pass the options on the java command line"},
	"GIT_CONFIG_COUNT":      {envRefuse, "injects git configuration, whose core.pager, alias.* and similar keys run shell commands", "pass git -c KEY=VALUE on the command line, where it is checked"},
	"GIT_CONFIG_PARAMETERS": {envRefuse, "injects git configuration, whose core.pager, alias.* and similar keys run shell commands", "pass git -c KEY=VALUE on the command line, where it is checked"},
	"GIT_EXEC_PATH":         {envRefuse, "replaces the programs git runs for its subcommands", "leave it unset"},
	"GIT_TEMPLATE_DIR":      {envRefuse, "installs hooks, which run code, into every new repository", "leave it unset"},
	"PS4":                   {envPrompt, "is expanded before every traced command when xtrace is on", "use a plain prompt without $(…)"},
	"PS0":                   {envPrompt, "is expanded by an interactive bash before every command", "use a plain prompt without $(…)"},
	"PS1":                   {envPrompt, "is expanded by an interactive shell before every prompt", "use a plain prompt without $(…)"},
	"PS2":                   {envPrompt, "is expanded by an interactive shell for continuation lines", "use a plain prompt without $(…)"},
	"PAGER":                 {envCommand, "is run through a shell by man, git and others", ""},
	"MANPAGER":              {envCommand, "is run through a shell by man", ""},
	"GIT_PAGER":             {envCommand, "is run through a shell by git", ""},
	"EDITOR":                {envCommand, "is run through a shell by git, crontab, sudoedit and others", ""},
	"VISUAL":                {envCommand, "is run through a shell by git, crontab and others", ""},
	"GIT_EDITOR":            {envCommand, "is run through a shell by git", ""},
	"GIT_SEQUENCE_EDITOR":   {envCommand, "is run through a shell by git rebase", ""},
	"GIT_SSH_COMMAND":       {envCommand, "is run through a shell by git instead of ssh", ""},
	"GIT_SSH":               {envCommand, "is run by git instead of ssh", ""},
	"GIT_EXTERNAL_DIFF":     {envCommand, "is run by git diff", ""},
	"GIT_ASKPASS":           {envCommand, "is run by git to ask for a password", ""},
	"SSH_ASKPASS":           {envCommand, "is run by ssh to ask for a password", ""},
	"SUDO_ASKPASS":          {envCommand, "is run by sudo -A to ask for a password", ""},
	"GIT_PROXY_COMMAND":     {envCommand, "is run by git to connect", ""},
	"RSYNC_RSH":             {envCommand, "is run by rsync instead of ssh", ""},
	"LESSOPEN":              {envCommand, "is run through a shell by less for every file it opens", ""},
	"LESSCLOSE":             {envCommand, "is run through a shell by less for every file it closes", ""},
	"BROWSER":               {envCommand, "is run by programs that open links", ""},
	"PATH":                  {envPath, "", ""},
}

// envPrefixes refuse whole families of variables.
var envPrefixes = [...]struct {
	prefix string
	rule   envRule
}{
	{"LD_", envRule{envRefuse, "changes how the dynamic linker loads every program (LD_PRELOAD, LD_LIBRARY_PATH and LD_AUDIT load other code)", "link or install the library properly, or run the program through a wrapper script that the command names"}},
	{"DYLD_", envRule{envRefuse, "changes how the macOS dynamic linker loads every program", "leave it unset"}},
	{"BASH_FUNC_", envRule{envRefuse, "is an exported bash function, which replaces a command of the same name in every bash", "define the function inside the command"}},
	{"GIT_CONFIG_KEY_", envRule{envRefuse, "injects git configuration, whose core.pager, alias.* and similar keys run shell commands", "pass git -c KEY=VALUE on the command line, where it is checked"}},
	{"GIT_CONFIG_VALUE_", envRule{envRefuse, "injects git configuration, whose core.pager, alias.* and similar keys run shell commands", "pass git -c KEY=VALUE on the command line, where it is checked"}},
}

// CheckEnv decides whether a command may run with these environment
// variables set (the env argument of a command, not shell text). It refuses,
// with rule [RuleEnvironment], variables that change what runs without the
// command text showing it, so that Check would judge a different program
// than the one that runs:
//
//   - start-up files and options of shells: BASH_ENV, ENV, ZDOTDIR,
//     PROMPT_COMMAND, SHELLOPTS, BASHOPTS, IFS, CDPATH, and exported
//     functions (BASH_FUNC_name%%, or any value starting with "() {");
//   - the dynamic linker: every LD_* (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT,
//     …), DYLD_* and GCONV_PATH;
//   - start-up code and options of interpreters: PYTHONSTARTUP, PYTHONHOME,
//     PERL5OPT, PERL5DB, RUBYOPT, NODE_OPTIONS, JAVA_TOOL_OPTIONS,
//     _JAVA_OPTIONS, JDK_JAVA_OPTIONS (PYTHONPATH, PERL5LIB, RUBYLIB and
//     NODE_PATH are allowed: they choose where imports come from, which is no
//     more than running a local program directly);
//   - git configuration injected through the environment (GIT_CONFIG_COUNT,
//     GIT_CONFIG_KEY_n, GIT_CONFIG_PARAMETERS), GIT_EXEC_PATH and
//     GIT_TEMPLATE_DIR;
//   - prompts (PS0, PS1, PS2, PS4) that hold a command substitution;
//   - names that are not shell identifiers (a name holding "=" would set
//     another variable) and values holding a NUL byte.
//
// Variables whose value is a command that programs run (PAGER, MANPAGER,
// GIT_PAGER, EDITOR, VISUAL, GIT_EDITOR, GIT_SSH_COMMAND, GIT_SSH,
// SSH_ASKPASS, SUDO_ASKPASS, LESSOPEN, RSYNC_RSH, …) are allowed when
// [Policy.Check] allows their value, and refused under the rule that
// refuses it otherwise: PAGER=cat is fine, PAGER='rm -rf /' is not.
//
// PATH is allowed when every entry is an absolute, clean directory and the
// system directories it names (/usr/local/sbin, /usr/local/bin, /usr/sbin,
// /usr/bin, /sbin, /bin, …) all come before any other entry, so that the
// programs Check judges by name are the system's: append a directory
// (PATH=/usr/local/bin:/usr/bin:/bin:/home/me/.local/bin) rather than
// prepend it, or call the program by its absolute path. An empty, relative
// or "." entry is refused, because the program found then depends on the
// working directory.
//
// Every other variable (LANG, TZ, GOFLAGS, RUST_LOG, FOO=bar, …) is allowed.
// When several variables are refused the decision names the first in
// sorted order. CheckEnv honours [Policy.Rules] for [RuleEnvironment] (Off
// and Confirm) and is safe for concurrent use.
func (p *Policy) CheckEnv(env map[string]string) Decision {
	if len(env) == 0 {
		return Decision{Allowed: true}
	}
	cfg := p.compile()
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	var pending *Decision
	for _, name := range names {
		d, ok := p.checkVar(cfg, name, env[name])
		if ok {
			continue
		}
		if !d.Confirm {
			return d
		}
		if pending == nil {
			pending = &d
		}
	}
	if pending != nil {
		return *pending
	}
	return Decision{Allowed: true}
}

// checkVar judges one variable; ok is true when it is allowed.
func (p *Policy) checkVar(cfg *config, name, val string) (d Decision, ok bool) {
	deny := func(reason, fix string) (Decision, bool) {
		a := cfg.action(RuleEnvironment)
		if a == Off {
			return Decision{}, true
		}
		d := refuse(RuleEnvironment, reason, a == Confirm)
		if fix != "" {
			d.Hint = fix
		}
		return d, false
	}
	show := strconv.Quote(name)
	if i := strings.IndexByte(val, 0); i >= 0 || strings.IndexByte(name, 0) >= 0 {
		return deny("the environment variable "+show+" holds a NUL byte", "remove the NUL byte")
	}
	r, known := envTable[name]
	if !known {
		for _, pre := range envPrefixes {
			if strings.HasPrefix(name, pre.prefix) {
				r, known = pre.rule, true
				break
			}
		}
	}
	if !known && (strings.IndexByte(name, '=') >= 0 || !isAssignment(name+"=")) {
		return deny("the environment variable name "+show+" is not a shell identifier, so the program may see other variables than the ones checked",
			"use names of letters, digits and underscores")
	}
	if !known && strings.HasPrefix(val, "() {") {
		return deny("the environment variable "+show+" holds a shell function definition, which older bash versions import and run",
			"define the function inside the command")
	}
	if !known {
		return Decision{}, true
	}
	switch r.kind {
	case envRefuse:
		return deny("the environment variable "+show+" "+r.why, "leave "+name+" unset: "+r.fix)
	case envPrompt:
		if strings.Contains(val, "$(") || strings.Contains(val, "`") || strings.Contains(val, "${") {
			return deny("the environment variable "+show+" "+r.why+" and holds a command or parameter substitution", r.fix)
		}
	case envCommand:
		inner := p.Check(val, Options{})
		if !inner.Allowed {
			inner.Reason = "the environment variable " + show + " " + r.why + ", and " + inner.Reason
			return inner, false
		}
	case envPath:
		if reason, bad := badPath(val); bad {
			return deny("the environment variable \"PATH\" "+reason+", so commands may run other programs than the ones checked",
				"keep the system directories first and append yours (PATH=/usr/local/bin:/usr/bin:/bin:$HOME/.local/bin), or call the program by its absolute path")
		}
	}
	return Decision{}, true
}

// badPath reports why a PATH value lets a command name resolve to another
// program than the system's.
func badPath(val string) (string, bool) {
	others := ""
	sys := false
	for _, e := range strings.Split(val, ":") {
		switch {
		case e == "":
			return "has an empty entry, which means the working directory", true
		case !strings.HasPrefix(e, "/"):
			return "has the relative entry " + strconv.Quote(e), true
		case cleanPath(e) != strings.TrimRight(e, "/") && e != "/":
			return "has the entry " + strconv.Quote(e) + ", which is not a clean path", true
		}
		isSys := false
		for _, d := range systemBinDirs {
			if cleanPath(e) == d {
				isSys = true
			}
		}
		if isSys {
			sys = true
			if others != "" {
				return "puts " + strconv.Quote(others) + " before the system directory " + strconv.Quote(e), true
			}
		} else if others == "" {
			others = e
		}
	}
	if !sys {
		return "names no system directory (/usr/bin, /bin)", true
	}
	return "", false
}
