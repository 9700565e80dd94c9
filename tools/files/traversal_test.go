package files_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rigout/rigout/rigouttest"
)

// traversalFixture is a root with escape hatches of every shape around
// it, and canaries outside it.
type traversalFixture struct {
	base, root string
	canaries   []*canary
}

func newTraversalFixture(t *testing.T) *traversalFixture {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "app")
	evil := filepath.Join(base, "app-evil")
	for _, d := range []string{root, filepath.Join(root, "sub"), evil, filepath.Join(base, "outdir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fx := &traversalFixture{base: base, root: root}
	fx.canaries = []*canary{
		newCanary(t, filepath.Join(base, "canary.txt")),
		newCanary(t, filepath.Join(evil, "canary.txt")),
		newCanary(t, filepath.Join(base, "outdir", "canary.txt")),
	}
	write(t, filepath.Join(root, "ok.txt"), "legit inside\n")
	write(t, filepath.Join(root, "sub", "inner.txt"), "legit inner\n")
	links := map[string]string{
		"link-out":    "../canary.txt",                   // relative, leaves the root
		"abs-out":     filepath.Join(base, "canary.txt"), // absolute
		"dirlink":     base,                              // a directory outside
		"sub/deep":    "../../outdir",                    // dots through a link
		"evil-prefix": "../app-evil",                     // the sibling with the root as prefix
		"inlink":      "ok.txt",                          // stays inside: legitimate
		"loop":        "loop",                            // a loop
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

func (fx *traversalFixture) check(t *testing.T, what, text string) {
	t.Helper()
	for _, c := range fx.canaries {
		c.check(t, what)
		if c.leaked(text) {
			t.Fatalf("%s: the result shows a canary's content:\n%s", what, text)
		}
	}
}

// badPaths reach, or try to reach, outside the root.
func (fx *traversalFixture) badPaths() []string {
	r, b := fx.root, fx.base
	return []string{
		r + "/../canary.txt",
		b + "/canary.txt",
		b + "/app-evil/canary.txt",
		r + "-evil/canary.txt",
		r + "/link-out",
		r + "/abs-out",
		r + "/dirlink/canary.txt",
		r + "/dirlink/outdir/canary.txt",
		r + "/sub/deep/canary.txt",
		r + "/evil-prefix/canary.txt",
		r + "/sub/../../canary.txt",
		r + "/ok.txt\x00/../../canary.txt",
		"../canary.txt",
		"~/canary.txt",
		r + "/" + strings.Repeat("a", 300),
		r + "/" + strings.Repeat("d/", 2100) + "x",
		r + "/loop/x",
	}
}

func TestTraversalCorpus(t *testing.T) {
	fx := newTraversalFixture(t)
	backends(t, setup{roots: []string{fx.root}, workDir: fx.root}, func(t *testing.T, e *env, host string) {
		legit := fx.root + "/ok.txt"
		var refused, cases int
		try := func(tool string, args map[string]any, mustFail bool) {
			t.Helper()
			restoreLinks(t, fx)
			args["host"] = host
			res := e.call(tool, args)
			text := rigouttest.Text(res)
			cases++
			if res.IsError {
				refused++
			} else if mustFail {
				t.Errorf("%s %v: not refused: %s", tool, args, text)
			}
			fx.check(t, tool+" "+strings.ReplaceAll(stringify(args), "\x00", `\0`), text)
		}
		for _, p := range fx.badPaths() {
			// Reaching a link itself (stat, delete of the link, move of
			// it) is legitimate: it lives in the root. Reaching through it
			// is not.
			through := !strings.HasSuffix(p, "/link-out") && !strings.HasSuffix(p, "/abs-out")
			try("file_operations", map[string]any{"action": "read", "path": p}, true)
			try("file_operations", map[string]any{"action": "read", "path": p, "tail": 5}, true)
			try("file_operations", map[string]any{"action": "write", "path": p, "content": "PWNED"}, true)
			try("file_operations", map[string]any{"action": "write", "path": p, "content": "PWNED", "create_parents": true}, true)
			try("file_operations", map[string]any{"action": "append", "path": p, "content": "PWNED"}, true)
			try("file_operations", map[string]any{"action": "edit", "path": p, "old_string": "CANARY", "new_string": "PWNED"}, true)
			try("file_operations", map[string]any{"action": "chmod", "path": p, "mode": "777"}, true)
			try("file_operations", map[string]any{"action": "chown", "path": p, "owner": "0:0"}, true)
			try("file_operations", map[string]any{"action": "list", "path": p}, true)
			try("file_operations", map[string]any{"action": "stat", "path": p}, through)
			try("file_operations", map[string]any{"action": "copy", "path": p, "destination": fx.root + "/stolen.txt"}, through)
			try("file_operations", map[string]any{"action": "copy", "path": legit, "destination": p}, through)
			try("file_operations", map[string]any{"action": "move", "path": p, "destination": fx.root + "/stolen.txt"}, through)
			try("file_operations", map[string]any{"action": "mkdir", "path": p + "/d", "create_parents": true}, true)
			try("file_operations", map[string]any{"action": "delete", "path": p, "recursive": true}, through)
			try("search_files", map[string]any{"mode": "grep", "pattern": "CANARY", "path": p}, through)
			try("search_files", map[string]any{"mode": "glob", "pattern": "*", "path": p}, through)
			try("bulk_file_transfer", map[string]any{"action": "copy", "source": p, "destination": fx.root + "/stolen.txt"}, true)
			try("bulk_file_transfer", map[string]any{"action": "copy", "source": legit, "destination": p}, through)
		}
		// Searching the root itself never follows a link out.
		for _, args := range []map[string]any{
			{"mode": "grep", "pattern": "CANARY", "path": fx.root},
			{"mode": "glob", "pattern": "**/canary.txt", "path": fx.root},
		} {
			args["host"] = host
			res := e.call("search_files", args)
			text := rigouttest.Text(res)
			if res.IsError || strings.Contains(text, "canary.txt:") || strings.Contains(text, "/canary.txt\n") {
				t.Errorf("search %v: %s", args, text)
			}
			fx.check(t, "search root", text)
		}
		// Legitimate in-root operations succeed.
		if out := e.ok(map[string]any{"action": "read", "path": fx.root + "/inlink", "host": host}); !strings.Contains(out, "legit inside") {
			t.Errorf("read through an in-root link: %s", out)
		}
		if out := e.ok(map[string]any{"action": "read", "path": "sub/inner.txt", "host": "local"}); !strings.Contains(out, "legit inner") {
			t.Errorf("relative read: %s", out)
		}
		e.ok(map[string]any{"action": "write", "path": fx.root + "/sub/new.txt", "content": "new", "host": host})
		e.ok(map[string]any{"action": "edit", "path": fx.root + "/sub/new.txt", "old_string": "new", "new_string": "newer", "host": host})
		e.ok(map[string]any{"action": "list", "path": fx.root, "host": host})
		e.ok(map[string]any{"action": "copy", "path": fx.root + "/sub/new.txt", "destination": fx.root + "/sub/new2.txt", "host": host})
		e.ok(map[string]any{"action": "delete", "path": fx.root + "/sub/new2.txt", "host": host})
		if readFile(t, fx.root+"/sub/new.txt") != "newer" {
			t.Error("in-root write/edit")
		}
		_ = os.Remove(fx.root + "/sub/new.txt")
		fx.check(t, "end", "")
		t.Logf("%d cases, %d refused; canaries intact", cases, refused)
	})
}

func restoreLinks(t *testing.T, fx *traversalFixture) {
	t.Helper()
	links := map[string]string{
		"link-out": "../canary.txt", "abs-out": filepath.Join(fx.base, "canary.txt"), "dirlink": fx.base,
		"sub/deep": "../../outdir", "evil-prefix": "../app-evil", "loop": "loop",
	}
	for name, target := range links {
		p := filepath.Join(fx.root, name)
		if got, err := os.Readlink(p); err == nil && got == target {
			continue
		}
		_ = os.RemoveAll(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"stolen.txt"} {
		_ = os.RemoveAll(filepath.Join(fx.root, p))
	}
	// A legit delete of a link is allowed; ok.txt must stay for the copy.
	if _, err := os.Stat(filepath.Join(fx.root, "ok.txt")); err != nil {
		write(t, filepath.Join(fx.root, "ok.txt"), "legit inside\n")
	}
}

func stringify(m map[string]any) string {
	var sb strings.Builder
	for _, k := range []string{"action", "mode", "path", "source", "destination"} {
		if v, ok := m[k]; ok {
			s, _ := v.(string)
			if len(s) > 80 {
				s = s[:80] + "…"
			}
			sb.WriteString(k + "=" + s + " ")
		}
	}
	return sb.String()
}

// TestSwapRace swaps a directory inside the root for a symbolic link to a
// directory outside it, in a loop, while the tools read, write, edit and
// delete through it. os.Root resolves every lookup beneath the root's
// handle, so no swap timing reaches the canary. (Over SFTP the check and
// the use are separate requests: this test, run against sshd, does reach
// the canary; see the package documentation.)
func TestSwapRace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := newCanary(t, filepath.Join(outside, "f.txt"))
	e := newEnv(t, setup{roots: []string{root}})
	swap := filepath.Join(root, "swap")
	real := filepath.Join(root, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(real, "f.txt"), "inside\n")

	swaps, stop := swapRace(t, root, swap, outside, true)
	ok := 0
	const rounds = 150
	for i := 0; i < rounds; i++ {
		for _, args := range []map[string]any{
			{"action": "read", "path": swap + "/f.txt"},
			{"action": "write", "path": swap + "/f.txt", "content": "PWNED\n"},
			{"action": "edit", "path": swap + "/f.txt", "old_string": "CANARY", "new_string": "PWNED"},
			{"action": "chmod", "path": swap + "/f.txt", "mode": "777"},
			{"action": "delete", "path": swap + "/f.txt"},
		} {
			res := e.call("file_operations", args)
			if !res.IsError {
				ok++
			}
			text := rigouttest.Text(res)
			if c.leaked(text) {
				stop()
				t.Fatalf("round %d %v: canary leaked: %s", i, args, text)
			}
		}
		res := e.call("bulk_file_transfer", map[string]any{"action": "copy", "source": swap + "/f.txt", "destination": root + "/got.txt"})
		if !res.IsError && strings.Contains(readFile(t, root+"/got.txt"), "CANARY") {
			stop()
			t.Fatal("transfer copied the canary in")
		}
		c.check(t, "swap race")
	}
	stop()
	t.Logf("%d rounds, %d swaps, %d calls succeeded inside the root; canary intact", rounds, swaps.Load(), ok)
	if swaps.Load() < 10 {
		t.Fatalf("only %d swaps happened: the race did not run", swaps.Load())
	}
}

// swapRace keeps swapping the name swap, in root, between a link to
// outside and a link to root's "real" directory (and, with dirToo, a real
// directory holding f.txt), until the test ends; it returns the count of
// swaps made and a function that stops it (and waits for it).
func swapRace(t *testing.T, root, swap, outside string, dirToo bool) (*atomic.Int64, func()) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	end := func() { stop.Store(true); wg.Wait() }
	t.Cleanup(end)
	var swaps atomic.Int64
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			tmp := filepath.Join(root, "swap.new")
			_ = os.RemoveAll(tmp)
			var err error
			if i%2 == 0 {
				err = os.Symlink(outside, tmp)
			} else {
				err = os.Symlink("real", tmp)
			}
			if err == nil && os.Rename(tmp, swap) == nil {
				swaps.Add(1)
			}
			if dirToo && i%3 == 0 {
				_ = os.Remove(swap)
				_ = os.Mkdir(swap, 0o755)
				_ = os.WriteFile(filepath.Join(swap, "f.txt"), []byte("inside\n"), 0o644)
				_ = os.RemoveAll(swap)
			}
		}
	})
	return &swaps, end
}
