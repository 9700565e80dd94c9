package validate_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// fuzzCommands returns n commands generated from seed: a program and
// targets, harmless and protected alike, wrapped in up to three of the
// spellings the tables cover (variables, quoting, escapes, substitutions,
// shells, eval, pipes into xargs or a shell, functions, loops, cd, arrays,
// positional parameters, names and arithmetic bash evaluates). The same
// seed gives the same commands.
func fuzzCommands(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 27))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	out := make([]string, 0, n)
	for len(out) < n {
		verb := pick(fuzzVerbs)
		target := pick(fuzzTargets)
		cmd := strings.ReplaceAll(verb, "%s", target)
		if !strings.Contains(verb, "%s") {
			cmd = verb + " " + target
		}
		for layers := r.IntN(4); layers > 0; layers-- {
			w := fuzzWraps[r.IntN(len(fuzzWraps))]
			cmd = w(r, cmd, verb, target)
		}
		out = append(out, cmd)
	}
	return out
}

var fuzzVerbs = []string{
	"rm -rf", "rm -f", "rm -r --", "ls -d", "cat", "touch", "mkdir -p", "echo", "chmod -R 777", "chown -R nobody",
	"mv %s ./moved", "cp -r %s ./copy", "find %s -maxdepth 1 -delete", "tee -a %s </dev/null", "shred -u",
	"truncate -s 0", "ln -sf ./x", "dd if=/dev/zero count=1 of=%s", "rmdir", "unlink", "stat", "du -s",
	"echo x >", "echo x >>", "printf '%%s\\n' x >", "kill -9", "pkill", "rsync -a --delete ./e/", "xargs rm -rf <<<",
}

var fuzzTargets = []string{
	// Harmless: the command's own directory and /tmp.
	"build", "./out", "f", "x", "dir/", "notes.txt", "/tmp/x", "$HOME/.cache/x", "~/.cache", "./*.o", "1234",
	// Protected.
	"/", "/etc", "/usr", "/usr/", "~", "$HOME", "/etc/passwd", "/root/.bashrc", "~/.bashrc", "~/.ssh/authorized_keys",
	"/bin", "..", "../..", "*", "/dev/sda", "/etc/*", "/boot", "-1", "1", "sshd", "/etc/cron.d/x",
}

// squote quotes s for bash as one single-quoted word.
func squote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hexWord spells s as $'\xNN…'.
func hexWord(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02x`, s[i])
	}
	b.WriteString("'")
	return b.String()
}

// fuzzWraps each rewrite a command into another spelling that bash runs
// the same way (or nearly: a loop, a function, a subshell).
var fuzzWraps = []func(r *rand.Rand, cmd, verb, target string) string{
	func(_ *rand.Rand, cmd, _, _ string) string { return "bash -c " + squote(cmd) },
	func(_ *rand.Rand, cmd, _, _ string) string { return "sh -c " + squote(cmd) },
	func(_ *rand.Rand, cmd, _, _ string) string { return "eval " + squote(cmd) },
	func(_ *rand.Rand, cmd, _, _ string) string { return "echo " + squote(cmd) + " | bash" },
	func(_ *rand.Rand, cmd, _, _ string) string { return "bash <<< " + squote(cmd) },
	func(_ *rand.Rand, cmd, _, _ string) string { return "( " + cmd + " )" },
	func(_ *rand.Rand, cmd, _, _ string) string { return "{ " + cmd + "; }" },
	func(_ *rand.Rand, cmd, _, _ string) string { return "f() { " + cmd + "; }; f" },
	func(_ *rand.Rand, cmd, _, _ string) string { return "if true; then " + cmd + "; fi" },
	func(_ *rand.Rand, cmd, _, _ string) string { return "true && " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "false || " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "cd / && " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "cd /etc; " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "cd ~ && " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "env " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "command " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "timeout 2 " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "nice " + cmd },
	func(_ *rand.Rand, cmd, _, _ string) string { return "X=" + squote(cmd) + "; $X" },
	func(_ *rand.Rand, cmd, _, _ string) string { return "X=" + squote(cmd) + "; eval \"$X\"" },
	func(_ *rand.Rand, cmd, _, _ string) string {
		return "python3 -c " + squote("import os; os.system("+fmt.Sprintf("%q", cmd)+")")
	},
	func(_ *rand.Rand, cmd, _, _ string) string { return "test -v " + squote("x[$("+cmd+")]") },
	func(_ *rand.Rand, cmd, _, _ string) string { return "let " + squote("x[$("+cmd+")]=1") },
	func(_ *rand.Rand, cmd, _, _ string) string { return "y=" + squote("x[$("+cmd+")]") + "; echo $((y))" },
	func(_ *rand.Rand, cmd, _, _ string) string { return "echo $(" + cmd + ")" },
	func(_ *rand.Rand, cmd, _, _ string) string { return "trap " + squote(cmd) + " EXIT" },
	// Rewrites of the target alone (when the command still holds it).
	func(_ *rand.Rand, cmd, _, target string) string {
		return replaceLast(cmd, target, "$T", "T="+target+"; ")
	},
	func(_ *rand.Rand, cmd, _, target string) string {
		return replaceLast(cmd, target, `"${T:-`+target+`}"`, "")
	},
	func(_ *rand.Rand, cmd, _, target string) string {
		return replaceLast(cmd, target, "$(echo "+target+")", "")
	},
	func(_ *rand.Rand, cmd, _, target string) string {
		if !strings.Contains(cmd, target) {
			return cmd
		}
		return replaceLast(cmd, target, "$d", "for d in ./none "+target+"; do ") + "; done"
	},
	func(_ *rand.Rand, cmd, _, target string) string {
		return replaceLast(cmd, target, `"$@"`, "set -- "+target+"; ")
	},
	func(_ *rand.Rand, cmd, _, target string) string {
		return replaceLast(cmd, target, `"${a[1]}"`, "a=(./none "+target+"); ")
	},
	func(_ *rand.Rand, cmd, _, target string) string {
		if strings.ContainsAny(target, "$~*") {
			return cmd
		}
		return replaceLast(cmd, target, hexWord(target), "")
	},
	// Rewrites of the program's name.
	func(r *rand.Rand, cmd, verb, _ string) string {
		name, _, _ := strings.Cut(verb, " ")
		if !strings.HasPrefix(cmd, name+" ") {
			return cmd
		}
		spellings := []string{`\` + name, `"` + name + `"`, name[:1] + "''" + name[1:], hexWord(name), "$(echo " + name + ")"}
		return spellings[r.IntN(len(spellings))] + cmd[len(name):]
	},
	func(_ *rand.Rand, cmd, verb, _ string) string {
		name, _, _ := strings.Cut(verb, " ")
		if !strings.HasPrefix(cmd, name+" ") {
			return cmd
		}
		return "P=" + name + "; $P" + cmd[len(name):]
	},
}

// replaceLast replaces the last old in cmd with repl and puts prefix in
// front; cmd is returned unchanged when it does not hold old.
func replaceLast(cmd, old, repl, prefix string) string {
	i := strings.LastIndex(cmd, old)
	if i < 0 {
		return cmd
	}
	return prefix + cmd[:i] + repl + cmd[i+len(old):]
}
