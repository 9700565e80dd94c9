package validate_test

import (
	"testing"

	"github.com/rigout/rigout/validate"
)

// readOnlyCases are command lines the classifier must call read-only.
var readOnlyCases = []string{
	"ls", "ls -la /tmp", "cat /etc/hostname", "head -n 5 go.mod", "tail -n 20 /var/log/syslog",
	"wc -l README.md", "grep -rn TODO .", "git status", "git log --oneline -5", "git diff HEAD~1",
	"git -C /tmp/repo show HEAD", "git --no-pager log", "git branch -a", "git remote -v",
	"ps aux", "df -h", "du -sh .", "uname -a", "id", "whoami", "date", "date +%s", "stat go.mod",
	"file go.mod", "find . -name '*.go'", "find /tmp -type f -newer x", "sort -rn x", "sort -k 2 x",
	"uniq -c x", "env", "printenv HOME", "hostname", "hostname -f",
	"ls | wc -l", "cat x | grep y | sort | uniq -c", "ls && cat x", "ls || true", "! grep -q x y",
	"cat < go.mod", "grep x <<< 'text'", "cat <<'EOF'\n$(rm x)\nEOF\n", "cat <<EOF\nplain text\nEOF\n",
	"ls 2>&1", "ls >&2", "ls 2>/dev/null", "ls &>/dev/null", "{ ls; cat x; }", "(ls; ps)",
	"/bin/ls -l", "/usr/bin/git status", `grep "a b" x`, "echo hello", "ls ~",
	"test -f go.mod", "test a = b", "test 3 -eq 4", "test -e x -a -r x",
}

// notReadOnlyCases are near-misses: each writes, deletes, runs another
// program, or hides what it runs behind an expansion.
var notReadOnlyCases = []string{
	// test and [ with a variable name: bash evaluates its subscript.
	"test -v 'x[$(touch p)]'", "[ -v 'x[$(touch p)]' ]", "test -v HOME", "[ -R x ]",
	"[[ -v 'x[1]' ]]", "[[ 'x[1]' -eq 0 ]]",
	// Writing programs and options.
	"tee x", "echo hi | tee out", "sed -i s/a/b/ x", "sed -n p x", "sed 's/a/b/w out' x",
	"awk 'BEGIN{system(\"x\")}'", "awk '{print > \"f\"}' x", "awk '{print}' x",
	"sort -o out x", "sort -ro out x", "sort --output=out x", "sort --compress-program=sh x",
	"uniq in out", "uniq -f 1 in", "date -s 2020-01-01", "date --set=2020-01-01", "hostname evil",
	"file -C -m magic", "cp a b", "mv a b", "touch x", "mkdir x", "rm x", "truncate -s0 x",
	"dd if=x of=y", "install a b", "ln -s a b", "chmod +x x",
	// git that changes things.
	"git commit -m x", "git push", "git checkout .", "git reset --hard", "git stash", "git branch new",
	"git branch -d old", "git remote add x y", "git diff --output=x", "git log --output x",
	"git diff --ext-diff", "git -c core.pager=sh log", "git", "git --exec-path=/x status",
	// find actions.
	"find . -delete", "find . -exec rm {} ;", "find . -exec rm '{}' ';'", "find . -execdir rm x ';'",
	"find . -ok rm x ';'", "find . -fprint out", "find . -fprintf out %p", "find . -fls out",
	// Programs that run programs.
	"xargs rm", "ls | xargs rm", "env rm x", "env X=1 ls", "sudo ls", "nice ls", "timeout 5 ls",
	"sh -c ls", "bash -c 'ls'", "eval ls", "command ls", "exec ls", "watch ls", "nohup ls",
	// Redirections that write.
	"ls > out", "ls >> out", "ls >| out", "ls &> out", "ls &>> out", "ls 2> err", "cat <> x",
	"ls >&out", "ls > /dev/null2", "ls > '/dev/null' > out",
	// Expansions.
	"cat $(rm x)", "cat `rm x`", "cat <(rm x)", "ls $X", `ls "$X"`, "ls ${X:-/}", "echo $((1+1))",
	"find * -name x", "find . -{delete,print}", "ls *", "ls ?", "ls [a]", "ls \\*", `find . -de\lete`,
	"ls $'\\x2d'", `ls "a\"b"`, "cat <<EOF\n$(rm x)\nEOF\n", "cat < $(rm x)",
	// Lists with one writer; structure the classifier does not follow.
	"ls; rm x", "ls && rm x", "ls || rm x", "ls | rm x", "(ls; rm x)", "{ ls; rm x; }",
	"ls &", "coproc ls", "X=1 ls", "X=1", "f() { ls; }", "f() { rm x; }; f", "for i in a; do ls; done",
	"if true; then ls; fi", "while true; do ls; done", "[[ -f x ]]", "time ls",
	// Unknown programs and paths.
	"make", "./ls", "/tmp/ls", "/home/x/bin/cat y", "python3 -c 'print(1)'", "perl -e 1", "vim x",
	// Devices: opening some of them acts.
	"cat /dev/watchdog", "cat < /dev/watchdog", "head -c1 ../dev/watchdog", "ls /dev", "tail -f /dev/ttyS0",
	// Refused commands are never read-only.
	"rm -rf /", "cat /dev/sda",
}

