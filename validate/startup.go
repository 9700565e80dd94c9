package validate

import (
	"path"
	"regexp"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Start-up files: what a shell runs at login, what systemd starts, what
// cron runs, the commands an SSH key forces. Writing one installs code that
// runs later, unseen, like a crontab entry. Such a write is judged by what
// it writes: known content is judged as the code it holds (shell text, the
// Exec lines of a unit, the commands of a cron table, the command= option
// of a key), and a write whose content the checker cannot see (cp of an
// unknown file, sed -i, ln, an interpreter's write, an append of unknown
// output) is refused with RuleHiddenCode.

// startupKind is what a start-up file holds.
type startupKind uint8

const (
	notStartup startupKind = iota
	startupShell
	startupCron     // crontab lines with a user field: /etc/crontab, /etc/cron.d
	startupUserCron // crontab lines without one: /var/spool/cron
	startupUnit
	startupKeys
)

func (k startupKind) String() string {
	switch k {
	case startupShell:
		return "shell start-up file"
	case startupCron, startupUserCron:
		return "cron table"
	case startupUnit:
		return "systemd unit"
	case startupKeys:
		return "SSH authorized keys file"
	}
	return "file"
}

// rcNames are the start-up files of shells and sessions in a home
// directory.
var rcNames = [...]string{".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc",
	".tcshrc", ".login", ".logout", ".xprofile", ".xinitrc", ".xsession", ".xsessionrc"}

// startupFile classifies a cleaned absolute path.
func startupFile(p string) startupKind {
	under := func(dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	switch {
	case oneOf(p, "/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zshrc", "/etc/zshenv",
		"/etc/zprofile", "/etc/zlogin", "/etc/rc.local", "/etc/ssh/sshrc", "/etc/environment.d"),
		under("/etc/profile.d"), under("/etc/zsh"), under("/etc/init.d"), under("/etc/rc.d"),
		under("/etc/cron.hourly"), under("/etc/cron.daily"), under("/etc/cron.weekly"), under("/etc/cron.monthly"),
		under("/etc/update-motd.d"), under("/etc/X11/Xsession.d"):
		return startupShell
	case p == "/etc/crontab", under("/etc/cron.d"), p == "/etc/anacrontab":
		return startupCron
	case under("/var/spool/cron"):
		return startupUserCron
	case under("/etc/systemd"), under("/lib/systemd/system"), under("/usr/lib/systemd/system"),
		under("/run/systemd/system"), under("/usr/lib/systemd/user"), under("/etc/xdg/autostart"):
		return startupUnit
	}
	rel := ""
	switch {
	case strings.HasPrefix(p, "/root/"):
		rel = p[len("/root/"):]
	case strings.HasPrefix(p, "/home/"):
		rest := p[len("/home/"):]
		if i := strings.IndexByte(rest, '/'); i > 0 {
			rel = rest[i+1:]
		}
	}
	if rel == "" {
		return notStartup
	}
	switch {
	case oneOf(rel, rcNames[:]...), rel == ".ssh/rc", strings.HasPrefix(rel, ".config/fish/"),
		strings.HasPrefix(rel, ".bashrc.d/"), strings.HasPrefix(rel, ".profile.d/"):
		return startupShell
	case rel == ".ssh/authorized_keys" || rel == ".ssh/authorized_keys2" || rel == ".ssh":
		return startupKeys
	case rel == ".config/systemd" || strings.HasPrefix(rel, ".config/systemd/") ||
		rel == ".config/autostart" || strings.HasPrefix(rel, ".config/autostart/"):
		return startupUnit
	}
	return notStartup
}

// startupWrite is a write to a start-up file made in the line.
type startupWrite struct {
	how    string
	kind   startupKind
	writes map[syntax.Pos]bool // the operands that write it
	known  map[syntax.Pos]bool // those whose content the checker knows
	fkey   string              // the key of its content in result.files
	judged bool
}

// noteStartup records a command writing f when f is a start-up file; the
// content is judged when the walk is done (judgeStartup). A relative path
// whose directory is unknown is taken for one in the home directory, where
// a session usually starts.
func (w *walker) noteStartup(f field, how string) {
	if !f.exact() || f.s == "" {
		return
	}
	p := w.startupKey(f.s)
	kind := startupFile(p)
	if kind == notStartup {
		return
	}
	if w.res.startup == nil {
		w.res.startup = make(map[string]*startupWrite)
	}
	sw := w.res.startup[p]
	if sw == nil {
		if len(w.res.startup) >= 16 {
			w.report(nil, RuleHiddenCode, how+" writes the "+kind.String()+" "+showPath(p)+at(f.pos)+", one start-up file too many to judge")
			return
		}
		sw = &startupWrite{how: how + at(f.pos), kind: kind, fkey: w.fileKey(f.s), writes: map[syntax.Pos]bool{}, known: map[syntax.Pos]bool{}}
		w.res.startup[p] = sw
	}
	sw.writes[f.pos] = true
}

// noteStartupContent records that a write to a start-up file has content
// the checker knows (recordFile).
func (w *walker) noteStartupContent(f field) {
	if len(w.res.startup) == 0 || !f.exact() || f.s == "" {
		return
	}
	if sw := w.res.startup[w.startupKey(f.s)]; sw != nil {
		sw.known[f.pos] = true
	}
}

// judgeStartup judges what the line wrote to start-up files.
func (w *walker) judgeStartup() {
	// Judging a file's content may write others (a .bashrc that appends to
	// .profile): a few rounds, each in a stable order.
	for round := 0; round < 4; round++ {
		var keys []string
		for p, sw := range w.res.startup {
			if !sw.judged {
				keys = append(keys, p)
			}
		}
		if len(keys) == 0 {
			return
		}
		sort.Strings(keys)
		for _, p := range keys {
			sw := w.res.startup[p]
			sw.judged = true
			w.judgeStartupFile(p, sw)
		}
	}
}

func (w *walker) judgeStartupFile(p string, sw *startupWrite) {
	{
		content, ok := w.res.files[sw.fkey]
		allKnown := true
		for pos := range sw.writes {
			allKnown = allKnown && sw.known[pos]
		}
		if !allKnown || !ok || !content.exact() {
			if sw.kind == startupKeys && strings.HasSuffix(p, "/.ssh") {
				w.report(nil, RuleHiddenCode, sw.how+" replaces the directory "+showPath(p)+", whose authorized_keys lets anyone holding a key log in, and the checker cannot see what it holds")
				return
			}
			w.report(nil, RuleHiddenCode, sw.how+" writes the "+sw.kind.String()+" "+showPath(p)+", which runs later at every login, boot or schedule, and what it writes is only known at run time")
			return
		}
		label := sw.kind.String() + " " + showPath(p)
		inv := &invocation{argv: []field{{s: sw.how}}}
		switch sw.kind {
		case startupShell:
			if n, to, ok := shadows(content.s); ok {
				w.report(inv, RuleHiddenCode, sw.how+" redefines "+n+" in the "+label+" (as "+to+"), so every later login runs something else in its place, code the checker cannot see")
			}
			w.payload(inv, content, label, nil, false)
		case startupCron, startupUserCron:
			for _, line := range strings.Split(content.s, "\n") {
				if cmd, ok := cronCommand(line, sw.kind == startupCron); ok {
					w.payload(inv, field{s: cmd, pos: content.pos}, "entry of the "+label, nil, true)
				}
			}
		case startupUnit:
			for _, line := range strings.Split(content.s, "\n") {
				if cmd, ok := unitCommand(line); ok {
					w.payload(inv, field{s: cmd, pos: content.pos}, "command of the "+label, nil, true)
				}
			}
		case startupKeys:
			for _, line := range strings.Split(content.s, "\n") {
				if cmd, ok := keyCommand(line); ok {
					w.payload(inv, field{s: cmd, pos: content.pos}, "forced command of the "+label, nil, true)
				}
			}
		}
	}
}

// shadowAlias and shadowFunc find an alias or function in start-up code
// that takes the name of a program that handles credentials or
// privileges (compiled once, never modified).
var (
	shadowAlias = regexp.MustCompile(`(?:^|[\s;&|])alias\s+(sudo|su|doas|pkexec|passwd|ssh|scp|gpg|login|run0)=('[^']*'|"[^"]*"|\S*)`)
	shadowFunc  = regexp.MustCompile(`(?:^|[\s;&|])(?:function\s+(sudo|su|doas|pkexec|passwd|ssh|scp|gpg|login|run0)\b|(sudo|su|doas|pkexec|passwd|ssh|scp|gpg|login|run0)\s*\(\s*\))`)
)

// shadows returns the name and replacement of such a definition.
func shadows(code string) (name, to string, ok bool) {
	if m := shadowAlias.FindStringSubmatch(code); m != nil {
		to = strings.Trim(m[2], `"' `)
		if to != m[1] {
			return m[1], to, true
		}
	}
	if m := shadowFunc.FindStringSubmatch(code); m != nil {
		return m[1] + m[2], "a function", true
	}
	return "", "", false
}

// cronCommand returns the command of a cron table line: after five time
// fields (or an @keyword) and, in system tables, the user.
func cronCommand(line string, user bool) (string, bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", false
	}
	f := strings.Fields(line)
	if len(f) > 0 && strings.Contains(f[0], "=") && !strings.HasPrefix(f[0], "@") {
		return "", false // NAME=value
	}
	skip := 5
	if strings.HasPrefix(f[0], "@") {
		skip = 1
	}
	if user {
		skip++
	}
	rest := line
	for i := 0; i < skip; i++ {
		rest = strings.TrimLeft(rest, " \t")
		j := strings.IndexAny(rest, " \t")
		if j < 0 {
			return "", false
		}
		rest = rest[j:]
	}
	rest = strings.TrimSpace(rest)
	return rest, rest != ""
}

// unitCommand returns the command of an Exec…= line of a systemd unit (or
// the Exec= of an autostart entry), without systemd's prefix characters.
func unitCommand(line string) (string, bool) {
	k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
	if !ok || !strings.HasPrefix(strings.TrimSpace(k), "Exec") {
		return "", false
	}
	v = strings.TrimLeft(strings.TrimSpace(v), "-@:+!|")
	return v, v != ""
}

// keyCommand returns the command="…" option of an authorized_keys line.
func keyCommand(line string) (string, bool) {
	i := strings.Index(line, `command="`)
	if i < 0 {
		return "", false
	}
	rest := line[i+len(`command="`):]
	var b strings.Builder
	for j := 0; j < len(rest); j++ {
		switch rest[j] {
		case '\\':
			if j+1 < len(rest) {
				j++
				b.WriteByte(rest[j])
			}
		case '"':
			return b.String(), true
		default:
			b.WriteByte(rest[j])
		}
	}
	return b.String(), true
}

// startupDest notes the file a copy, move or link writes: the destination
// itself, or the entry named after each source in a destination directory.
func (w *walker) startupDest(dest field, srcs []field, how string) {
	if !dest.exact() {
		return
	}
	p := w.resolveLinks(w.fileKey(dest.s))
	if p == "" || p[0] != '/' || !isStartupDir(p) {
		w.noteStartup(dest, how)
		return
	}
	for _, s := range srcs {
		if s.exact() && s.s != "" {
			base := path.Base(strings.TrimRight(s.s, "/"))
			if base != "." && base != "/" && base != ".." {
				w.noteStartup(field{s: p + "/" + base, pos: dest.pos}, how)
			}
		}
	}
}

// isStartupDir reports whether p is a directory whose entries are
// start-up files: a home directory, /etc/profile.d, …
func isStartupDir(p string) bool {
	if p == "/root" || strings.HasPrefix(p, "/home/") && strings.Count(p, "/") == 2 {
		return true
	}
	if oneOf(p, "/etc/profile.d", "/etc/cron.d", "/etc/cron.hourly", "/etc/cron.daily", "/etc/cron.weekly",
		"/etc/cron.monthly", "/etc/init.d", "/etc/systemd/system", "/etc/systemd/user", "/lib/systemd/system",
		"/usr/lib/systemd/system", "/etc/update-motd.d", "/var/spool/cron/crontabs", "/etc/xdg/autostart") {
		return true
	}
	_, rel, ok := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(p, "/root"), "/home/"), "/")
	if strings.HasPrefix(p, "/root/") {
		rel, ok = p[len("/root/"):], true
	}
	return ok && oneOf(rel, ".ssh", ".config/systemd/user", ".config/autostart")
}

// startupKey is the path a write names, resolved through links; a
// relative path whose directory is unknown is taken for one in the home
// directory.
func (w *walker) startupKey(s string) string {
	p := w.resolveLinks(w.fileKey(s))
	if p != "" && p[0] != '/' {
		p = cleanPath(homeDir + "/" + p)
	}
	return p
}
