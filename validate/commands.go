package validate

import (
	"strings"
)

// commandTable maps command names to their checks. It is a constant table:
// never modified after initialisation.
var commandTable = map[string]handler{
	// Deleting.
	"rm":       (*walker).rm,
	"unlink":   (*walker).rm,
	"find":     (*walker).find,
	"rsync":    (*walker).rsync,
	"shred":    (*walker).shred,
	"truncate": (*walker).truncate,
	"mv":       (*walker).mv,

	// Permissions.
	"chmod":   (*walker).chperm,
	"chown":   (*walker).chperm,
	"chgrp":   (*walker).chperm,
	"chattr":  (*walker).chperm,
	"setfacl": (*walker).chperm,
	"chcon":   (*walker).chperm,

	// Writers.
	"cp":       (*walker).copyLike,
	"install":  (*walker).copyLike,
	"ln":       (*walker).copyLike,
	"dd":       (*walker).dd,
	"dcfldd":   (*walker).dd,
	"ddrescue": (*walker).ddrescue,
	"tee":      (*walker).tee,
	"sponge":   (*walker).tee,
	"sed":      (*walker).sed,
	"curl":     (*walker).curl,
	"wget":     (*walker).wget,
	"wget2":    (*walker).wget,

	// Disks.
	"mkfs": (*walker).disk, "mke2fs": (*walker).disk, "mkswap": (*walker).disk, "mkdosfs": (*walker).disk,
	"mkntfs": (*walker).disk, "mkexfatfs": (*walker).disk, "mkudffs": (*walker).disk, "mkreiserfs": (*walker).disk,
	"jfs_mkfs": (*walker).disk, "fdisk": (*walker).disk, "sfdisk": (*walker).disk, "gdisk": (*walker).disk,
	"sgdisk": (*walker).disk, "cgdisk": (*walker).disk, "cfdisk": (*walker).disk, "parted": (*walker).disk,
	"wipefs": (*walker).disk, "blkdiscard": (*walker).disk, "nvme": (*walker).disk, "diskutil": (*walker).disk,
	"zpool": (*walker).disk, "cryptsetup": (*walker).disk, "mdadm": (*walker).disk, "hdparm": (*walker).disk,
	"badblocks": (*walker).disk, "flashrom": (*walker).disk, "sg_format": (*walker).disk,
	"pvcreate": (*walker).disk, "pvremove": (*walker).disk, "vgremove": (*walker).disk, "lvremove": (*walker).disk,
	"gpart": (*walker).disk,

	// Power.
	"shutdown": (*walker).power, "reboot": (*walker).power, "halt": (*walker).power, "poweroff": (*walker).power,
	"init": (*walker).power, "telinit": (*walker).power, "systemctl": (*walker).power, "kexec": (*walker).power,
	"kill": (*walker).power, "killall5": (*walker).power, "loginctl": (*walker).power, "pmset": (*walker).power,

	// Programs with options that run shell commands.
	"tar": (*walker).tar, "bsdtar": (*walker).tar, "git": (*walker).git, "vim": (*walker).vim,
	"vi": (*walker).vim, "nvim": (*walker).vim, "ex": (*walker).vim, "view": (*walker).vim,
	"scp": (*walker).sshOpts, "sftp": (*walker).sshOpts, "alias": (*walker).alias,
	"killall": (*walker).power, "pkill": (*walker).power,
	"nc": (*walker).netcat, "ncat": (*walker).netcat, "netcat": (*walker).netcat, "socat": (*walker).socat,

	// Readers of raw devices.
	"cat": (*walker).reader, "tac": (*walker).reader, "head": (*walker).reader, "tail": (*walker).reader,
	"od": (*walker).reader, "xxd": (*walker).reader, "hexdump": (*walker).reader, "hd": (*walker).reader,
	"strings": (*walker).reader, "base64": (*walker).reader, "base32": (*walker).reader, "pv": (*walker).reader,
	"less": (*walker).reader, "more": (*walker).reader, "nl": (*walker).reader, "gzip": (*walker).reader,
	"xz": (*walker).reader, "zstd": (*walker).reader, "bzip2": (*walker).reader, "lz4": (*walker).reader,

	// Privilege.
	"sudo": (*walker).sudo, "doas": (*walker).sudo, "su": (*walker).sudo, "pkexec": (*walker).sudo,
	"run0": (*walker).sudo, "sudoedit": (*walker).sudo,

	// Shells and interpreters.
	"sh": (*walker).shell, "bash": (*walker).shell, "zsh": (*walker).shell, "dash": (*walker).shell,
	"ksh": (*walker).shell, "mksh": (*walker).shell, "ash": (*walker).shell, "yash": (*walker).shell,
	"rbash": (*walker).shell, "fish": (*walker).shell, "tcsh": (*walker).shell, "csh": (*walker).shell,
	"lksh": (*walker).shell, "pdksh": (*walker).shell, "posh": (*walker).shell, "oksh": (*walker).shell,
	"python": (*walker).interp, "perl": (*walker).interp, "ruby": (*walker).interp, "node": (*walker).interp,
	"nodejs": (*walker).interp, "bun": (*walker).interp, "php": (*walker).interp, "lua": (*walker).interp,
	"awk": (*walker).interp, "gawk": (*walker).interp, "mawk": (*walker).interp, "nawk": (*walker).interp,
	"eval": (*walker).eval, "source": (*walker).source, ".": (*walker).source, "trap": (*walker).trap,
	"at": (*walker).at, "batch": (*walker).at, "crontab": (*walker).crontab,

	// Wrappers.
	"exec": (*walker).wrapper, "command": (*walker).wrapper, "builtin": (*walker).wrapper,
	"env": (*walker).env, "xargs": (*walker).xargs, "busybox": (*walker).busybox, "toybox": (*walker).busybox,
	"watch": (*walker).watch, "ssh": (*walker).ssh, "parallel": (*walker).parallel,
	"nice": (*walker).wrapper, "nohup": (*walker).wrapper, "setsid": (*walker).wrapper, "timeout": (*walker).wrapper,
	"time": (*walker).wrapper, "stdbuf": (*walker).wrapper, "ionice": (*walker).wrapper, "chrt": (*walker).wrapper,
	"taskset": (*walker).wrapper, "chroot": (*walker).wrapper, "nsenter": (*walker).wrapper, "unshare": (*walker).wrapper,
	"setpriv": (*walker).wrapper, "numactl": (*walker).wrapper, "prlimit": (*walker).wrapper, "cgexec": (*walker).wrapper,
	"fakeroot": (*walker).wrapper, "faketime": (*walker).wrapper, "strace": (*walker).wrapper, "ltrace": (*walker).wrapper,
	"valgrind": (*walker).wrapper, "catchsegv": (*walker).wrapper, "unbuffer": (*walker).wrapper, "torsocks": (*walker).wrapper,
	"proxychains": (*walker).wrapper, "proxychains4": (*walker).wrapper, "systemd-run": (*walker).wrapper,
	"xvfb-run": (*walker).wrapper, "dbus-run-session": (*walker).wrapper, "gosu": (*walker).wrapper,
	"su-exec": (*walker).wrapper, "chpst": (*walker).wrapper, "nocache": (*walker).wrapper, "eatmydata": (*walker).wrapper,
	"flock": (*walker).wrapper, "script": (*walker).wrapper, "sg": (*walker).wrapper, "runuser": (*walker).wrapper,
	"entr": (*walker).wrapper, "nix-shell": (*walker).wrapper, "caffeinate": (*walker).wrapper, "firejail": (*walker).wrapper,
	"setarch": (*walker).wrapper, "linux32": (*walker).wrapper, "linux64": (*walker).wrapper, "rlwrap": (*walker).wrapper,
	"sem": (*walker).wrapper, "tsp": (*walker).wrapper, "daemonize": (*walker).wrapper, "start-stop-daemon": (*walker).wrapper,
	"poetry": (*walker).wrapper, "pipenv": (*walker).wrapper, "uv": (*walker).wrapper, "bundle": (*walker).wrapper,
	"conda": (*walker).wrapper, "mamba": (*walker).wrapper, "micromamba": (*walker).wrapper, "pnpm": (*walker).wrapper,
	"direnv": (*walker).wrapper, "dotenv": (*walker).wrapper, "with-contenv": (*walker).wrapper, "tini": (*walker).wrapper,
	"dumb-init": (*walker).wrapper,

	// Builtins that change the checker's state.
	"cd": (*walker).cd, "pushd": (*walker).cd, "popd": (*walker).cd,
	"read": (*walker).readVars, "mapfile": (*walker).readVars, "readarray": (*walker).readVars,
	"getopts": (*walker).readVars, "printf": (*walker).readVars,
	"unset": (*walker).unset, "shift": (*walker).shift, "set": (*walker).set,
}

