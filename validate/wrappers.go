package validate

import (
	"strings"
)

// wrapSpec describes a command that runs another command.
type wrapSpec struct {
	syn        optSyntax
	sub        []string // the first word must be one of these (poetry run)
	skip       int      // operands before the command (timeout DURATION)
	flagsAfter bool     // options may follow the skipped operands (setarch ARCH -R cmd)
	noCmd      string   // short options after which no command runs
	noCmdLong  []string
	assigns    bool   // NAME=VALUE operands before the command set the environment
	shellOpt   string // short options whose argument is shell text
	shellLong  []string
	shellAfter bool // flock FILE -c CMD
	joinShell  bool // the operands are joined and run by a shell (sg, sem)
	shellFlag  byte // with this flag the operands are shell text (entr -s)
	noOperands bool // operands are files, never a command (script, nix-shell)
	execOpt    string
}

func posix(argShort string, argLong ...string) optSyntax {
	return optSyntax{argShort: argShort, argLong: argLong, posix: true}
}

var wrapSpecs = map[string]wrapSpec{
	"exec":              {syn: posix("a")},
	"command":           {syn: posix(""), noCmd: "vV"},
	"builtin":           {syn: posix("")},
	"nice":              {syn: posix("n", "adjustment")},
	"nohup":             {syn: posix("")},
	"setsid":            {syn: posix("")},
	"timeout":           {syn: posix("sk", "signal", "kill-after"), skip: 1},
	"time":              {syn: posix("of", "output", "format")},
	"stdbuf":            {syn: posix("ioe", "input", "output", "error")},
	"ionice":            {syn: posix("cnpPu", "class", "classdata", "pid", "pgid", "uid"), noCmd: "pPu", noCmdLong: []string{"pid", "pgid", "uid"}},
	"chrt":              {syn: posix("TPD", "sched-runtime", "sched-period", "sched-deadline"), noCmd: "pm", noCmdLong: []string{"pid", "max"}, skip: 1},
	"taskset":           {syn: posix(""), noCmd: "p", noCmdLong: []string{"pid"}, skip: 1},
	"chroot":            {syn: posix("", "userspec", "groups"), skip: 1},
	"nsenter":           {syn: posix("tSGe", "target", "setuid", "setgid", "env")},
	"unshare":           {syn: posix("SGRw", "propagation", "setgroups", "setuid", "setgid", "root", "wd", "map-user", "map-group", "map-users", "map-groups")},
	"setpriv":           {syn: posix("", "reuid", "regid", "ruid", "euid", "rgid", "egid", "groups", "inh-caps", "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule")},
	"numactl":           {syn: posix("NmCpPiw", "cpunodebind", "membind", "physcpubind", "preferred", "interleave", "weighted-interleave"), noCmd: "sH", noCmdLong: []string{"show", "hardware"}},
	"prlimit":           {syn: posix("po", "pid", "output"), noCmd: "p", noCmdLong: []string{"pid"}},
	"cgexec":            {syn: posix("g")},
	"fakeroot":          {syn: posix("lsi", "lib", "faked")},
	"faketime":          {syn: posix(""), skip: 1},
	"strace":            {syn: posix("eoOpPsSuEIXabU", "output", "trace", "signal", "string-limit", "user", "env", "attach", "trace-path"), noCmd: "p", noCmdLong: []string{"attach"}},
	"ltrace":            {syn: posix("eopsunaADlxEF", "output", "library"), noCmd: "p"},
	"valgrind":          {syn: posix("")},
	"catchsegv":         {syn: posix("")},
	"unbuffer":          {syn: posix("")},
	"torsocks":          {syn: posix("udaP", "user", "pass", "address", "port")},
	"proxychains":       {syn: posix("f")},
	"proxychains4":      {syn: posix("f")},
	"systemd-run":       {syn: posix("upEHM", "unit", "property", "setenv", "host", "machine", "description", "slice", "uid", "gid", "nice", "working-directory", "service-type", "on-active", "on-boot", "on-startup", "on-unit-active", "on-unit-inactive", "on-calendar", "timer-property", "path-property", "socket-property", "slice-inherit")},
	"xvfb-run":          {syn: posix("nsfewp", "server-num", "server-args", "auth-file", "error-file", "wait", "xauth-protocol")},
	"dbus-run-session":  {syn: posix("", "config-file", "dbus-daemon")},
	"gosu":              {syn: posix(""), skip: 1},
	"su-exec":           {syn: posix(""), skip: 1},
	"chpst":             {syn: posix("uUbe/nlLmdofpc")},
	"nocache":           {syn: posix("n")},
	"eatmydata":         {syn: posix("")},
	"flock":             {syn: posix("Ewc", "exit-code", "conflict-exit-code", "timeout", "wait", "command"), shellOpt: "c", shellLong: []string{"command"}, skip: 1, shellAfter: true},
	"script":            {syn: posix("cEtTIOBm", "command", "echo", "timing", "log-io", "log-in", "log-out", "logging-format", "output-limit"), shellOpt: "c", shellLong: []string{"command"}, noOperands: true},
	"sg":                {syn: posix("c"), shellOpt: "c", skip: 1, joinShell: true},
	"runuser":           {syn: posix("ugGcsw", "user", "group", "supp-group", "command", "session-command", "shell", "whitelist-environment"), shellOpt: "c", shellLong: []string{"command", "session-command"}},
	"entr":              {syn: posix(""), shellFlag: 's'},
	"nix-shell":         {syn: posix("pIA", "run", "command", "packages", "attr", "include", "arg", "argstr", "expr"), shellLong: []string{"run", "command"}, noOperands: true},
	"caffeinate":        {syn: posix("tw")},
	"firejail":          {syn: posix("")},
	"setarch":           {syn: posix(""), skip: 1, flagsAfter: true},
	"linux32":           {syn: posix("")},
	"linux64":           {syn: posix("")},
	"rlwrap":            {syn: posix("bCDefHlOpPqsStwz")},
	"sem":               {syn: posix("j", "jobs", "id"), joinShell: true},
	"tsp":               {syn: posix("LDNE")},
	"daemonize":         {syn: posix("acElopu")},
	"start-stop-daemon": {syn: optSyntax{argShort: "xaupgcnrNkdRIs", argLong: []string{"exec", "startas", "user", "pidfile", "group", "chuid", "name", "chroot", "nicelevel", "umask", "signal", "chdir", "retry", "iosched", "procsched", "make-pidfile"}}, execOpt: "x"},
	"poetry":            {syn: posix("C", "directory", "project"), sub: []string{"run"}},
	"pipenv":            {syn: posix(""), sub: []string{"run"}},
	"uv":                {syn: posix("p", "with", "with-requirements", "with-editable", "python", "project", "directory", "env-file", "extra", "group", "package", "index", "index-url", "extra-index-url", "cache-dir", "config-file", "only-group", "no-group"), sub: []string{"run"}},
	"bundle":            {syn: posix("", "gemfile"), sub: []string{"exec"}},
	"conda":             {syn: posix("np", "name", "prefix", "cwd"), sub: []string{"run"}},
	"mamba":             {syn: posix("np", "name", "prefix", "cwd"), sub: []string{"run"}},
	"micromamba":        {syn: posix("np", "name", "prefix", "cwd"), sub: []string{"run"}},
	"pnpm":              {syn: posix("C", "dir", "filter"), sub: []string{"exec", "dlx"}},
	"direnv":            {syn: posix(""), sub: []string{"exec"}, skip: 1},
	"dotenv":            {syn: posix("fev")},
	"with-contenv":      {syn: posix("")},
	"tini":              {syn: posix("pe")},
	"dumb-init":         {syn: posix("r", "rewrite")},
	"sudo":              {syn: posix("ugCDhprtTUR", "user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "command-timeout", "other-user", "chroot"), noCmd: "eklKvV", noCmdLong: []string{"edit", "list", "remove-timestamp", "reset-timestamp", "validate", "version"}, assigns: true},
	"doas":              {syn: posix("uC"), noCmd: "L"},
	"pkexec":            {syn: posix("", "user")},
	"run0":              {syn: posix("ugD", "user", "group", "nice", "chdir", "setenv", "unit", "property", "description", "slice", "machine")},
}

// wrapper unwraps a command that runs another one and checks the inner
// command.
func (w *walker) wrapper(inv *invocation, name string) {
	spec, ok := wrapSpecs[name]
	if !ok {
		return
	}
	args := inv.args()
	if spec.sub != nil {
		i := 0
		for i < len(args) && args[i].exact() && strings.HasPrefix(args[i].s, "-") {
			i++
		}
		if i >= len(args) || !args[i].exact() || !oneOf(args[i].s, spec.sub...) {
			return
		}
		args = args[i+1:]
	}
	p := parseArgs(args, &spec.syn)
	for _, v := range p.vals {
		if len(v.name) == 1 && strings.IndexByte(spec.shellOpt, v.name[0]) >= 0 || len(v.name) > 1 && oneOfPrefix(v.name, spec.shellLong) {
			w.payload(inv, v.val, name+" -"+v.name+" command", nil, false)
		}
	}
	if spec.execOpt != "" {
		exe, ok := p.val(spec.execOpt[0], "exec")
		if !ok {
			exe, ok = p.val('a', "startas")
		}
		if ok {
			w.invoke(inv.sub(append([]field{exe}, p.ops...), name))
		}
		return
	}
	for i := 0; i < len(spec.noCmd); i++ {
		if p.hasShort(spec.noCmd[i]) {
			return
		}
	}
	for _, l := range spec.noCmdLong {
		if p.hasLong(l, min(3, len(l))) {
			return
		}
	}
	if spec.noOperands {
		return
	}
	ops := p.ops
	if len(ops) < spec.skip {
		return
	}
	ops = ops[spec.skip:]
	if spec.flagsAfter {
		for len(ops) > 0 && ops[0].exact() && strings.HasPrefix(ops[0].s, "-") {
			ops = ops[1:]
		}
	}
	if spec.shellAfter && len(ops) >= 2 && ops[0].exact() && (ops[0].s == "-c" || ops[0].s == "--command") {
		w.payload(inv, ops[1], name+" -c command", nil, false)
		return
	}
	sub := inv
	if spec.assigns {
		for len(ops) > 0 && ops[0].exact() && isAssignment(ops[0].s) {
			sub = withEnv(sub, ops[0].s)
			ops = ops[1:]
		}
	}
	if len(ops) == 0 {
		return
	}
	if spec.joinShell || spec.shellFlag != 0 && p.hasShort(spec.shellFlag) {
		if ops[0].exact() && ops[0].s == "-c" && len(ops) > 1 {
			ops = ops[1:]
		}
		w.payload(sub, joinAll(ops), name+" command", nil, false)
		return
	}
	w.invoke(sub.sub(ops, name))
}

func oneOfPrefix(name string, list []string) bool {
	for _, l := range list {
		if strings.HasPrefix(l, name) && len(name) >= 2 {
			return true
		}
	}
	return false
}

func joinAll(ops []field) field { return concatFields(ops, " ") }

// withEnv returns inv with NAME=value added to the environment of the
// command it runs.
func withEnv(inv *invocation, assign string) *invocation {
	name, val, _ := strings.Cut(assign, "=")
	n := *inv
	n.env = make(map[string]*binding, len(inv.env)+1)
	for k, v := range inv.env {
		n.env[k] = v
	}
	n.env[name] = &binding{alts: []value{{f: exactField(val)}}}
	return &n
}

// env runs a command with a changed environment; -S splits a string into
// arguments and -C changes directory.
func (w *walker) env(inv *invocation, name string) {
	args := inv.args()
	sub := inv
	dir := ""
	i := 0
loop:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			if a.mayBeOption() && a.prefix() != "" {
				continue
			}
			break
		}
		s := a.s
		switch {
		case s == "-" || s == "-i" || s == "-0" || s == "-v" || s == "--ignore-environment" || s == "--null" || s == "--debug":
		case s == "--":
			i++
			break loop
		case s == "-u" || s == "--unset":
			i++
		case s == "-C" || s == "--chdir":
			if i+1 < len(args) && args[i+1].exact() {
				dir = args[i+1].s
			}
			i++
		case strings.HasPrefix(s, "--chdir="):
			dir = s[len("--chdir="):]
		case s == "-S" || s == "--split-string" || strings.HasPrefix(s, "--split-string=") || strings.HasPrefix(s, "-S") || strings.HasPrefix(s, "-iS"):
			var str field
			switch {
			case strings.HasPrefix(s, "--split-string="):
				str = field{s: s[len("--split-string="):], pos: a.pos}
			case s == "-S" || s == "--split-string" || s == "-iS":
				if i+1 >= len(args) {
					return
				}
				i++
				str = args[i]
			default:
				str = field{s: s[strings.IndexByte(s, 'S')+1:], pos: a.pos}
			}
			parts := []field{str}
			for _, r := range args[i+1:] {
				parts = append(parts, quoteField(r))
			}
			w.payload(sub, concatFields(parts, " "), "env -S string", nil, false)
			return
		case strings.HasPrefix(s, "--"):
		case strings.HasPrefix(s, "-"):
			// A cluster: -iu NAME, -C DIR.
			if c := s[len(s)-1]; c == 'u' || c == 'C' {
				if c == 'C' && i+1 < len(args) && args[i+1].exact() {
					dir = args[i+1].s
				}
				i++
			}
		case isAssignment(s):
			sub = withEnv(sub, s)
		default:
			break loop
		}
	}
	if i >= len(args) {
		return
	}
	if dir != "" {
		old := w.cwd
		switch {
		case strings.HasPrefix(dir, "/"):
			w.cwd = cleanPath(dir)
		case w.cwd != "":
			w.cwd = cleanPath(w.cwd + "/" + dir)
		}
		defer func() { w.cwd = old }()
	}
	w.invoke(sub.sub(args[i:], name))
}

