package exec_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec"
)

// TestDirectMatchesBash runs a table of simple commands twice, through
// bash -c and directly (Command.Direct), and requires the same result:
// stdout (environment listings compared as sets of lines, the one
// documented difference being their order), stderr, exit code, signal.
func TestDirectMatchesBash(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("LOUD SKIP: no bash on this machine; direct exec compares against bash")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "f"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "LANG=C"}
	envs := map[string][]string{
		"plain":      base,
		"shlvl":      append(slices.Clone(base), "SHLVL=4"),
		"stale pwd":  append(slices.Clone(base), "PWD=/", "OLDPWD=/nonexistent"),
		"oldpwd dir": append(slices.Clone(base), "OLDPWD="+dir, "_=/stale"),
	}
	cases := []struct {
		line string
		argv []string
		env  bool // stdout is an environment listing
	}{
		{"env", []string{"env"}, true},
		{"printenv PWD", []string{"printenv", "PWD"}, false},
		{"printenv SHLVL", []string{"printenv", "SHLVL"}, false},
		{"printenv _", []string{"printenv", "_"}, false},
		{"printenv OLDPWD", []string{"printenv", "OLDPWD"}, false},
		{"ls -a", []string{"ls", "-a"}, false},
		{"cat f", []string{"cat", "f"}, false},
		{"cat missing", []string{"cat", "missing"}, false},
		{"wc -l f", []string{"wc", "-l", "f"}, false},
		{"true", []string{"true"}, false},
		{"false", []string{"false"}, false},
		{"sh -c 'kill -TERM $$'", []string{"sh", "-c", "kill -TERM $$"}, false},
		{"sh -c 'exit 7'", []string{"sh", "-c", "exit 7"}, false},
		{"sh -c 'echo $0 $#' a b", []string{"sh", "-c", "echo $0 $#", "a", "b"}, false},
		{"readlink -f .", []string{"readlink", "-f", "."}, false},
	}
	for name, env := range envs {
		l := &exec.Local{Env: env}
		for _, wd := range []string{real, link, ""} {
			for _, c := range cases {
				if _, _, ok := exec.Direct(c.argv, env, wd); !ok {
					t.Errorf("%s in %s, env %s: direct exec refused it", c.line, wd, name)
					continue
				}
				viaBash, err := l.Run(context.Background(), exec.Command{Shell: c.line, Dir: wd})
				if err != nil {
					t.Fatal(err)
				}
				viaArgv, err := l.Run(context.Background(), exec.Command{Shell: c.line, Direct: c.argv, Dir: wd})
				if err != nil {
					t.Fatal(err)
				}
				out1, out2 := string(viaBash.Stdout.Data), string(viaArgv.Stdout.Data)
				if c.env {
					out1, out2 = sortedLines(out1), sortedLines(out2)
				}
				if out1 != out2 || string(viaBash.Stderr.Data) != string(viaArgv.Stderr.Data) ||
					viaBash.ExitCode != viaArgv.ExitCode || viaBash.Signal != viaArgv.Signal {
					t.Errorf("%s in %s, env %s:\nbash:   %q %q exit %d %s\ndirect: %q %q exit %d %s", c.line, wd, name,
						out1, viaBash.Stderr.Data, viaBash.ExitCode, viaBash.Signal,
						out2, viaArgv.Stderr.Data, viaArgv.ExitCode, viaArgv.Signal)
				}
			}
		}
	}
}

// TestDirectFallsBack: what bash would run differently goes through bash.
func TestDirectFallsBack(t *testing.T) {
	path := "PATH=/usr/bin:/bin"
	for _, tc := range []struct {
		argv []string
		env  []string
	}{
		{[]string{"no-such-program-xyz"}, []string{path}},
		{[]string{"ls"}, nil},
		{[]string{"ls"}, []string{"PATH=bin:/usr/bin"}},
		{[]string{"ls"}, []string{"PATH=:/usr/bin"}},
		{[]string{"ls"}, []string{path, "BASH_ENV=/tmp/x"}},
		{[]string{"ls"}, []string{path, "SHELLOPTS=xtrace"}},
		{[]string{"ls"}, []string{path, "BASH_FUNC_f%%=() { :; }"}},
		{[]string{"ls"}, []string{path, "SHLVL=999"}},
		{[]string{"ls"}, []string{path, "SHLVL=x"}},
		{[]string{"./ls"}, []string{path}},
	} {
		if _, _, ok := exec.Direct(tc.argv, tc.env, "/"); ok {
			t.Errorf("direct(%q, %q) accepted; bash would not run it the same way", tc.argv, tc.env)
		}
	}
}

func sortedLines(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}
