package sandboxcfg

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rigout/rigout/validate"
)

// TestGlobberMatchesFilepathGlob checks the listing-once expansion against
// filepath.Glob, on the default critical files and on patterns made for
// the edge cases: symlinked directories, missing ones, a file where a
// directory is wanted, a malformed pattern, a pattern in a directory part.
func TestGlobberMatchesFilepathGlob(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/x1", "a/x2", "a/.x3", "a/y", "b/z"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	pats := append(validate.DefaultCriticalFiles(),
		dir+"/a/x*", dir+"/link/x*", dir+"/a/*", dir+"/a/[xy]*", dir+"/link/../b/*", dir+"/none/*",
		dir+"/a/y/*", dir+"/a/[", dir+"/*/x*", dir+"/a/x?", dir+"//a//x*", "/usr/lib/*", "/lib/*")
	g := newGlobber()
	for _, pat := range pats {
		want, _ := filepath.Glob(pat)
		if got := g.matches(pat); !slices.Equal(got, want) {
			t.Errorf("matches(%q) = %q, filepath.Glob = %q", pat, got, want)
		}
	}
}
