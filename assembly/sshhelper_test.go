package assembly

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/config"
)

func TestSSHHelperConfig(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "rigout-helper")
	if err := os.WriteFile(bin, []byte("helper bytes"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A release's layout: rigout with rigout-helper-linux-<arch> beside
	// it, reached here through a symbolic link (as /usr/local/bin/rigout
	// often is).
	release := t.TempDir()
	exe := filepath.Join(release, "rigout")
	for name, data := range map[string]string{"rigout": "rigout bytes", "rigout-helper-linux-arm64": "arm64 helper"} {
		if err := os.WriteFile(filepath.Join(release, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "rigout")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(t.TempDir(), "rigout")
	dirHelper := t.TempDir()
	if err := os.Mkdir(filepath.Join(dirHelper, "rigout-helper-linux-amd64"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		h          *config.SSHHelper
		exe        string
		wantErr    string
		wantBins   map[string]string
		wantOrigin string
	}{
		{"none beside, none configured", nil, bare, "", map[string]string{}, "none found: no rigout-helper-linux-<arch> beside " + bare},
		{"unknown executable", nil, "", "", map[string]string{}, "none found"},
		{"found beside the release binary", nil, link, "", map[string]string{"linux/arm64": "arm64 helper"}, "linux/arm64 beside " + exe},
		{"empty helper section finds them too", &config.SSHHelper{CacheDir: "c"}, exe, "", map[string]string{"linux/arm64": "arm64 helper"}, "linux/arm64 beside " + exe},
		{"configured wins", &config.SSHHelper{Binaries: map[string]string{"linux/amd64": bin}, CacheDir: "c", Hidden: []string{"/x"}}, exe,
			"", map[string]string{"linux/amd64": "helper bytes"}, "ssh.helper.binaries"},
		{"a directory where the helper should be", nil, filepath.Join(dirHelper, "rigout"), "not a regular file", nil, ""},
		{"not linux", &config.SSHHelper{Binaries: map[string]string{"darwin/arm64": bin}}, bare, "only linux", nil, ""},
		{"missing file", &config.SSHHelper{Binaries: map[string]string{"linux/amd64": bin + ".missing"}}, bare, "no such file", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := HelperConfig(tt.h, nil, tt.exe)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for p, b := range cfg.Binaries {
				got[p] = string(b)
			}
			if len(got) != len(tt.wantBins) {
				t.Errorf("binaries %v, want %v", got, tt.wantBins)
			}
			for p, b := range tt.wantBins {
				if got[p] != b {
					t.Errorf("binaries %v, want %v", got, tt.wantBins)
				}
			}
			if !strings.Contains(cfg.Origin, tt.wantOrigin) {
				t.Errorf("origin %q, want %q", cfg.Origin, tt.wantOrigin)
			}
			if tt.h != nil && cfg.CacheDir != tt.h.CacheDir {
				t.Errorf("cache dir %q, want %q", cfg.CacheDir, tt.h.CacheDir)
			}
		})
	}
}
