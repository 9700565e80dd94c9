package validate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout/validate"
)

// TestCheckExistingLinks judges commands against links that exist on the
// machine, made by an earlier call: a protected root under a temp dir and
// links to it. Nothing runs; the commands are only judged.
func TestCheckExistingLinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "precious")
	plain := filepath.Join(base, "plain")
	for _, d := range []string{filepath.Join(root, "keep"), filepath.Join(plain, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{
		"plink":   root,    // absolute
		"rlink":   "plink", // relative, through another link
		"olink":   plain,   // to a directory that is not protected
		"deep":    base,    // to the parent: deep/precious is the root
		"dangles": "/nonexistent-target-of-a-test-link",
	} {
		if err := os.Symlink(to, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	p := &validate.Policy{ProtectedRoots: []string{"/", root}}
	fsOpts := validate.Options{Dir: base, Readlink: os.Readlink}
	tests := []struct {
		name string
		cmd  string
		argv []string
		opts validate.Options
		rule string
	}{
		{name: "link with slash", cmd: "rm -rf plink/", opts: fsOpts, rule: rDel},
		{name: "link itself, at its most dangerous reading", cmd: "rm -rf plink", opts: fsOpts, rule: rDel},
		{name: "cd into link", cmd: "cd plink && rm -rf *", opts: fsOpts, rule: rDel},
		{name: "glob below link", cmd: "rm -rf plink/*", opts: fsOpts, rule: rDel},
		{name: "link to link", cmd: "rm -rf rlink/", opts: fsOpts, rule: rDel},
		{name: "link in the middle", cmd: "rm -rf deep/precious", opts: fsOpts, rule: rDel},
		{name: "absolute path", cmd: "rm -rf " + base + "/plink/", opts: validate.Options{Readlink: os.Readlink}, rule: rDel},
		{name: "find argv", argv: []string{"find", base + "/plink/", "-mindepth", "1", "-delete"}, opts: fsOpts, rule: rDel},
		{name: "chmod through link", cmd: "chmod -R 777 plink/", opts: fsOpts, rule: rChmod},
		{name: "proc self cwd after cd", cmd: "cd " + root + "; rm -rf /proc/self/cwd/", opts: fsOpts, rule: rDel},
		{name: "proc self cwd in dir", cmd: "rm -rf /proc/self/cwd/*", opts: validate.Options{Dir: root}, rule: rDel},
		{name: "proc self fd", cmd: "exec 3<" + root + "; rm -rf /proc/self/fd/3/", opts: fsOpts, rule: rDel},
		{name: "proc thread fd", cmd: "rm -rf /proc/thread-self/fd/5/*", opts: fsOpts, rule: rDel},
		// Near misses.
		{name: "link elsewhere", cmd: "rm -rf olink/", opts: fsOpts},
		{name: "real directory", cmd: "rm -rf plain/sub", opts: fsOpts},
		{name: "dangling link", cmd: "rm -rf dangles/x", opts: fsOpts},
		{name: "inside the root", cmd: "rm -rf plink/keep", opts: fsOpts},
		{name: "no filesystem", cmd: "rm -rf plink/", opts: validate.Options{Dir: base}},
		{name: "proc self cwd elsewhere", cmd: "cd " + plain + "; rm -rf /proc/self/cwd/sub", opts: fsOpts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d validate.Decision
			if tt.argv != nil {
				d = p.CheckArgv(tt.argv, tt.opts)
			} else {
				d = p.Check(tt.cmd, tt.opts)
			}
			if d.Rule != tt.rule || d.Allowed != (tt.rule == "") {
				t.Errorf("Check(%q) = %v; want rule %q", tt.cmd+join(tt.argv), d, tt.rule)
			}
		})
	}
}

func join(argv []string) string {
	s := ""
	for _, a := range argv {
		s += " " + a
	}
	return s
}