// args returns the arguments after the command name.
func (inv *invocation) args() []field { return inv.argv[1:] }

func (w *walker) rm(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{})
	rec := p.hasShort('r') || p.hasShort('R') || p.hasLong("recursive", 3) || inv.rec || p.unknown
	label := name
	if rec && name == "rm" {
		label = "rm -r"
	}
	for _, t := range p.ops {
		w.deleteTarget(inv, label, t, rec, false)
	}
}

// findExpr is the parsed form of a find command line.
type findExpr struct {
	starts   []field
	narrowed bool // a name or path test limits what matches
	deletes  bool
	execs    [][]field
	writes   []field // -fprint FILE and friends
}

func parseFind(args []field) findExpr {
	var fe findExpr
	i := 0
	for i < len(args) && args[i].exact() {
		s := args[i].s
		switch {
		case s == "-H" || s == "-L" || s == "-P":
			i++
			continue
		case s == "-D":
			i += 2
			continue
		case strings.HasPrefix(s, "-O") && len(s) > 2:
			i++
			continue
		}
		break
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a.exact() && (strings.HasPrefix(a.s, "-") && a.s != "-" || a.s == "(" || a.s == ")" || a.s == "!" || a.s == ",") {
			break
		}
		fe.starts = append(fe.starts, a)
	}
	if len(fe.starts) == 0 {
		fe.starts = []field{{s: "."}}
	}
	complex := false
	expr := args[min(i, len(args)):]
	for j := 0; j < len(expr); j++ {
		a := expr[j]
		if !a.exact() {
			continue
		}
		switch a.s {
		case "-o", "-or", "!", "-not", ",":
			complex = true
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname":
			if j+1 < len(expr) {
				if !pureWildcard(expr[j+1]) {
					fe.narrowed = true
				}
				j++
			}
		case "-inum", "-samefile":
			fe.narrowed = true
			j++
		case "-delete":
			fe.deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			k := j + 1
			for k < len(expr) && !(expr[k].exact() && (expr[k].s == ";" || expr[k].s == "+")) {
				k++
			}
			fe.execs = append(fe.execs, expr[j+1:k])
			j = k
		case "-fprint", "-fprint0", "-fls":
			if j+1 < len(expr) {
				fe.writes = append(fe.writes, expr[j+1])
				j++
			}
		case "-fprintf":
			if j+1 < len(expr) {
				fe.writes = append(fe.writes, expr[j+1])
				j += 2
			}
		}
	}
	if complex {
		fe.narrowed = false
	}
	return fe
}

