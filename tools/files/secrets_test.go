package files_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/internal/gwtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/files"
)

// fileSecret is the credential of these tests: a shape the context and
// format rules of package redact do not recognise, so only the call's
// mask can hide it.
const fileSecret = "opal-7Qx2-harbor-91Lk"

// fileLeaked returns the form of fileSecret that text holds, or "".
func fileLeaked(text string) string {
	return gwtest.Leaked(text, gwtest.SecretForms(fileSecret, "7Qx2-harbor"))
}

// fileStore holds "db" (an owner-only file) for file_operations and
// search_files on local and sftp1, "shellonly" for execute_command only,
// and "otherhost" for the file tools on a host no test uses.
func fileStore(t *testing.T) *credentials.Store {
	ft := []string{"file_operations", "search_files"}
	return gwtest.SecretStore(t, fileSecret, func(f string) map[string]credentials.Spec {
		return map[string]credentials.Spec{
			"db":        {File: f, Hosts: []string{"local", "sftp1"}, Tools: ft},
			"shellonly": {File: f, Hosts: []string{"local", "sftp1"}},
			"otherhost": {File: f, Hosts: []string{"nowhere"}, Tools: ft},
		}
	})
}

// TestFileSecrets: a templated write puts the value on disk (locally and
// over the real sshd's SFTP) while the result, the ledger and errors show
// none of it; reads, tails, greps and edit diffs of the file come back
// masked, the gateway's own file even when the read names no secrets; a
// grep or edit cannot test guesses at the value; unknown placeholders,
// aliases the tool may not use and hosts the alias may not reach are
// refused. Then no ledger row holds any form of the value.
func TestFileSecrets(t *testing.T) {
	backends(t, setup{cfg: files.Config{Credentials: fileStore(t)}}, func(t *testing.T, e *env, host string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "app.conf")
		refs := map[string]any{"DB": "db"}
		check := func(what, text string) {
			t.Helper()
			if f := fileLeaked(text); f != "" {
				t.Fatalf("%s shows %q:\n%s", what, f, text)
			}
		}

		out := e.ok(map[string]any{"action": "write", "path": p, "host": host, "secrets": refs,
			"content": "# app\nopaque ${secret.DB} end\nurl https://x/?k=${secret.DB}\nlast\n"})
		check("write", out)
		if !strings.Contains(out, "sha256 withheld") {
			t.Fatalf("write shows the hash of a file holding a credential: %s", out)
		}
		if got := readFile(t, p); got != "# app\nopaque "+fileSecret+" end\nurl https://x/?k="+fileSecret+"\nlast\n" {
			t.Fatalf("on disk: %q", got)
		}

		// The gateway's own file is masked when read again, secrets or not.
		for _, args := range []map[string]any{
			{"action": "read", "path": p, "host": host},
			{"action": "read", "path": p, "host": host, "tail": 3},
			{"action": "read", "path": p, "host": host, "secrets": refs},
		} {
			out := e.ok(args)
			check("read", out)
			if !strings.Contains(out, "opaque *** end") {
				t.Fatalf("read %v: no masked line:\n%s", args, out)
			}
		}

		// A file the gateway did not write: shown as is without secrets
		// (which proves the mask is what hides it), masked with them.
		other := filepath.Join(dir, "other.conf")
		write(t, other, "line one\nkey "+fileSecret+"\n")
		if out := e.ok(map[string]any{"action": "read", "path": other, "host": host}); !strings.Contains(out, fileSecret) {
			t.Fatalf("the control read masked the value without secrets: the test proves nothing:\n%s", out)
		}
		out = e.ok(map[string]any{"action": "read", "path": other, "host": host, "secrets": refs})
		check("read with secrets", out)
		if !strings.Contains(out, "key ***") {
			t.Fatalf("read with secrets: %s", out)
		}

		// grep matches masked lines: the value's start is no match.
		res := e.call("search_files", map[string]any{"mode": "grep", "pattern": "opal-7Q", "path": dir, "host": host, "secrets": refs})
		if got := rigouttest.Text(res); res.IsError || !strings.Contains(got, "no matches") {
			t.Fatalf("grep for the value's start: %s", got)
		}
		res = e.call("search_files", map[string]any{"mode": "grep", "pattern": "opaque", "path": dir, "host": host})
		if got := rigouttest.Text(res); res.IsError || !strings.Contains(got, "opaque *** end") {
			t.Fatalf("grep of the gateway's file: %s", got)
		} else {
			check("grep", got)
		}

		// edit: a guess at the value is no match; the placeholder matches;
		// the diff is masked.
		e.fails(map[string]any{"action": "edit", "path": p, "host": host, "old_string": "opaque opal-7Qx2", "new_string": "x"}, "no match")
		out = e.ok(map[string]any{"action": "edit", "path": p, "host": host, "secrets": refs,
			"old_string": "opaque ${secret.DB} end", "new_string": "opaque ${secret.DB} changed"})
		check("edit", out)
		if !strings.Contains(out, "+opaque *** changed") || !strings.Contains(out, "sha256 withheld") {
			t.Fatalf("edit diff: %s", out)
		}
		if !strings.Contains(readFile(t, p), "opaque "+fileSecret+" changed") {
			t.Fatalf("after edit: %q", readFile(t, p))
		}
		// An expected_sha256 mismatch does not show the file's hash.
		check("mismatch", e.fails(map[string]any{"action": "edit", "path": p, "host": host, "old_string": "last", "new_string": "x",
			"expected_sha256": strings.Repeat("0", 64)}, "withheld"))

		// Refusals name the placeholder or alias, never a value.
		msg := e.fails(map[string]any{"action": "write", "path": p, "host": host, "secrets": refs, "content": "${secret.NOPE}"}, "${secret.NOPE}")
		check("unknown placeholder", msg)
		msg = e.fails(map[string]any{"action": "write", "path": p, "host": host, "secrets": map[string]any{"X": "shellonly"}, "content": "${secret.X}"}, "may not be used by file_operations")
		check("denied tool", msg)
		e.fails(map[string]any{"action": "read", "path": p, "host": host, "secrets": map[string]any{"X": "otherhost"}}, "may not be used on host")
		e.fails(map[string]any{"action": "read", "path": p, "host": host, "secrets": map[string]any{"X": "missing"}}, "unknown credential alias")
		if !strings.Contains(readFile(t, p), "opaque "+fileSecret+" changed") {
			t.Fatal("a refused write changed the file")
		}

		// After delete the file is forgotten; a new plain file there is not masked.
		e.ok(map[string]any{"action": "delete", "path": p, "host": host})
		write(t, p, "plain "+fileSecret+"\n")
		if out := e.ok(map[string]any{"action": "read", "path": p, "host": host}); !strings.Contains(out, fileSecret) {
			t.Fatalf("a deleted file's mask outlived it: %s", out)
		}

		denied := rigouttest.Events(t, e.ledger, audit.Filter{Status: audit.StatusDenied})
		if len(denied) < 2 {
			t.Fatalf("want the denied alias uses on record, got %d rows", len(denied))
		}
		evs := rigouttest.Events(t, e.ledger, audit.Filter{})
		var named bool
		for _, ev := range evs {
			b, _ := json.Marshal(ev)
			if f := fileLeaked(string(b)); f != "" {
				t.Fatalf("ledger row holds %q: %s", f, b)
			}
			named = named || strings.Contains(string(b), "db as DB")
		}
		if !named {
			t.Fatal("no ledger row names the alias used")
		}
		matches, _ := filepath.Glob(e.ledger.Path() + "*")
		for _, m := range matches {
			b, _ := os.ReadFile(m)
			if f := fileLeaked(string(b)); f != "" {
				t.Fatalf("%s holds %q", m, f)
			}
		}
	})
}

