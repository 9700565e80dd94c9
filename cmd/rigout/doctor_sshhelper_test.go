package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/config"
)

// TestDoctorSSHHelper: doctor names the helpers hosts get, and warns when
// there are none.
func TestDoctorSSHHelper(t *testing.T) {
	with := t.TempDir()
	if err := os.WriteFile(filepath.Join(with, "rigout-helper-linux-amd64"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, exe, status, detail string
	}{
		{"release layout", filepath.Join(with, "rigout"), "ok", "linux/amd64 beside " + filepath.Join(with, "rigout")},
		{"none", filepath.Join(t.TempDir(), "rigout"), "warn", "none found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &doctor{file: &config.File{}}
			d.sshHelper(func() (string, error) { return tt.exe, nil })
			if len(d.found) != 1 || d.found[0].Status != tt.status || !strings.Contains(d.found[0].Detail, tt.detail) {
				t.Errorf("findings %+v, want %s %q", d.found, tt.status, tt.detail)
			}
		})
	}
}
