package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestFlagArgTakesEverySpelling(t *testing.T) {
	for _, args := range [][]string{
		{"--addr", "x", "--auth-token", "SECRET", "--no-ssh"},
		{"--addr", "x", "--auth-token=SECRET", "--no-ssh"},
		{"--addr", "x", "-auth-token", "SECRET", "--no-ssh"},
		{"--addr", "x", "-auth-token=SECRET", "--no-ssh"},
	} {
		v, found, rest := flagArg(args, "auth-token")
		if v != "SECRET" || !found || !slices.Equal(rest, []string{"--addr", "x", "--no-ssh"}) {
			t.Errorf("flagArg(%q) = %q %v %q", args, v, found, rest)
		}
	}
	// After "--" nothing is a flag; a longer name is another flag.
	v, found, rest := flagArg([]string{"--auth-tokens", "a", "--", "--auth-token", "b"}, "auth-token")
	if found || v != "" || len(rest) != 5 {
		t.Errorf("flagArg = %q %v %q", v, found, rest)
	}
	d, rest := boolArg([]string{"--detach", "--addr", "x", "-detach=true"}, "detach")
	if !d || !slices.Equal(rest, []string{"--addr", "x"}) {
		t.Errorf("boolArg = %v %q", d, rest)
	}
}

func TestTailLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	var sb strings.Builder
	for i := range 1000 {
		sb.WriteString(strings.Repeat("x", i%97) + "|" + itoa(i) + "\n")
	}
	sb.WriteString("partial")
	os.WriteFile(p, []byte(sb.String()), 0o600)
	f, _ := os.Open(p)
	defer f.Close()
	off, lines := tailLines(f, 3)
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "|997") || !strings.HasSuffix(lines[2], "|999") {
		t.Fatalf("tailLines = %q", lines)
	}
	if fi, _ := f.Stat(); off != fi.Size()-int64(len("partial")) {
		t.Fatalf("offset %d, want just before the partial line", off)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestMergeTOMLTable(t *testing.T) {
	doc := "model = \"o4\"\n\n[mcp_servers.rigout]\ncommand = \"old\"\n\n[mcp_servers.rigout.env]\nX = \"1\"\n\n[mcp_servers.other]\ncommand = \"other\"\n"
	out, replaced := mergeTOMLTable([]byte(doc), "mcp_servers.rigout", "[mcp_servers.rigout]\nurl = \"new\"\n")
	s := string(out)
	if !replaced || strings.Contains(s, "old") || strings.Contains(s, "X = ") || !strings.Contains(s, "url = \"new\"") ||
		!strings.Contains(s, "[mcp_servers.other]\ncommand = \"other\"") || !strings.HasPrefix(s, "model = \"o4\"") {
		t.Fatalf("merged:\n%s", s)
	}
	out, replaced = mergeTOMLTable([]byte("a = 1"), "mcp_servers.rigout", "[mcp_servers.rigout]\n")
	if replaced || string(out) != "a = 1\n\n[mcp_servers.rigout]\n" {
		t.Fatalf("appended: %q", out)
	}
}

func TestMergeJSONServerRefusesNonObjects(t *testing.T) {
	if _, _, err := mergeJSONServer([]byte(`{"mcpServers": []}`), "mcpServers", "rigout", map[string]any{}); err == nil {
		t.Error("an array of servers was overwritten")
	}
	if _, _, err := mergeJSONServer([]byte(`[1]`), "mcpServers", "rigout", map[string]any{}); err == nil {
		t.Error("a top-level array was overwritten")
	}
	out, replaced, err := mergeJSONServer(nil, "servers", "rigout", map[string]any{"type": "stdio"})
	if err != nil || replaced || !strings.Contains(string(out), `"rigout"`) {
		t.Fatalf("new file: %s %v %v", out, replaced, err)
	}
}
