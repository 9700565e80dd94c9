package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/files"
)

func TestOperations(t *testing.T) {
	backends(t, setup{}, func(t *testing.T, e *env, host string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "a.txt")
		op := func(action string, kv ...any) map[string]any {
			m := map[string]any{"action": action, "path": p, "host": host}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}

		// write creates; parents need create_parents.
		out := e.ok(op("write", "content", "one\ntwo\nthree\n"))
		if !strings.Contains(out, "sha256 "+sum([]byte("one\ntwo\nthree\n"))) || !strings.Contains(out, "via ") {
			t.Fatalf("write: %s", out)
		}
		deep := filepath.Join(dir, "x", "y", "z.txt")
		e.fails(map[string]any{"action": "write", "path": deep, "host": host, "content": "z"}, "create_parents")
		e.ok(map[string]any{"action": "write", "path": deep, "host": host, "content": "z", "create_parents": true})
		if readFile(t, deep) != "z" {
			t.Fatal("create_parents write")
		}

		// Mode kept on overwrite.
		if err := os.Chmod(p, 0o640); err != nil {
			t.Fatal(err)
		}
		e.ok(op("write", "content", "one\ntwo\nthree\n"))
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Fatalf("mode after overwrite: %v", fi.Mode())
		}

		// expected_sha256.
		e.fails(op("write", "content", "x", "expected_sha256", strings.Repeat("0", 64)), "changed since it was read")
		e.ok(op("append", "content", "four\n", "expected_sha256", sum([]byte("one\ntwo\nthree\n"))))
		if got := readFile(t, p); got != "one\ntwo\nthree\nfour\n" {
			t.Fatalf("append: %q", got)
		}

		// A missing file: the path once, then why.
		missing := filepath.Join(dir, "missing.txt")
		msg := e.fails(map[string]any{"action": "read", "path": missing, "host": host}, "read "+missing+": ")
		if strings.Count(msg, missing) != 1 || !strings.Contains(msg, "no such file") && !strings.Contains(msg, "does not exist") {
			t.Errorf("read of a missing file: %q, want the path once and that it does not exist", msg)
		}

		// read: numbered lines, offset/limit, tail.
		out = e.ok(op("read"))
		if !strings.Contains(out, "     1\tone\n") || !strings.Contains(out, "     4\tfour\n") || !strings.Contains(out, "lines 1-4") {
			t.Fatalf("read: %s", out)
		}
		out = e.ok(op("read", "offset", 2, "limit", 2))
		if !strings.Contains(out, "     2\ttwo\n     3\tthree\n") || strings.Contains(out, "four") || !strings.Contains(out, "offset=4") {
			t.Fatalf("read offset/limit: %s", out)
		}
		out = e.ok(op("read", "tail", 2))
		if !strings.Contains(out, "    -2\tthree\n    -1\tfour\n") || strings.Contains(out, "two") {
			t.Fatalf("tail: %s", out)
		}

		// edit.
		out = e.ok(op("edit", "old_string", "two\n", "new_string", "TWO\n"))
		if !strings.Contains(out, "-two\n+TWO\n") || readFile(t, p) != "one\nTWO\nthree\nfour\n" {
			t.Fatalf("edit: %s", out)
		}

		// stat and list.
		out = e.ok(op("stat"))
		if !strings.Contains(out, `"type": "file"`) || !strings.Contains(out, `"mode": "0640"`) {
			t.Fatalf("stat: %s", out)
		}
		out = e.ok(map[string]any{"action": "list", "path": dir, "host": host})
		if !strings.Contains(out, "a.txt") || !strings.Contains(out, "x/") {
			t.Fatalf("list: %s", out)
		}

		// chmod, chown (to the owner it has: no privilege needed, no sudo).
		e.ok(op("chmod", "mode", "600"))
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Fatalf("chmod: %v", fi.Mode())
		}
		out = e.ok(op("chown", "owner", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())))
		if !strings.Contains(out, "without sudo") {
			t.Fatalf("chown: %s", out)
		}
		if os.Geteuid() == 0 {
			e.ok(op("chown", "owner", "root:root"))
		}

		// copy and move.
		cp := filepath.Join(dir, "b.txt")
		e.ok(op("copy", "destination", cp))
		if readFile(t, cp) != readFile(t, p) {
			t.Fatal("copy content")
		}
		mv := filepath.Join(dir, "x", "c.txt")
		e.ok(map[string]any{"action": "move", "path": cp, "destination": mv, "host": host})
		if _, err := os.Stat(cp); !os.IsNotExist(err) || readFile(t, mv) != readFile(t, p) {
			t.Fatal("move")
		}
		tree := filepath.Join(dir, "tree")
		e.fails(map[string]any{"action": "copy", "path": filepath.Join(dir, "x"), "destination": tree, "host": host}, "recursive")
		e.ok(map[string]any{"action": "copy", "path": filepath.Join(dir, "x"), "destination": tree, "host": host, "recursive": true})
		if readFile(t, filepath.Join(tree, "y", "z.txt")) != "z" {
			t.Fatal("recursive copy")
		}

		// mkdir and delete.
		nd := filepath.Join(dir, "new", "dir")
		e.fails(map[string]any{"action": "mkdir", "path": nd, "host": host}, "create_parents")
		e.ok(map[string]any{"action": "mkdir", "path": nd, "host": host, "create_parents": true})
		if fi, err := os.Stat(nd); err != nil || !fi.IsDir() {
			t.Fatal("mkdir")
		}
		e.fails(map[string]any{"action": "delete", "path": tree, "host": host}, "recursive")
		out = e.ok(map[string]any{"action": "delete", "path": tree, "host": host, "recursive": true})
		if _, err := os.Stat(tree); !os.IsNotExist(err) || !strings.Contains(out, "entries") {
			t.Fatalf("delete tree: %s", out)
		}
		e.ok(op("delete"))
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatal("delete file")
		}
		// No temporary file is left behind.
		left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
		if len(left) > 0 {
			t.Fatalf("temporary files left: %v", left)
		}

		// The ledger has paths, route, hashes.
		var found bool
		for _, ev := range rigouttest.Events(t, e.ledger, audit.Filter{Tool: "file_operations"}) {
			if ev.Phase == audit.PhaseDone && strings.Contains(ev.Detail, `"sha256"`) && strings.Contains(ev.Detail, p) && ev.Route != "" {
				found = true
			}
		}
		if !found {
			t.Fatal("no done row with path, sha256 and route")
		}
	})
}

