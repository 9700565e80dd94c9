package exec

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// direct decides whether a shell command line equivalent to argv (one
// simple command of literal words, Command.Direct) can run without bash,
// and returns the program's path and the environment bash would give it.
//
// bash -c runs such a line by looking argv[0] up on the PATH of the
// environment and exec'ing it in place of itself, with argv as given, so
// the program's pid, process group, signals, exit status and output are
// the same. The environment bash passes differs from the one it received
// as follows, and direct reproduces it:
//   - _ is set to the program's path;
//   - SHLVL: bash increments it at start and decrements it before that
//     exec, so a value 0–998 is passed unchanged and an unset or empty one
//     becomes "0" (other values — negative, not a number, 999 and above,
//     where bash warns on stderr — run through bash);
//   - PWD is kept when it is an absolute path naming the working
//     directory, else set to the working directory's physical path;
//   - OLDPWD is dropped unless it names a directory.
//
// The order of the variables differs (bash passes its own hash order; this
// keeps the sorted order exec.Local gives every command): a program that
// prints its environment prints the same lines, in another order.
//
// It refuses (the line runs through bash) when the program is not found, or
// when the environment holds what bash itself acts on: BASH_ENV,
// SHELLOPTS, BASHOPTS, POSIXLY_CORRECT, IFS, exported functions
// (BASH_FUNC_*) or a variable whose name bash does not import; and when
// PATH is unset or holds a relative or empty entry.
func direct(argv, env []string, dir string) (path string, out []string, ok bool) {
	if len(argv) == 0 || argv[0] == "" || strings.ContainsRune(argv[0], '/') {
		return "", nil, false
	}
	var pathVar, shlvl, pwd, oldpwd string
	var havePath, haveOld bool
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case !validEnvName(k), strings.HasPrefix(k, "BASH_FUNC_"):
			return "", nil, false
		}
		switch k {
		case "BASH_ENV", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "IFS":
			return "", nil, false
		case "PATH":
			pathVar, havePath = v, true
		case "SHLVL":
			shlvl = v
		case "PWD":
			pwd = v
		case "OLDPWD":
			oldpwd, haveOld = v, true
		}
	}
	if !havePath {
		return "", nil, false
	}
	switch n, err := strconv.Atoi(shlvl); {
	case shlvl == "":
		shlvl = "0"
	case err != nil || n < 0 || n >= 999 || strconv.Itoa(n) != shlvl:
		return "", nil, false
	}
	path, ok = lookPath(argv[0], pathVar)
	if !ok {
		return "", nil, false
	}
	wd := dir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return "", nil, false
		}
	}
	if !samePlace(pwd, wd) {
		phys, err := filepath.EvalSymlinks(wd)
		if err != nil {
			return "", nil, false
		}
		if phys, err = filepath.Abs(phys); err != nil {
			return "", nil, false
		}
		pwd = phys
	}
	out = make([]string, 0, len(env)+3)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "_", "SHLVL", "PWD", "OLDPWD":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "_="+path, "SHLVL="+shlvl, "PWD="+pwd)
	if haveOld {
		if fi, err := os.Stat(oldpwd); err == nil && fi.IsDir() {
			out = append(out, "OLDPWD="+oldpwd)
		}
	}
	slices.Sort(out)
	return path, out, true
}

// samePlace reports whether pwd is an absolute path naming the directory
// wd, as bash checks an inherited PWD.
func samePlace(pwd, wd string) bool {
	if !filepath.IsAbs(pwd) {
		return false
	}
	a, err := os.Stat(pwd)
	if err != nil {
		return false
	}
	b, err := os.Stat(wd)
	return err == nil && os.SameFile(a, b)
}

// lookPath finds name on a PATH value as bash does: the first entry
// holding an executable regular file of that name. Only absolute entries
// are accepted; any other makes the lookup fail, so that bash decides.
func lookPath(name, pathVar string) (string, bool) {
	for _, d := range filepath.SplitList(pathVar) {
		if !filepath.IsAbs(d) {
			return "", false
		}
		p := filepath.Join(d, name)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if syscall.Access(p, 1) == nil { // X_OK
			return p, true
		}
	}
	return "", false
}
