package validate_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/validate"
)

// TestBashDifferential runs commands of the tables under bash, traced with
// strace, as the unprivileged user nobody (when the test runs as root)
// inside a throwaway directory, and compares what bash did with the
// checker's judgement:
//
//   - for a command the checker refuses because bash evaluates code in a
//     name or in arithmetic (the forms of issue 27, each running only
//     "touch p"), bash must really run touch: the refusal is not spurious;
//   - for a command the checker allows, every program bash executed must
//     be allowed as an exact argv by the checker, and every path bash
//     deleted or renamed must lie in the throwaway directory.
//
// Only harmless commands are run: the refused ones create a file in the
// temp directory. Without strace the test is skipped, loudly; CI must
// install strace for it to run.
func TestBashDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bash under strace")
	}
	tracer, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("RIGOUT_REQUIRE_STRACE") == "1" {
			t.Fatal("RIGOUT_REQUIRE_STRACE=1 and strace is not installed: the checker was not compared with bash")
		}
		t.Skip("SKIPPED: strace is not installed, so the checker was not compared with bash (install strace in CI)")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIPPED: bash is not installed")
	}
	var drop []string
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("SKIPPED: running as root without setpriv to drop to an unprivileged user")
		}
		drop = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"}
	}
	var p validate.Policy
	ran, programs, deletes := 0, 0, 0
	run := func(t *testing.T, cmd string, stdin *string) (execs [][]string, deleted []string, dir string) {
		t.Helper()
		dir = t.TempDir()
		if os.Geteuid() == 0 {
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(t.TempDir(), "trace")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		args := append([]string{"-f", "-qq", "-y", "-s", "256", "-o", out, "-e", "trace=execve,unlink,unlinkat,rename,renameat,renameat2,rmdir", "--"}, drop...)
		args = append(args, bash, "--norc", "--noprofile", "-c", cmd)
		c := exec.CommandContext(ctx, tracer, args...)
		c.Dir = dir
		c.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "LC_ALL=C"}
		if stdin != nil {
			c.Stdin = strings.NewReader(*stdin)
		}
		_ = c.Run() // the command's own failure is not the test's
		ran++
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("strace wrote no trace: %v", err)
		}
		return parseTrace(string(b), dir)
	}

	t.Run("refused forms really run code", func(t *testing.T) {
		for _, c := range nameCases {
			if c.rule != validate.RuleHiddenCode || !strings.Contains(c.cmd, "touch p") {
				continue
			}
			t.Run(c.cmd, func(t *testing.T) {
				if d := p.Check(c.cmd, c.options()); d.Allowed {
					t.Fatalf("the checker allows %q", c.cmd)
				}
				execs, _, dir := run(t, c.cmd, c.stdin)
				if !ranProgram(execs, "touch") {
					t.Errorf("bash did not run the touch hidden in %q (executed %v): the checker refuses code bash does not run", c.cmd, execs)
				}
				if _, err := os.Stat(filepath.Join(dir, "p")); err != nil {
					t.Errorf("bash did not create p for %q: %v", c.cmd, err)
				}
			})
		}
	})

	t.Run("allowed commands run only what the checker allows", func(t *testing.T) {
		for _, c := range diffAllowed {
			t.Run(c.cmd, func(t *testing.T) {
				if d := p.Check(c.cmd, c.options()); !d.Allowed {
					t.Fatalf("the checker refuses %q: %v", c.cmd, d)
				}
				execs, deleted, dir := run(t, c.cmd, c.stdin)
				programs += len(execs)
				deletes += len(deleted)
				for _, argv := range execs {
					if d := p.CheckArgv(argv, validate.Options{Dir: dir}); !d.Allowed {
						t.Errorf("for the allowed %q bash executed %q, which the checker refuses: %v", c.cmd, argv, d)
					}
				}
				for _, path := range deleted {
					if path != dir && !strings.HasPrefix(path, dir+"/") {
						t.Errorf("for the allowed %q bash deleted or renamed %s, outside its directory", c.cmd, path)
					}
				}
			})
		}
	})
	if programs == 0 || deletes == 0 {
		t.Errorf("the traces show %d programs executed and %d paths deleted: strace's output was not understood", programs, deletes)
	}
	t.Logf("bash ran %d commands under strace; the allowed ones executed %d programs and deleted %d paths", ran, programs, deletes)
}

