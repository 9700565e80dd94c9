package main

import (
	"os"
	"path/filepath"
	"testing"
)

// writeConfig writes a configuration file of body in a temporary
// directory and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rigout.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