// quoteField quotes an exact argument so that a shell parse gives it back.
func quoteField(f field) field {
	if !f.exact() {
		return f
	}
	return field{s: "'" + strings.ReplaceAll(f.s, "'", `'\''`) + "'", pos: f.pos}
}

var xargsSyntax = optSyntax{
	argShort: "adEILnPs",
	argLong:  []string{"arg-file", "delimiter", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var", "replace", "eof"},
	posix:    true,
}

// xargs runs a command with arguments read from stdin. Known input (echo,
// printf, find) becomes arguments; unknown input is an unknown argument.
func (w *walker) xargs(inv *invocation, name string) {
	p := parseArgs(inv.args(), &xargsSyntax)
	cmd := p.ops
	if len(cmd) == 0 {
		cmd = []field{exactField("echo")}
	}
	replace := ""
	if v, ok := p.val('I', "replace"); ok && v.exact() {
		replace = v.s
	}
	for _, s := range inv.args() {
		if s.exact() && strings.HasPrefix(s.s, "-i") && !strings.HasPrefix(s.s, "--") {
			replace = "{}"
			if len(s.s) > 2 {
				replace = s.s[2:]
			}
		}
		if s.exact() && s.s == "--" {
			break
		}
	}
	var items []field
	known, rec := false, false
	src := inv.stdin
	if f, ok := p.val('a', "arg-file"); ok && !(f.exact() && isStdinPath(f.s) && f.s != "-") {
		src = w.fileSource(f)
	}
	if src != nil {
		switch {
		case src.items != nil:
			items, known, rec = src.items, true, src.findRec
		case src.has && !src.text.exact():
			known = true
			items = splitPattern(src.text)
		case src.has && src.text.exact():
			known = true
			sep := ""
			if p.hasShort('0') || p.hasLong("null", 2) {
				sep = "\x00"
			}
			if d, ok := p.val('d', "delimiter"); ok && d.exact() {
				sep = ansiC(d.s)
			}
			var words []string
			if sep == "" {
				words = strings.Fields(src.text.s)
			} else {
				words = strings.Split(src.text.s, sep)
			}
			for _, word := range words {
				word = strings.Trim(word, `"'`)
				if word != "" {
					items = append(items, field{s: word, pos: src.text.pos})
				}
			}
		}
	}
	if !known || len(items) > 64 {
		items = []field{unknownField(0)}
	}
	sub := inv.sub(nil, name)
	sub.stdin = nil
	sub.rec = inv.rec || rec
	if replace != "" {
		for k, it := range items {
			if k >= 16 {
				break
			}
			argv := make([]field, len(cmd))
			for i, c := range cmd {
				argv[i] = substField(c, replace, it)
			}
			s := *sub
			s.argv = argv
			w.invoke(&s)
		}
		return
	}
	argv := append(append([]field{}, cmd...), items...)
	sub.argv = argv
	w.invoke(sub)
}

// busybox and toybox run their first argument as an applet.
func (w *walker) busybox(inv *invocation, name string) {
	args := inv.args()
	if len(args) == 0 || args[0].exact() && strings.HasPrefix(args[0].s, "-") {
		return
	}
	w.invoke(inv.sub(args, name))
}

// watch runs its arguments through sh -c repeatedly.
func (w *walker) watch(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "nq", argLong: []string{"interval", "equexit"}, posix: true})
	if len(p.ops) == 0 {
		return
	}
	if p.has("x", "exec") {
		w.invoke(inv.sub(p.ops, name))
		return
	}
	w.payload(inv, joinAll(p.ops), "watch command", nil, false)
}

