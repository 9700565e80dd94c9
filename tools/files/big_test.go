package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/files"
)

// TestTailOfSparseGiB tails a 1 GiB sparse file (a hole, then a few
// lines): the read costs what the tail costs. Bounded memory is measured
// as bytes allocated by the whole call, not by wall time.
func TestTailOfSparseGiB(t *testing.T) {
	backends(t, setup{}, func(t *testing.T, e *env, host string) {
		p := filepath.Join(t.TempDir(), "huge.log")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(1 << 30); err != nil {
			t.Fatal(err)
		}
		var tail strings.Builder
		for i := 1; i <= 50; i++ {
			fmt.Fprintf(&tail, "log line %d\n", i)
		}
		if _, err := f.WriteAt([]byte(tail.String()), 1<<30); err != nil {
			t.Fatal(err)
		}
		f.Close()
		// Warm up the connection, then measure one call.
		e.ok(map[string]any{"action": "stat", "path": p, "host": host})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out := e.ok(map[string]any{"action": "read", "path": p, "host": host, "tail": 10})
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		if !strings.Contains(out, "    -1\tlog line 50\n") || !strings.Contains(out, "   -10\tlog line 41\n") || strings.Contains(out, "log line 40\n") {
			t.Fatalf("tail: %s", out)
		}
		t.Logf("tail of a 1 GiB file allocated %d KiB", alloc>>10)
		if alloc > 8<<20 {
			t.Fatalf("tail allocated %d bytes for a 1 GiB file: it is not reading from the end", alloc)
		}
		// A read from the start stops at the line limit too.
		runtime.ReadMemStats(&before)
		res := e.call("file_operations", map[string]any{"action": "read", "path": p, "host": host})
		runtime.ReadMemStats(&after)
		if !res.IsError || !strings.Contains(rigouttest.Text(res), "binary") {
			t.Fatalf("a file starting with a hole of NULs reads as binary: %s", rigouttest.Text(res))
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 8<<20 {
			t.Fatalf("binary refusal allocated %d bytes", a)
		}
	})
}

func TestReadCapStated(t *testing.T) {
	e := newEnv(t, setup{cfg: files.Config{MaxReadBytes: 4096}})
	p := filepath.Join(t.TempDir(), "long.txt")
	write(t, p, strings.Repeat("0123456789abcdef0123456789abcdef\n", 1000))
	out := e.ok(map[string]any{"action": "read", "path": p})
	if !strings.Contains(out, "4096-byte cap") || len(out) > 5000 {
		t.Fatalf("cap not stated or not applied (%d bytes): %s", len(out), out[len(out)-200:])
	}
	out = e.ok(map[string]any{"action": "read", "path": p, "offset": 990})
	if !strings.Contains(out, "  1000\t") || strings.Contains(out, "cap") {
		t.Fatalf("offset read: %s", out)
	}
}

func TestSearch(t *testing.T) {
	backends(t, setup{cfg: files.Config{MaxResults: 1000}}, func(t *testing.T, e *env, host string) {
		dir := t.TempDir()
		for _, d := range []string{"src/a", ".git", "node_modules/x"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write(t, filepath.Join(dir, "src/a/one.go"), "package a\nfunc Needle() {}\n// needle again\nx\ny\nz\n")
		write(t, filepath.Join(dir, "src/two.go"), "package src\nvar NEEDLE = 1\n")
		write(t, filepath.Join(dir, "src/notes.txt"), "needle in text\n")
		write(t, filepath.Join(dir, ".git/config"), "needle in git\n")
		write(t, filepath.Join(dir, "node_modules/x/i.js"), "needle in deps\n")
		if err := os.WriteFile(filepath.Join(dir, "src/blob.bin"), []byte("needle\x00\x01"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Many matches for the bound.
		write(t, filepath.Join(dir, "src/many.txt"), strings.Repeat("needle\n", 5000))
		old := filepath.Join(dir, "src/two.go")
		past := mustTime("2020-01-01T00:00:00Z")
		if err := os.Chtimes(old, past, past); err != nil {
			t.Fatal(err)
		}

		grep := func(args map[string]any) string {
			t.Helper()
			args["mode"], args["path"], args["host"] = "grep", dir, host
			res := e.call("search_files", args)
			if res.IsError {
				t.Fatalf("grep %v: %s", args, rigouttest.Text(res))
			}
			return rigouttest.Text(res)
		}
		out := grep(map[string]any{"pattern": "needle", "include": "*.go"})
		if !strings.Contains(out, "src/a/one.go:3:// needle again") || strings.Contains(out, "NEEDLE") || strings.Contains(out, "Needle") {
			t.Fatalf("grep: %s", out)
		}
		out = grep(map[string]any{"pattern": "needle", "include": "*.go", "case_insensitive": true, "context": 1})
		if !strings.Contains(out, "one.go:2:func Needle() {}") || !strings.Contains(out, "one.go-1-package a") ||
			!strings.Contains(out, "one.go-4-x") || !strings.Contains(out, "two.go:2:var NEEDLE = 1") {
			t.Fatalf("grep -i -C1: %s", out)
		}
		out = grep(map[string]any{"pattern": "needle in", "max_results": 10})
		if strings.Contains(out, ".git") || strings.Contains(out, "node_modules") || strings.Contains(out, "blob.bin") || !strings.Contains(out, "notes.txt:1:") {
			t.Fatalf("grep skips: %s", out)
		}
		out = grep(map[string]any{"pattern": "^needle$", "max_results": 25})
		if n := strings.Count(out, "many.txt:"); n != 25 || !strings.Contains(out, "stopped at 25 matches") {
			t.Fatalf("bounded grep: %d results\n%s", n, out[:min(len(out), 500)])
		}
		res := e.call("search_files", map[string]any{"mode": "grep", "pattern": "(", "path": dir, "host": host})
		if !res.IsError || !strings.Contains(rigouttest.Text(res), "bad regular expression") {
			t.Fatalf("bad regexp: %s", rigouttest.Text(res))
		}

		res = e.call("search_files", map[string]any{"mode": "glob", "pattern": "**/*.go", "path": dir, "host": host})
		out = rigouttest.Text(res)
		i1, i2 := strings.Index(out, "one.go"), strings.Index(out, "two.go")
		if res.IsError || i1 < 0 || i2 < 0 || i1 > i2 || strings.Contains(out, "i.js") {
			t.Fatalf("glob newest first: %s", out)
		}
		res = e.call("search_files", map[string]any{"mode": "glob", "pattern": "*.txt", "path": dir, "host": host, "max_results": 1})
		if out := rigouttest.Text(res); res.IsError || !strings.Contains(out, "1 of 2 matches") {
			t.Fatalf("glob bound: %s", out)
		}
	})
}