// pureWildcard reports whether a find pattern matches every name.
func pureWildcard(f field) bool {
	if !f.exact() {
		return false
	}
	return strings.Trim(f.s, "*?/.") == "" || f.s == ".*" || f.s == "^.*$"
}

func (w *walker) find(inv *invocation, name string) {
	fe := parseFind(inv.args())
	for _, f := range fe.writes {
		w.writeTarget(inv, f, "find -fprint")
	}
	if fe.deletes && !fe.narrowed {
		for _, sp := range fe.starts {
			w.deleteTarget(inv, "find -delete", sp, true, false)
		}
	}
	for _, ex := range fe.execs {
		if len(ex) == 0 {
			continue
		}
		starts := fe.starts
		if fe.narrowed {
			starts = []field{unknownField(unkNoFlag | unkNonEmpty)}
		}
		for k, sp := range starts {
			if k >= 8 {
				break
			}
			argv := make([]field, len(ex))
			for i, a := range ex {
				argv[i] = substField(a, "{}", sp)
			}
			sub := inv.sub(argv, "find -exec")
			sub.rec = !fe.narrowed
			sub.stdin = nil
			w.invoke(sub)
		}
	}
}

var rsyncSyntax = optSyntax{
	argShort: "efTBM",
	argLong: []string{"rsh", "filter", "exclude", "include", "exclude-from", "include-from", "files-from",
		"temp-dir", "log-file", "block-size", "chmod", "chown", "password-file", "remote-option",
		"partial-dir", "backup-dir", "suffix", "compare-dest", "copy-dest", "link-dest", "max-size",
		"min-size", "timeout", "port", "bwlimit", "out-format", "info", "debug", "iconv", "usermap",
		"groupmap", "contimeout", "sockopts", "compress-level", "skip-compress", "modify-window",
		"max-delete", "checksum-choice", "compress-choice", "rsync-path", "log-file-format"},
}

func (w *walker) rsync(inv *invocation, name string) {
	p := parseArgs(inv.args(), &rsyncSyntax)
	if e, ok := p.val('e', "rsh"); ok {
		w.payload(inv, e, "rsync -e command", nil, true)
	}
	del := false
	for _, l := range p.long {
		if strings.HasPrefix(l, "del") {
			del = true
		}
	}
	removeSrc := p.hasLong("remove-source-files", 8)
	if len(p.ops) < 2 {
		return
	}
	local := func(f field) bool {
		s := f.prefix()
		if strings.HasPrefix(s, "rsync://") {
			return false
		}
		c := strings.IndexByte(s, ':')
		return c < 0 || strings.IndexByte(s[:c], '/') >= 0
	}
	dest := p.ops[len(p.ops)-1]
	if local(dest) {
		w.destination(inv, "rsync", p.ops[:len(p.ops)-1], dest, true)
	}
	if del && local(dest) {
		w.deleteTarget(inv, "rsync --delete", dest, true, inv.dyn)
	}
	if removeSrc {
		for _, s := range p.ops[:len(p.ops)-1] {
			if local(s) {
				w.deleteTarget(inv, "rsync --remove-source-files", s, true, inv.dyn)
			}
		}
	}
}

func (w *walker) shred(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "ns", argLong: []string{"iterations", "size", "random-source"}})
	for _, f := range p.ops {
		t := w.target(f)
		if t.none() {
			continue
		}
		if d, ok := w.deviceHit(t); ok {
			w.report(inv, RuleRawDeviceWrite, "shred overwrites the raw device "+d+at(f.pos))
			continue
		}
		if h, ok := w.protectedHit(t); ok && (h.all || inv.rec) {
			w.report(inv, RuleRecursiveDeleteRoot, "shred would destroy every file of the protected root "+showPath(h.root)+" ("+f.show()+at(f.pos)+")")
			continue
		}
		if c, ok := w.criticalHit(t); ok {
			w.report(inv, RuleCriticalFileWrite, "shred destroys the critical file "+c+at(f.pos))
		}
	}
}

func (w *walker) truncate(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "sr", argLong: []string{"size", "reference"}})
	for _, f := range p.ops {
		w.writeTarget(inv, f, "truncate")
	}
}

func (w *walker) mv(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "tS", argLong: []string{"target-directory", "suffix"}})
	srcs, dest, hasDest := p.ops, field{}, false
	if d, ok := p.val('t', "target-directory"); ok {
		dest, hasDest = d, true
	} else if len(srcs) >= 2 {
		dest, hasDest = srcs[len(srcs)-1], true
		srcs = srcs[:len(srcs)-1]
	}
	for _, s := range srcs {
		t := w.target(s)
		if t.none() {
			continue
		}
		if h, ok := w.protectedHit(t); ok {
			if h.all {
				w.report(inv, RuleMoveRoot, "mv would move every entry of the protected root "+showPath(h.root)+" ("+s.show()+at(s.pos)+")")
			} else {
				w.report(inv, RuleMoveRoot, "mv would move the protected root "+showPath(h.root)+" ("+s.show()+at(s.pos)+")")
			}
			continue
		}
		if c, ok := w.criticalHit(t); ok {
			w.report(inv, RuleCriticalFileWrite, "mv would move the critical file "+c+" away"+at(s.pos))
		}
	}
	if hasDest {
		w.destination(inv, "mv", srcs, dest, false)
	}
}