// diffAllowed are near misses of the tables that are harmless to run:
// bash builtins, and programs that only read or write in the directory.
var diffAllowed = []checkCase{
	{cmd: "test -v HOME"},
	{cmd: "[[ -v 'x[1]' ]]"},
	{cmd: "[[ 3 -eq 0 ]] || true"},
	{cmd: "read x <<<hi; echo $x"},
	{cmd: `read -a arr <<<"a b"; echo ${arr[1]}`},
	{cmd: "printf -v 'x[1]' %s hi; echo ${x[1]}"},
	{cmd: "let 'x[1]=1' y=2+3; echo $y"},
	{cmd: "declare -a x; x[1]=1; declare -A m; m[key]=1; echo ${m[key]}"},
	{cmd: "declare -n r=x; x=1; echo $r"},
	{cmd: "typeset -i y=3+4; echo $y"},
	{cmd: "y=5; echo $((y))"},
	{cmd: "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i"},
	{cmd: "for ((i=0; i<3; i++)); do echo $i; done"},
	{cmd: "echo a > f; n=$(wc -l < f); echo $((n+1))"},
	{cmd: "for i in $(seq 1 3); do echo $((i*i)); done"},
	{cmd: `arr=(a b c); for i in "${!arr[@]}"; do echo "${arr[$i]}"; done`},
	{cmd: "x='hi'; echo ${x@P}"},
	{cmd: "x=HOME; echo ${!x}"},
	{cmd: "unset x 'x[1]'; getopts ab opt; true"},
	{cmd: "echo x >> notes.txt; cat notes.txt"},
	{cmd: "mkdir -p build && touch build/a && rm -rf build"},
	{cmd: "find . -name x -print"},
	{cmd: "echo e > f; sed 's/e/E/g' f"},
	{cmd: "echo a b > f; awk '{print $1}' f; awk '{print > \"out.txt\"}' f"},
	{cmd: "echo hi > f; tar -cf out.tar f && tar -tf out.tar"},
	{cmd: "bash -s", stdin: ptr("echo from stdin; ls")},
	{cmd: "cat", stdin: ptr("rm -rf /")},
	{cmd: "PROMPT_COMMAND='history -a'; PS1='$(date +%H:%M)> '; true"},
}

var (
	traceExec = regexp.MustCompile(`^\d+\s+execve\("([^"]*)", \[(.*?)\](?:, 0x[0-9a-f]+ /\* \d+ vars \*/)?\) = 0`)
	traceDel  = regexp.MustCompile(`^\d+\s+(unlink|unlinkat|rmdir|rename|renameat|renameat2)\((?:AT_FDCWD(?:<([^>]*)>)?, |\d+<([^>]*)>, )?"([^"]*)".*\) = 0`)
	traceStr  = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// parseTrace returns the argv of every program executed after the first
// bash (setpriv and bash itself are the harness) and the absolute paths
// deleted or renamed away, from strace's output.
func parseTrace(trace, dir string) (execs [][]string, deleted []string, d string) {
	seenBash := false
	for _, line := range strings.Split(trace, "\n") {
		if m := traceExec.FindStringSubmatch(line); m != nil {
			var argv []string
			for _, s := range traceStr.FindAllStringSubmatch(m[2], -1) {
				v, err := strconv.Unquote(`"` + s[1] + `"`)
				if err != nil {
					v = s[1]
				}
				argv = append(argv, v)
			}
			if !seenBash {
				if filepath.Base(m[1]) == "bash" {
					seenBash = true
				}
				continue
			}
			if len(argv) > 0 {
				execs = append(execs, argv)
			}
			continue
		}
		if m := traceDel.FindStringSubmatch(line); m != nil {
			path, base := m[4], dir
			if m[3] != "" {
				base = m[3] // relative to a directory descriptor (strace -y)
			} else if m[2] != "" {
				base = m[2]
			}
			if !filepath.IsAbs(path) {
				path = filepath.Join(base, path)
			}
			deleted = append(deleted, filepath.Clean(path))
		}
	}
	return execs, deleted, dir
}

func ranProgram(execs [][]string, name string) bool {
	for _, argv := range execs {
		if len(argv) > 0 && filepath.Base(argv[0]) == name {
			return true
		}
	}
	return false
}
