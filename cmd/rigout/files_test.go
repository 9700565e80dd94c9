package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestE2EFiles runs the binary and uses the file tools over stdio: they
// are registered, work, and keep the default tools/list under 10 KiB.
func TestE2EFiles(t *testing.T) {
	s := startStdio(t)
	ctx := context.Background()
	tools, err := s.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tools)
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, n := range []string{"file_operations", "search_files", "bulk_file_transfer"} {
		if !names[n] {
			t.Errorf("%s missing from tools/list", n)
		}
	}
	t.Logf("default tools/list: %d tools, %d bytes", len(tools.Tools), len(b))
	if len(b) > 10<<10 {
		t.Errorf("the default tools/list is %d bytes; the budget is 10 KiB", len(b))
	}

	p := filepath.Join(t.TempDir(), "f.txt")
	res := call(t, s.client, "file_operations", map[string]any{"action": "write", "path": p, "content": "a\nb\n"})
	if res.IsError {
		t.Fatal(resultText(res))
	}
	res = call(t, s.client, "file_operations", map[string]any{"action": "read", "path": p})
	if res.IsError || !strings.Contains(resultText(res), "     2\tb\n") {
		t.Fatalf("read: %s", resultText(res))
	}
	if b, _ := os.ReadFile(p); string(b) != "a\nb\n" {
		t.Fatalf("content %q", b)
	}
	// Output is redacted like command output.
	if err := os.WriteFile(p, []byte("password=hunter2hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = call(t, s.client, "file_operations", map[string]any{"action": "read", "path": p})
	if strings.Contains(resultText(res), "hunter2hunter2") {
		t.Fatalf("read shows a secret: %s", resultText(res))
	}
}