func TestBinaryRefused(t *testing.T) {
	backends(t, setup{}, func(t *testing.T, e *env, host string) {
		p := filepath.Join(t.TempDir(), "bin")
		if err := os.WriteFile(p, []byte("ELF\x00\x01\x02binary"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.fails(map[string]any{"action": "read", "path": p, "host": host}, "binary file")
		e.fails(map[string]any{"action": "read", "path": p, "host": host}, "bulk_file_transfer")
		e.fails(map[string]any{"action": "edit", "path": p, "host": host, "old_string": "ELF", "new_string": "x"}, "binary file")
	})
}

func TestEditUniquenessAndCRLF(t *testing.T) {
	backends(t, setup{}, func(t *testing.T, e *env, host string) {
		p := filepath.Join(t.TempDir(), "crlf.txt")
		write(t, p, "alpha\r\nbeta\r\ngamma\r\nbeta\r\n")
		args := func(kv ...any) map[string]any {
			m := map[string]any{"action": "edit", "path": p, "host": host}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
		out := e.fails(args("old_string", "beta", "new_string", "B"), "matches 2 times")
		if !strings.Contains(out, "lines: 2 4") {
			t.Fatalf("match lines: %s", out)
		}
		out = e.fails(args("old_string", "gamm4", "new_string", "G"), "no match")
		if !strings.Contains(out, "3\tgamma") {
			t.Fatalf("closest lines: %s", out)
		}
		e.fails(args("old_string", "alpha\n  beta", "new_string", "x"), "whitespace is ignored")
		// An old_string typed with \n matches the CRLF file; CRLF is kept.
		e.ok(args("old_string", "alpha\nbeta", "new_string", "ALPHA\nBETA"))
		if got := readFile(t, p); got != "ALPHA\r\nBETA\r\ngamma\r\nbeta\r\n" {
			t.Fatalf("CRLF edit: %q", got)
		}
		e.ok(args("old_string", "a\r", "new_string", "A\r", "replace_all", true))
		if got := readFile(t, p); got != "ALPHA\r\nBETA\r\ngammA\r\nbetA\r\n" {
			t.Fatalf("replace_all: %q", got)
		}
	})
}

func TestReadOnlyTokenMayReadNotWrite(t *testing.T) {
	e := newEnv(t, setup{readOnly: true})
	p := filepath.Join(t.TempDir(), "r.txt")
	write(t, p, "hello\n")
	if out := e.ok(map[string]any{"action": "read", "path": p}); !strings.Contains(out, "hello") {
		t.Fatal(out)
	}
	e.ok(map[string]any{"action": "stat", "path": p})
	e.fails(map[string]any{"action": "write", "path": p, "content": "x"}, "read-only")
	if readFile(t, p) != "hello\n" {
		t.Fatal("read-only token wrote")
	}
}

func TestProtectedRootsRefusedByPolicy(t *testing.T) {
	// These refusals happen before anything touches the disk; the paths
	// are the real system's, and the policy must stop every one.
	e := newEnv(t, setup{})
	for _, tc := range []struct {
		args map[string]any
		rule string
	}{
		{map[string]any{"action": "delete", "path": "/usr", "recursive": true}, "recursive-delete-root"},
		{map[string]any{"action": "delete", "path": "/etc/passwd"}, "critical-file-write"},
		{map[string]any{"action": "write", "path": "/etc/shadow", "content": "x"}, "critical-file-write"},
		{map[string]any{"action": "move", "path": "/usr", "destination": "/nowhere-rigout-test"}, "move-root"},
		{map[string]any{"action": "chmod", "path": "/etc", "mode": "777", "recursive": true}, "recursive-chmod-root"},
	} {
		e.fails(tc.args, tc.rule)
	}
}

func TestHiddenStateDirectory(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	c := newCanary(t, filepath.Join(state, "connection.json"))
	if err := os.Symlink(state, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, setup{cfg: files.Config{Hidden: []string{state}}})
	for _, args := range []map[string]any{
		{"action": "read", "path": c.path},
		{"action": "read", "path": filepath.Join(base, "alias", "connection.json")},
		{"action": "list", "path": state},
		{"action": "write", "path": filepath.Join(base, "alias", "x"), "content": "x"},
		{"action": "delete", "path": state, "recursive": true},
		{"action": "copy", "path": c.path, "destination": filepath.Join(base, "stolen")},
	} {
		res := e.call("file_operations", args)
		if !res.IsError || c.leaked(rigouttest.Text(res)) {
			t.Errorf("%v: %s", args, rigouttest.Text(res))
		}
		c.check(t, fmt.Sprint(args))
	}
	res := e.call("search_files", map[string]any{"mode": "grep", "pattern": "CANARY", "path": base})
	if c.leaked(rigouttest.Text(res)) {
		t.Errorf("grep of the parent shows the hidden file: %s", rigouttest.Text(res))
	}
	dst := filepath.Join(t.TempDir(), "copy")
	res = e.call("bulk_file_transfer", map[string]any{"action": "copy", "source": base, "destination": dst})
	if res.IsError {
		t.Fatalf("copy of the parent: %s", rigouttest.Text(res))
	}
	if _, err := os.Stat(filepath.Join(dst, "state", "connection.json")); err == nil {
		t.Errorf("the hidden directory was copied: %s", rigouttest.Text(res))
	}
}