// destination checks the target of cp, mv, install and ln, both as a file
// and as a directory that receives the sources.
func (w *walker) destination(inv *invocation, cmd string, srcs []field, dest field, device bool) {
	t := w.target(dest)
	if t.none() {
		return
	}
	if device {
		if d, ok := w.deviceHit(t); ok {
			w.report(inv, RuleRawDeviceWrite, cmd+" writes to the raw device "+d+at(dest.pos))
			return
		}
	}
	if c, ok := w.criticalHit(t); ok {
		w.report(inv, RuleCriticalFileWrite, cmd+" overwrites the critical file "+c+at(dest.pos))
		return
	}
	if t.lit == "" {
		return
	}
	for _, s := range srcs {
		if !s.exact() || s.s == "" {
			continue
		}
		base := strings.TrimRight(s.s, "/")
		base = base[strings.LastIndexByte(base, '/')+1:]
		if base == "" || base == "." || base == ".." {
			continue
		}
		if c, ok := w.criticalHit(target{lit: cleanPath(t.lit + "/" + base)}); ok {
			w.report(inv, RuleCriticalFileWrite, cmd+" overwrites the critical file "+c+at(dest.pos))
			return
		}
	}
}

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
	for _, f := range p.ops {
		w.writeTarget(inv, f, name)
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
		if sc.exact() {
			for _, cmd := range sedExecs(sc.s) {
				w.payload(inv, field{s: cmd, pos: sc.pos}, "sed e command", nil, true)
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

// chperm checks chmod, chown, chgrp, chattr, setfacl and chcon.
func (w *walker) chperm(inv *invocation, name string) {
	args := inv.args()
	var syn optSyntax
	var modes []field
	switch name {
	case "chmod":
		// chmod takes modes such as -w or -rwx that look like options.
		rest := make([]field, 0, len(args))
		for _, a := range args {
			if a.exact() && len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.Trim(a.s[1:], "Rcfv") != "" && strings.Trim(a.s[1:], "rwxXstugoa+-=,01234567") == "" {
				modes = append(modes, a)
				continue
			}
			rest = append(rest, a)
		}
		args = rest
		syn = optSyntax{argLong: []string{"reference"}}
	case "chown", "chgrp":
		syn = optSyntax{argLong: []string{"from", "reference"}}
	case "chattr":
		rest := make([]field, 0, len(args))
		for _, a := range args {
			if a.exact() && len(a.s) > 1 && (a.s[0] == '+' || a.s[0] == '=' || a.s[0] == '-' && strings.Trim(a.s[1:], "RVf") != "" && a.s[1] != 'v' && a.s[1] != 'p') {
				modes = append(modes, a)
				continue
			}
			rest = append(rest, a)
		}
		args = rest
		syn = optSyntax{argShort: "vp"}
	case "setfacl":
		syn = optSyntax{argShort: "mxMX", argLong: []string{"modify", "remove", "modify-file", "remove-file", "set", "set-file"}}
	case "chcon":
		syn = optSyntax{argShort: "urtl", argLong: []string{"user", "role", "type", "range", "reference"}}
	}
	p := parseArgs(args, &syn)
	rec := p.hasShort('R') || p.hasLong("recursive", 3) || inv.rec || p.unknown
	ops := p.ops
	switch name {
	case "chmod":
		if len(modes) == 0 && !p.hasLong("reference", 3) && len(ops) > 0 {
			ops = ops[1:]
		}
	case "chown", "chgrp":
		if !p.hasLong("reference", 3) && len(ops) > 0 {
			ops = ops[1:]
		}
	case "chcon":
		if !p.hasLong("reference", 3) && len(p.vals) == 0 && len(ops) > 0 {
			ops = ops[1:]
		}
	}
	for _, t := range ops {
		w.chpermTarget(inv, name, t, rec)
	}
}

func (w *walker) chpermTarget(inv *invocation, cmd string, f field, rec bool) {
	t := w.target(f)
	if t.none() {
		return
	}
	h, ok := w.protectedHit(t)
	if !ok || h.root == homeDir {
		// chown -R "$USER" ~ is the usual repair, not a risk to the machine.
		return
	}
	switch {
	case h.all:
		w.report(inv, RuleRecursiveChmodRoot, cmd+" would change every entry of the protected root "+showPath(h.root)+" ("+f.show()+at(f.pos)+")")
	case rec:
		w.report(inv, RuleRecursiveChmodRoot, cmd+" -R would change the protected root "+showPath(h.root)+" and everything below it ("+f.show()+at(f.pos)+")")
	}
}

// disk checks filesystem, partitioning and wiping tools. Read-only forms
// (fdisk -l, parted -l, sgdisk -p, wipefs without -a) are allowed.
func (w *walker) disk(inv *invocation, name string) {
	args := inv.args()
	if onlyInfo(args) {
		return
	}
	p := parseArgs(args, &optSyntax{})
	base := name
	if inv.argv[0].exact() {
		base = inv.argv[0].s[strings.LastIndexByte(inv.argv[0].s, '/')+1:]
	}
	what := "creates a filesystem"
	sub := ""
	if len(p.ops) > 0 && p.ops[0].exact() {
		sub = p.ops[0].s
	}
	switch name {
	case "fdisk", "gdisk":
		if p.has("lhV", "list", "help", "version") {
			return
		}
		what = "partitions a disk"
	case "sfdisk":
		if p.has("ldsgVJFT", "list", "dump", "show-size", "show-geometry", "verify", "json", "list-free", "list-types") &&
			!p.has("NA", "delete", "reorder", "activate", "part-type", "part-label", "part-uuid", "part-attrs", "relocate", "move-data", "backup") {
			return
		}
		what = "partitions a disk"
	case "sgdisk":
		if p.has("P", "pretend") || !p.has("oZzndcgtxNcGCAmhu", "clear", "zap-all", "zap", "new", "delete", "change-name", "mbrtogpt", "typecode", "largest-new", "randomize-guids", "transform-bsd", "load-backup", "replicate", "move-second-header", "hybrid", "gpttombr", "attributes", "align-end", "partition-guid", "disk-guid") {
			return
		}
		what = "partitions a disk"
	case "cgdisk", "cfdisk":
		what = "partitions a disk"
	case "parted":
		if p.has("l", "list") {
			return
		}
		ro := len(p.ops) >= 1
		for _, c := range p.ops[min(1, len(p.ops)):] {
			if !c.exact() || (c.s != "print" && c.s != "p" && c.s != "unit" && c.s != "help" && c.s != "version" && c.s != "s" && c.s != "B" && c.s != "MiB" && c.s != "GiB" && c.s != "%" && c.s != "cyl" && c.s != "chs" && c.s != "compact") {
				ro = false
			}
		}
		if ro && len(p.ops) >= 2 {
			return
		}
		what = "partitions a disk"
	case "wipefs":
		if !p.has("ao", "all", "offset") {
			return
		}
		what = "wipes filesystem signatures"
	case "blkdiscard":
		what = "discards every block of a device"
	case "nvme":
		if !oneOf(sub, "format", "sanitize", "write-zeroes", "delete-ns", "detach-ns", "create-ns", "fw-download", "fw-commit") {
			return
		}
		what = "formats or erases an NVMe device"
	case "diskutil":
		if !strings.HasPrefix(strings.ToLower(sub), "erase") && !oneOf(sub, "zeroDisk", "randomDisk", "secureErase", "partitionDisk", "reformat", "apfs", "appleRAID", "cs", "splitPartition", "mergePartitions", "resizeVolume", "addPartition") {
			return
		}
		if sub == "apfs" && (len(p.ops) < 2 || !p.ops[1].exact() || !oneOf(p.ops[1].s, "deleteContainer", "deleteVolume", "eraseVolume", "createContainer", "resizeContainer", "deleteVolumeGroup")) {
			return
		}
		what = "erases or partitions a disk"
	case "zpool":
		if !oneOf(sub, "destroy", "labelclear", "create", "split") {
			return
		}
		what = "destroys or creates a storage pool"
	case "cryptsetup":
		found := false
		for _, o := range p.ops {
			if o.exact() && oneOf(o.s, "luksFormat", "erase", "luksErase", "reencrypt", "tcryptDump", "luksKillSlot", "luksRemoveKey") {
				found = true
			}
		}
		if !found {
			return
		}
		what = "formats or erases an encrypted volume"
	case "mdadm":
		if !p.has("CB", "create", "zero-superblock", "build") {
			return
		}
		what = "creates a RAID array or wipes its superblock"
	case "hdparm":
		if !p.hasLong("security-erase", 10) && !p.hasLong("security-erase-enhanced", 10) && !p.hasLong("trim-sector-ranges", 6) &&
			!p.hasLong("write-sector", 7) && !p.hasLong("make-bad-sector", 6) && !p.hasLong("fwdownload", 5) {
			return
		}
		what = "erases or writes a disk through ATA commands"
	case "badblocks":
		if p.hasShort('w') {
			w.report(inv, RuleRawDeviceWrite, "badblocks -w overwrites every block of "+opsShow(p.ops))
		}
		return
	case "flashrom":
		if !p.has("wEe", "write", "erase") {
			return
		}
		what = "rewrites firmware"
	case "pvcreate", "pvremove", "vgremove", "lvremove":
		what = "creates or removes LVM volumes"
	case "gpart":
		if !oneOf(sub, "create", "destroy", "delete", "add", "resize") {
			return
		}
		what = "partitions a disk"
	case "mkswap":
		what = "creates a swap area"
	}
	if inv.dyn && len(p.ops) == 0 {
		return
	}
	msg := base + " " + what
	if len(p.ops) > 0 {
		msg += " (" + opsShow(p.ops) + at(p.ops[0].pos) + ")"
	} else if len(inv.argv) > 0 {
		msg += at(inv.argv[0].pos)
	}
	w.report(inv, RuleDiskFormat, msg)
}

func opsShow(ops []field) string {
	var parts []string
	for i, o := range ops {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, o.show())
	}
	return strings.Join(parts, " ")
}

func oneOf(s string, list ...string) bool {
	for _, l := range list {
		if s == l {
			return true
		}
	}
	return false
}

// power checks commands that change the power state of the machine.
func (w *walker) power(inv *invocation, name string) {
	args := inv.args()
	p := parseArgs(args, &optSyntax{argShort: "tspHMno", argLong: []string{"type", "signal", "property", "host", "machine", "lines", "output", "root", "kill-whom", "what", "job-mode", "state", "message", "reboot-argument", "timestamp", "boot-loader-menu", "boot-loader-entry", "when"}})
	pos := inv.argv[0].pos
	refuse := func(what string) {
		w.report(inv, RulePowerState, what+at(pos))
	}
	switch name {
	case "shutdown":
		if p.has("ck", "help", "show") {
			return
		}
		refuse("shutdown halts or reboots the machine")
	case "reboot", "halt", "poweroff":
		if p.has("", "help", "version") {
			return
		}
		refuse(name + " changes the power state of the machine")
	case "init", "telinit":
		if len(p.ops) > 0 && p.ops[0].exact() && oneOf(p.ops[0].s, "0", "1", "6", "s", "S", "single", "emergency", "rescue") {
			refuse(name + " " + p.ops[0].s + " halts, reboots or drops the machine to single-user mode")
		}
	case "systemctl", "loginctl":
		if len(p.ops) == 0 || !p.ops[0].exact() {
			return
		}
		verb := p.ops[0].s
		if oneOf(verb, "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "emergency", "rescue", "soft-reboot", "sleep") {
			refuse(name + " " + verb + " changes the power state of the machine")
			return
		}
		if oneOf(verb, "isolate", "start", "restart", "enable", "reload-or-restart", "try-restart") {
			for _, u := range p.ops[1:] {
				if u.exact() && oneOf(strings.TrimSuffix(u.s, ".target"), "poweroff", "reboot", "halt", "kexec", "rescue", "emergency", "shutdown", "sleep", "suspend", "hibernate", "soft-reboot", "ctrl-alt-del") {
					refuse(name + " " + verb + " " + u.s + " changes the power state of the machine")
					return
				}
			}
		}
	case "kexec":
		if p.has("e", "exec") || (len(p.ops) > 0 && !p.has("lpuSsh", "load", "unload", "help")) {
			refuse("kexec boots another kernel")
		}
	case "pmset":
		if len(p.ops) > 0 && p.ops[0].exact() && oneOf(p.ops[0].s, "sleepnow", "displaysleepnow", "restoredefaults") {
			refuse("pmset " + p.ops[0].s + " changes the power state of the machine")
		}
	case "killall5":
		refuse("killall5 signals every process")
	case "killall", "pkill":
		for _, o := range p.ops {
			if o.exact() && oneOf(o.s, "init", "systemd", "launchd") {
				refuse(name + " " + o.s + " kills the init process, which halts the machine")
				return
			}
		}
	case "kill":
		w.kill(inv)
	}
}

// kill refuses signals to init (pid 1) and to every process (pid -1).
func (w *walker) kill(inv *invocation) {
	args := inv.args()
	i := 0
	if i < len(args) && args[i].exact() {
		s := args[i].s
		switch {
		case s == "-l" || s == "-L" || s == "--list" || s == "--table":
			return
		case s == "-s" || s == "-n" || s == "--signal":
			i += 2
		case s == "--":
		case strings.HasPrefix(s, "-") && len(s) > 1:
			i++
		}
	}
	if i < len(args) && args[i].exact() && args[i].s == "--" {
		i++
	}
	for _, a := range args[min(i, len(args)):] {
		if !a.exact() {
			continue
		}
		switch a.s {
		case "1":
			w.report(inv, RulePowerState, "kill 1 signals init, which halts the machine"+at(a.pos))
			return
		case "-1":
			w.report(inv, RulePowerState, "kill -1 signals every process"+at(a.pos))
			return
		}
	}
}

// sudo refuses privilege escalation unless the call allows it, then checks
// the command it runs.
func (w *walker) sudo(inv *invocation, name string) {
	if !w.opts.AllowSudo {
		w.report(inv, RuleSudo, name+" runs a command with other privileges and this call does not allow sudo"+at(inv.argv[0].pos))
	}
	switch name {
	case "su":
		p := parseArgs(inv.args(), &optSyntax{argShort: "cgGsw", argLong: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"}})
		for _, v := range p.vals {
			if v.name == "c" || strings.HasPrefix("command", v.name) && len(v.name) >= 2 || strings.HasPrefix("session-command", v.name) && len(v.name) >= 2 {
				w.payload(inv, v.val, "su -c", nil, false)
			}
		}
		return
	case "sudoedit":
		return
	}
	w.wrapper(inv, name)
}

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
	if strings.TrimSpace(text) == "" {
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

// interp checks interpreters given inline code: python -c, perl -e, node -e,
// awk programs, … for the shell commands and deletions they contain.
func (w *walker) interp(inv *invocation, name string) {
	args := inv.args()
	var code []field
	script := -1
	readsStdin := false
	lang := name
	switch name {
	case "gawk", "mawk", "nawk":
		lang = "awk"
	case "nodejs", "bun":
		lang = "node"
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
			}
		}
	}
	if lang == "awk" && len(code) == 0 && script >= 0 {
		code = append(code, args[script])
		script = -1
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
}

func (w *walker) eval(inv *invocation, name string) {
	args := inv.args()
	if len(args) > 0 && args[0].exact() && args[0].s == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	text := args[0]
	for _, a := range args[1:] {
		text = joinFields(text, a, " ")
	}
	w.payload(inv, text, "eval payload", w.positional(), false)
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

func (w *walker) cd(inv *invocation, name string) {
	args := inv.args()
	for len(args) > 0 && args[0].exact() && strings.HasPrefix(args[0].s, "-") && args[0].s != "-" {
		args = args[1:]
	}
	if name == "popd" {
		w.cwd = ""
		return
	}
	if len(args) == 0 {
		if name == "cd" {
			w.cwd = ""
			if h := w.homeValue(); h.exact() && strings.HasPrefix(h.s, "/") {
				w.cwd = cleanPath(h.s)
			}
		}
		return
	}
	d := args[0]
	switch {
	case !d.exact() || d.s == "-":
		w.cwd = ""
	case strings.HasPrefix(d.s, "/"):
		w.cwd = cleanPath(d.s)
	case w.cwd != "":
		w.cwd = cleanPath(w.cwd + "/" + d.s)
	}
}

func (w *walker) readVars(inv *invocation, name string) {
	args := inv.args()
	switch name {
	case "printf":
		if len(args) >= 2 && args[0].exact() && args[0].s == "-v" && args[1].exact() {
			if out, ok := printfOutput(args[2:]); ok {
				w.setVar(args[1].s, value{f: out})
			} else {
				w.setUnknown(args[1].s)
			}
		}
		return
	case "getopts":
		if len(args) >= 2 && args[1].exact() {
			w.setUnknown(args[1].s)
		}
		return
	}
	syn := optSyntax{argShort: "adinNptu"}
	if name != "read" {
		syn = optSyntax{argShort: "dnOsuCc"}
	}
	p := parseArgs(args, &syn)
	text, known := "", false
	if _, fd := p.val('u', ""); !fd && inv.stdin != nil && inv.stdin.has && inv.stdin.text.exact() {
		src := inv.stdin
		text, known = src.text.s, true
	}
	var names []string
	for _, o := range p.ops {
		if o.exact() {
			names = append(names, o.s)
		}
	}
	ifs := w.ifs()
	if name != "read" {
		arr := "MAPFILE"
		if len(names) > 0 {
			arr = names[0]
		}
		if !known {
			w.setUnknown(arr)
			return
		}
		var elems []field
		for _, l := range strings.SplitAfter(text, "\n") {
			if l == "" {
				continue
			}
			if p.hasShort('t') {
				l = strings.TrimSuffix(l, "\n")
			}
			elems = append(elems, exactField(l))
		}
		w.setVar(arr, value{arr: elems, isArr: true})
		return
	}
	line, _, _ := strings.Cut(text, "\n")
	if v, ok := p.val('a', ""); ok && v.exact() {
		if !known {
			w.setUnknown(v.s)
			return
		}
		var elems []field
		for _, word := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(ifs, r) }) {
			elems = append(elems, exactField(word))
		}
		w.setVar(v.s, value{arr: elems, isArr: true})
		return
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
	}
	if !known {
		for _, n := range names {
			w.setUnknown(n)
		}
		return
	}
	rest := strings.Trim(line, " \t")
	for i, n := range names {
		if i == len(names)-1 {
			w.setVar(n, value{f: exactField(strings.TrimRight(rest, " \t"))})
			break
		}
		rest = strings.TrimLeft(rest, " \t")
		word, after, _ := strings.Cut(rest, " ")
		w.setVar(n, value{f: exactField(word)})
		rest = after
	}
}

func (w *walker) unset(inv *invocation, name string) {
	for _, a := range inv.args() {
		if a.exact() && !strings.HasPrefix(a.s, "-") {
			w.setUnknown(a.s)
		}
	}
}

func (w *walker) shift(inv *invocation, name string) {
	if !w.hasArgs {
		return
	}
	n := 1
	if args := inv.args(); len(args) > 0 {
		if !args[0].exact() {
			w.hasArgs = false
			return
		}
		if k, err := atoi(args[0].s); err == nil && k >= 0 {
			n = k
		}
	}
	if n > len(w.args) {
		n = len(w.args)
	}
	w.args = w.args[n:]
}

func (w *walker) set(inv *invocation, name string) {
	args := inv.args()
	for i, a := range args {
		if !a.exact() {
			return
		}
		if a.s == "--" {
			w.hasArgs = true
			w.args = append([]field{}, args[i+1:]...)
			return
		}
		if !strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "+") {
			w.hasArgs = true
			w.args = append([]field{}, args[i:]...)
			return
		}
		if a.s == "-o" || a.s == "+o" {
			return
		}
	}
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

// tar deletes with --remove-files and runs commands with --to-command,
// --use-compress-program, --checkpoint-action=exec= and --info-script.
func (w *walker) tar(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "fCIFTXbLKNVgH", argLong: []string{"file", "directory", "use-compress-program", "info-script", "new-volume-script", "to-command", "files-from", "exclude-from", "checkpoint-action", "owner", "group", "mode", "transform", "xform", "exclude", "label", "newer", "after-date", "rsh-command", "format", "blocking-factor", "suffix", "index-file", "volno-file", "tape-length", "starting-file"}})
	for _, v := range p.vals {
		switch {
		case v.name == "I" || v.name == "F" || len(v.name) > 2 && (strings.HasPrefix("use-compress-program", v.name) || strings.HasPrefix("info-script", v.name) || strings.HasPrefix("new-volume-script", v.name) || strings.HasPrefix("to-command", v.name) || strings.HasPrefix("rsh-command", v.name)):
			w.payload(inv, v.val, "tar --"+v.name+" command", nil, true)
		case len(v.name) > 2 && strings.HasPrefix("checkpoint-action", v.name):
			if c, ok := keyValue(v.val, "exec="); ok {
				w.payload(inv, c, "tar --checkpoint-action command", nil, true)
			}
		}
	}
	if p.hasLong("remove-files", 4) {
		dir := ""
		if d, ok := p.val('C', "directory"); ok && d.exact() {
			dir = d.s
		}
		for _, f := range p.ops {
			if dir != "" && f.exact() && !strings.HasPrefix(f.s, "/") {
				f.s = dir + "/" + f.s
			}
			w.deleteTarget(inv, "tar --remove-files", f, true, false)
		}
	}
}

// gitShellKeys are configuration keys whose values git runs through a
// shell.
var gitShellKeys = []string{"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass",
	"sequence.editor", "diff.external", "gpg.program", "credential.helper", "pager.", "alias.", "filter.",
	"merge.tool", "mergetool.", "difftool.", "uploadpack.packobjectshook", "core.hookspath"}

// git checks -c KEY=VALUE and git config values that git runs as shell
// commands, and --upload-pack, --receive-pack and --exec.
func (w *walker) git(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		s := a.s
		var kv string
		switch {
		case s == "-c" && i+1 < len(args) && args[i+1].exact():
			i++
			kv = args[i].s
		case strings.HasPrefix(s, "-c") && len(s) > 2:
			kv = s[2:]
		case strings.HasPrefix(s, "--upload-pack=") || strings.HasPrefix(s, "--receive-pack=") || strings.HasPrefix(s, "--exec="):
			v := field{s: s[strings.IndexByte(s, '=')+1:], pos: a.pos}
			w.payload(inv, v, "git "+s[:strings.IndexByte(s, '=')]+" command", nil, true)
			continue
		case (s == "--upload-pack" || s == "--receive-pack" || s == "--exec" || s == "-u") && i+1 < len(args):
			i++
			w.payload(inv, args[i], "git "+s+" command", nil, true)
			continue
		case s == "config" && i+2 < len(args):
			// git config [--global] KEY VALUE
			rest := args[i+1:]
			for len(rest) > 0 && rest[0].exact() && strings.HasPrefix(rest[0].s, "-") {
				rest = rest[1:]
			}
			if len(rest) >= 2 && rest[0].exact() {
				w.gitValue(inv, rest[0].s, rest[1])
			}
			return
		default:
			continue
		}
		if k, v, ok := strings.Cut(kv, "="); ok {
			w.gitValue(inv, k, field{s: v, pos: a.pos})
		}
	}
}