// TestFileSecretsNeedStore: without a credential store the tools do not
// offer secrets, and a call that passes it is refused by the schema.
func TestFileSecretsNeedStore(t *testing.T) {
	e := newEnv(t, setup{})
	tools, err := e.c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		b, _ := json.Marshal(tl)
		if strings.Contains(string(b), `"secrets"`) {
			t.Fatalf("%s offers secrets without a store", tl.Name)
		}
	}
	p := filepath.Join(t.TempDir(), "f")
	res := e.call("file_operations", map[string]any{"action": "write", "path": p, "content": "${secret.X}", "secrets": map[string]any{"X": "db"}})
	if !res.IsError {
		t.Fatalf("secrets accepted without a store: %s", rigouttest.Text(res))
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("the file was written")
	}
}

// BenchmarkReadMasked: a read of the first 2,000 lines (the default) of a
// 10,000-line file, without and
// with secrets, whose masking runs on every line before it is cut.
func BenchmarkReadMasked(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "big.conf")
	write(b, p, strings.Repeat("some = ordinary configuration line of about a hundred bytes, nothing secret in it\n", 10_000))
	f := filepath.Join(dir, "db")
	write(b, f, fileSecret)
	if err := os.Chmod(f, 0o600); err != nil {
		b.Fatal(err)
	}
	store, err := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{
		"db": {File: f, Tools: []string{"file_operations"}}}})
	if err != nil {
		b.Fatal(err)
	}
	e := newEnv(b, setup{cfg: files.Config{Credentials: store}})
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"plain", map[string]any{"action": "read", "path": p}},
		{"secrets", map[string]any{"action": "read", "path": p, "secrets": map[string]any{"DB": "db"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				e.ok(tc.args)
			}
		})
	}
}