// ssh runs its command arguments through the remote user's shell.
func (w *walker) ssh(inv *invocation, name string) {
	w.sshOpts(inv, name)
	p := parseArgs(inv.args(), &optSyntax{argShort: "BbcDEeFIiJLlmOoPpQRSWw", posix: true})
	if len(p.ops) < 2 {
		return
	}
	w.payload(inv, joinAll(p.ops[1:]), "ssh remote command", nil, false)
}

// parallel runs a command template for each argument after ::: (or each
// line of stdin) through a shell.
func (w *walker) parallel(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "jSaLldEIn", argLong: []string{"jobs", "sshlogin", "arg-file", "max-args", "delimiter", "workdir", "joblog", "results", "timeout", "tmpdir", "colsep", "tag-string"}, posix: true})
	var tmpl, items []field
	sep := -1
	for i, o := range p.ops {
		if o.exact() && strings.HasPrefix(o.s, ":::") {
			sep = i
			break
		}
	}
	if sep >= 0 {
		tmpl = p.ops[:sep]
		for _, o := range p.ops[sep+1:] {
			if o.exact() && strings.HasPrefix(o.s, ":::") {
				continue
			}
			items = append(items, o)
		}
	} else {
		tmpl = p.ops
		if src := inv.stdin; src != nil && src.has && src.text.exact() {
			for _, l := range strings.Split(src.text.s, "\n") {
				if l != "" {
					items = append(items, field{s: l, pos: src.text.pos})
				}
			}
		} else {
			items = []field{unknownField(0)}
		}
	}
	for k, it := range items {
		if k >= 16 {
			break
		}
		var text field
		switch {
		case len(tmpl) == 0:
			text = it
		default:
			t := joinAll(tmpl)
			if t.exact() && strings.Contains(t.s, "{}") {
				text = substField(t, "{}", quoteField(it))
			} else {
				text = joinFields(t, quoteField(it), " ")
			}
		}
		w.payload(inv, text, "parallel command", nil, true)
	}
}

// splitPattern splits a partly known text at its literal white space, as
// xargs splits its input.
func splitPattern(f field) []field {
	var out []field
	start := 0
	flush := func(end int) {
		if end > start {
			seg := f.toks[start:end]
			nf := field{pos: f.pos, taint: f.taint}
			if allLit(seg) {
				nf.s = litString(seg)
			} else {
				nf.toks, nf.s = seg, tokString(seg)
			}
			out = append(out, nf)
		}
		start = end + 1
	}
	for i, k := range f.toks {
		if k.kind == tLit && (k.b == ' ' || k.b == '\t' || k.b == '\n') {
			flush(i)
		}
	}
	flush(len(f.toks))
	return out
}
