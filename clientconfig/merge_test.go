package clientconfig_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rigout/rigout/clientconfig"
)

func entry(t *testing.T, c clientconfig.Client, name string, ep clientconfig.Endpoint) clientconfig.Entry {
	t.Helper()
	e, err := clientconfig.NewEntry(c, name, ep)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

// backups lists the backups Merge left beside path.
func backups(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".bak-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestMergeJSONKeepsOtherServers(t *testing.T) {
	tests := []struct {
		client clientconfig.Client
		top    string
	}{
		{clientconfig.Cursor, "mcpServers"},
		{clientconfig.ClaudeCode, "mcpServers"},
		{clientconfig.ClaudeDesktop, "mcpServers"},
		{clientconfig.VSCode, "servers"},
	}
	for _, tt := range tests {
		t.Run(string(tt.client), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp.json")
			old := `{"keepMe": [1, {"deep": "x"}], "` + tt.top + `": {"other": {"command": "/usr/bin/other", "args": ["--flag"], "env": {"K": "v"}}}}`
			if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			before := readJSON(t, path)

			backup, replaced, err := clientconfig.Merge(path, entry(t, tt.client, "rig", stdioEP))
			if err != nil || replaced {
				t.Fatalf("Merge = %q, %v, %v", backup, replaced, err)
			}
			if b, err := os.ReadFile(backup); err != nil || string(b) != old {
				t.Fatalf("backup %q holds %q, %v; want the old file byte for byte", backup, b, err)
			}
			if m := mode(t, path); m != 0o600 {
				t.Errorf("file mode %o, want 0600", m)
			}
			if m := mode(t, backup); m != 0o600 {
				t.Errorf("backup mode %o, want 0600", m)
			}
			after := readJSON(t, path)
			servers := after[tt.top].(map[string]any)
			if !reflect.DeepEqual(after["keepMe"], before["keepMe"]) ||
				!reflect.DeepEqual(servers["other"], before[tt.top].(map[string]any)["other"]) {
				t.Errorf("other keys changed:\nbefore %v\nafter  %v", before, after)
			}
			if servers["rig"] == nil {
				t.Fatalf("no entry: %v", after)
			}

			// Again, over HTTP: replaced, not doubled.
			_, replaced, err = clientconfig.Merge(path, entry(t, tt.client, "rig", httpEP))
			if err != nil || !replaced {
				t.Fatalf("second Merge: replaced %v, %v", replaced, err)
			}
			after = readJSON(t, path)
			servers = after[tt.top].(map[string]any)
			if len(servers) != 2 || strings.Contains(mustJSON(t, servers["rig"]), "stdio\"") {
				t.Errorf("servers after replace: %v", servers)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMergeRefusesWhatItCannotRead(t *testing.T) {
	tests := []struct {
		name    string
		client  clientconfig.Client
		doc     string
		wantKey string
	}{
		{"comment", clientconfig.VSCode, "{\"servers\": { // a comment\n}}", ""},
		{"trailing comma", clientconfig.Cursor, `{"mcpServers": {"a": {},}}`, ""},
		{"top-level array", clientconfig.Cursor, `[1]`, ""},
		{"servers an array", clientconfig.Cursor, `{"mcpServers": []}`, "mcpServers"},
		{"servers a string", clientconfig.VSCode, `{"servers": "x"}`, "servers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(path, []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := clientconfig.Merge(path, entry(t, tt.client, "rig", stdioEP))
			var fe *clientconfig.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Merge = %v, want a FormatError", err)
			}
			if fe.Path != path || fe.Key != tt.wantKey || fe.Err == nil {
				t.Errorf("FormatError %+v, want path %s key %q", fe, path, tt.wantKey)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.doc {
				t.Errorf("the file changed: %q", b)
			}
			if m := mode(t, path); m != 0o644 {
				t.Errorf("the file's mode changed: %o", m)
			}
			if b := backups(t, path); len(b) != 0 {
				t.Errorf("backups left: %v", b)
			}
		})
	}
}

func TestMergeTOMLReplacesOnlyItsTable(t *testing.T) {
	const head = "# my codex\nmodel = \"o4\"\n\n"
	const tail = "[mcp_servers.other]\ncommand = \"other\"   # keep this comment\n\n[profiles.x]\nmodel = \"o3\"\n"
	old := head + "[mcp_servers.rig]\ncommand = \"old\"\n\n[mcp_servers.rig.env]\nX = \"1\"\n\n" + tail
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	e := entry(t, clientconfig.Codex, "rig", httpEP)
	backup, replaced, err := clientconfig.Merge(path, e)
	if err != nil || !replaced {
		t.Fatalf("Merge = %v, %v", replaced, err)
	}
	got, _ := os.ReadFile(path)
	if want := head + e.Snippet + tail; string(got) != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(string(got), "s3cret") {
		t.Error("the token is in Codex's file")
	}
	if b, _ := os.ReadFile(backup); string(b) != old {
		t.Errorf("backup %q", b)
	}
}

func TestMergeTOMLAppends(t *testing.T) {
	tests := []struct{ name, old, want string }{
		{"no newline at the end", "a = 1", "a = 1\n\n"},
		{"newline at the end", "a = 1\n\n[x]\nb = 2\n", "a = 1\n\n[x]\nb = 2\n\n"},
		{"a longer name is another table", "[mcp_servers.rigout]\nc = 1\n", "[mcp_servers.rigout]\nc = 1\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte(tt.old), 0o600); err != nil {
				t.Fatal(err)
			}
			e := entry(t, clientconfig.Codex, "rig", stdioEP)
			_, replaced, err := clientconfig.Merge(path, e)
			if err != nil || replaced {
				t.Fatalf("Merge = %v, %v", replaced, err)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.want+e.Snippet {
				t.Errorf("merged %q, want %q", got, tt.want+e.Snippet)
			}
		})
	}
}

func TestMergeNewFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "mcp.json")
	backup, replaced, err := clientconfig.Merge(path, entry(t, clientconfig.VSCode, "rig", stdioEP))
	if err != nil || replaced || backup != "" {
		t.Fatalf("Merge = %q, %v, %v", backup, replaced, err)
	}
	if get(t, any(readJSON(t, path)), "servers.rig.type") != "stdio" {
		t.Errorf("new file: %v", readJSON(t, path))
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("new directory mode %o, want 0700", m)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("new file mode %o, want 0600", m)
	}
}

func TestMergeRefusesEntriesWithoutAFile(t *testing.T) {
	tests := []struct {
		name string
		e    clientconfig.Entry
	}{
		{"json client", clientconfig.Entry{Client: clientconfig.JSON, Name: "rig", Snippet: "{}\n"}},
		{"unknown client", clientconfig.Entry{Client: "emacs", Name: "rig", Server: map[string]any{}}},
		{"zero entry", clientconfig.Entry{}},
		{"no server", clientconfig.Entry{Client: clientconfig.Cursor, Name: "rig"}},
		{"bad name", clientconfig.Entry{Client: clientconfig.Codex, Name: "a.b", Snippet: "[mcp_servers.a.b]\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			if _, _, err := clientconfig.Merge(path, tt.e); err == nil {
				t.Fatal("merged")
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a file was written: %v", err)
			}
		})
	}
}