func (w *walker) gitValue(inv *invocation, key string, v field) {
	key = strings.ToLower(key)
	for _, k := range gitShellKeys {
		if key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) {
			if v.exact() {
				v.s = strings.TrimPrefix(v.s, "!")
			}
			w.payload(inv, v, "git "+key+" command", nil, true)
			return
		}
	}
}

// vim runs ex commands from -c and +; :!cmd runs a shell command.
func (w *walker) vim(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		var cmd string
		switch {
		case (a.s == "-c" || a.s == "--cmd") && i+1 < len(args) && args[i+1].exact():
			i++
			cmd = args[i].s
		case strings.HasPrefix(a.s, "+") && len(a.s) > 1:
			cmd = a.s[1:]
		default:
			continue
		}
		cmd = strings.TrimLeft(cmd, ": ")
		if rest, ok := strings.CutPrefix(cmd, "!"); ok {
			w.payload(inv, field{s: rest, pos: a.pos}, name+" :! command", nil, true)
		}
	}
}

// sshOpts checks -o ProxyCommand=… and LocalCommand, which ssh, scp and
// sftp run through a local shell.
func (w *walker) sshOpts(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		opt := ""
		switch {
		case a.s == "-o" && i+1 < len(args) && args[i+1].exact():
			i++
			opt = args[i].s
		case strings.HasPrefix(a.s, "-o") && len(a.s) > 2:
			opt = a.s[2:]
		default:
			continue
		}
		key, val, ok := strings.Cut(opt, "=")
		if !ok {
			key, val, ok = strings.Cut(opt, " ")
		}
		key = strings.ToLower(strings.TrimSpace(key))
		if ok && (key == "proxycommand" || key == "localcommand" || key == "knownhostscommand") {
			w.payload(inv, field{s: strings.TrimSpace(val), pos: a.pos}, name+" "+key, nil, true)
		}
	}
}

