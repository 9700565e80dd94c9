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
	tests := []struct {
		name    string
		h       *config.SSHHelper
		wantErr string
	}{
		{"none", nil, ""},
		{"no binaries", &config.SSHHelper{}, "no binaries"},
		{"not linux", &config.SSHHelper{Binaries: map[string]string{"darwin/arm64": bin}}, "only linux"},
		{"missing file", &config.SSHHelper{Binaries: map[string]string{"linux/amd64": bin + ".missing"}}, "no such file"},
		{"ok", &config.SSHHelper{Binaries: map[string]string{"linux/amd64": bin}, CacheDir: "c", Hidden: []string{"/x"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := helperConfig(tt.h, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.h == nil {
				if cfg != nil {
					t.Fatalf("config %+v without a helper", cfg)
				}
				return
			}
			if string(cfg.Binaries["linux/amd64"]) != "helper bytes" || cfg.CacheDir != "c" || len(cfg.Hidden) != 1 {
				t.Errorf("config %+v", cfg)
			}
		})
	}
}