func TestReadOnly(t *testing.T) {
	var p validate.Policy
	for _, c := range readOnlyCases {
		if d := p.Check(c, validate.Options{}); !d.Allowed || !d.ReadOnly {
			t.Errorf("Check(%q) = %+v, want allowed and read-only", c, d)
		}
	}
	for _, c := range notReadOnlyCases {
		if d := p.Check(c, validate.Options{}); d.ReadOnly {
			t.Errorf("Check(%q) is read-only; it is a near-miss that must not be (%+v)", c, d)
		}
	}
}

func TestReadOnlyArgv(t *testing.T) {
	var p validate.Policy
	yes := [][]string{{"ls", "-la"}, {"cat", "*"}, {"git", "status"}, {"find", ".", "-name", "*.go"}, {"/usr/bin/wc", "-l", "x"}}
	no := [][]string{{"rm", "x"}, {"tee", "x"}, {"find", ".", "-delete"}, {"sort", "-o", "x"}, {"git", "commit"},
		{"sed", "-i", "s/a/b/", "x"}, {"xargs", "rm"}, {"env", "rm"}, {"/tmp/ls"}, {"bash", "-c", "ls"}}
	for _, a := range yes {
		if d := p.CheckArgv(a, validate.Options{}); !d.Allowed || !d.ReadOnly {
			t.Errorf("CheckArgv(%q) = %+v, want allowed and read-only", a, d)
		}
	}
	for _, a := range no {
		if d := p.CheckArgv(a, validate.Options{}); d.ReadOnly {
			t.Errorf("CheckArgv(%q) is read-only; it must not be", a)
		}
	}
}

// TestReadOnlyAllowMode: in allow mode a read-only program that is not
// allowlisted is refused, and so not read-only.
func TestReadOnlyAllowMode(t *testing.T) {
	p := validate.Policy{Mode: validate.ModeAllow, Allow: []string{"ls"}}
	if d := p.Check("ls", validate.Options{}); !d.ReadOnly {
		t.Errorf("ls, allowlisted: %+v, want read-only", d)
	}
	if d := (&validate.Policy{}).Check("cat watchdog", validate.Options{Dir: "/dev"}); d.ReadOnly {
		t.Errorf("cat watchdog in /dev: %+v, want not read-only", d)
	}
	if d := (&validate.Policy{}).CheckArgv([]string{"cat", "/dev/watchdog"}, validate.Options{}); d.ReadOnly {
		t.Errorf("argv cat /dev/watchdog: %+v, want not read-only", d)
	}
	if d := p.Check("cat x", validate.Options{}); d.Allowed || d.ReadOnly {
		t.Errorf("cat, not allowlisted: %+v, want refused and not read-only", d)
	}
}