// alias values run as commands when aliases are expanded (shopt -s
// expand_aliases).
func (w *walker) alias(inv *invocation, name string) {
	for _, a := range inv.args() {
		if !a.exact() {
			continue
		}
		if _, v, ok := strings.Cut(a.s, "="); ok {
			w.payload(inv, field{s: v, pos: a.pos}, "alias", nil, true)
		}
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

// netcat with -e or -c connects a program to a network peer: a remote
// shell.
func (w *walker) netcat(inv *invocation, name string) {
	args := inv.args()
	for i, a := range args {
		if !a.exact() {
			continue
		}
		switch {
		case oneOf(a.s, "-e", "-c", "--exec", "--sh-exec", "--lua-exec") && i+1 < len(args):
			w.report(inv, RuleRemoteScript, name+" "+a.s+" "+args[i+1].show()+at(a.pos)+" lets a network peer run commands")
			return
		case strings.HasPrefix(a.s, "-e") && len(a.s) > 2 || strings.HasPrefix(a.s, "--exec=") || strings.HasPrefix(a.s, "--sh-exec="):
			w.report(inv, RuleRemoteScript, name+" "+a.s+at(a.pos)+" lets a network peer run commands")
			return
		}
	}
}

// socat joining EXEC: or SYSTEM: with a network address is a remote shell.
func (w *walker) socat(inv *invocation, name string) {
	var exec, network bool
	for _, a := range inv.args() {
		if !a.exact() || strings.HasPrefix(a.s, "-") && len(a.s) > 1 {
			continue
		}
		addr := strings.ToLower(a.s)
		switch {
		case strings.HasPrefix(addr, "exec:") || strings.HasPrefix(addr, "system:"):
			exec = true
			cmd, _, _ := strings.Cut(a.s[strings.IndexByte(a.s, ':')+1:], ",")
			w.payload(inv, field{s: cmd, pos: a.pos}, "socat "+addr[:strings.IndexByte(addr, ':')]+" command", nil, true)
		case strings.HasPrefix(addr, "tcp") || strings.HasPrefix(addr, "udp") || strings.HasPrefix(addr, "ssl") ||
			strings.HasPrefix(addr, "openssl") || strings.HasPrefix(addr, "sctp") || strings.HasPrefix(addr, "socks") ||
			strings.HasPrefix(addr, "proxy") || strings.HasPrefix(addr, "vsock") || strings.HasPrefix(addr, "dccp"):
			network = true
		}
	}
	if exec && network {
		w.report(inv, RuleRemoteScript, "socat connects a program to a network address, so a peer can run commands"+at(inv.argv[0].pos))
	}
}
