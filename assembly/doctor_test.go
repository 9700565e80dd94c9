package assembly_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/assembly"
)

// TestDoctor runs every check on prepared state directories and
// configurations, and looks for the findings each should give: the
// check, its status, words of its detail and of its fix.
func TestDoctor(t *testing.T) {
	release := t.TempDir() // rigout with a helper beside it, as a release ships them
	if err := os.WriteFile(filepath.Join(release, "rigout-helper-linux-amd64"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, path, data string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	type want struct {
		check  string
		status assembly.Status
		detail string // a part of the detail
		fix    string // a part of the fix
	}
	tests := []struct {
		name string
		// setup prepares the state directory dir (absent until it makes
		// it) and changes cfg.
		setup    func(t *testing.T, dir string, cfg *assembly.DoctorConfig)
		want     []want
		wantFail bool // some finding fails
	}{
		{
			name:  "fresh",
			setup: func(*testing.T, string, *assembly.DoctorConfig) {},
			want: []want{
				{"state directory", assembly.StatusOK, "does not exist yet", ""},
				{"configuration", assembly.StatusOK, "no file", ""},
				{"hosts", assembly.StatusOK, "none configured", ""},
				{"ssh agent", assembly.StatusWarn, "SSH_AUTH_SOCK is not set", "ssh-add"},
			},
		},
		{
			name: "owner-only state",
			setup: func(t *testing.T, dir string, _ *assembly.DoctorConfig) {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "token"), strings.Repeat("t", 32), 0o600)
			},
			want: []want{
				{"state directory", assembly.StatusOK, "(owner-only)", ""},
				{"token file", assembly.StatusOK, "(owner-only)", ""},
				{"audit ledger", assembly.StatusOK, "none yet", ""},
				{"gateway", assembly.StatusOK, "not running", ""},
			},
		},
		{
			name: "group and others reach the state",
			setup: func(t *testing.T, dir string, _ *assembly.DoctorConfig) {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "token"), strings.Repeat("t", 32), 0o644)
				if err := os.Chmod(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			},
			want: []want{
				{"state directory", assembly.StatusFail, "has mode 0755", "chmod 0700 "},
				{"token file", assembly.StatusFail, "has mode 0644", "chmod 0600 "},
			},
			wantFail: true,
		},
		{
			name: "short token",
			setup: func(t *testing.T, dir string, _ *assembly.DoctorConfig) {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "token"), "abc\n", 0o600)
			},
			want:     []want{{"token file", assembly.StatusFail, "holds 3 bytes", "rm "}},
			wantFail: true,
		},
		{
			name: "ledger that is no database",
			setup: func(t *testing.T, dir string, _ *assembly.DoctorConfig) {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "audit.db"), "this is not a SQLite database, and nothing should take it for one", 0o600)
			},
			want:     []want{{"audit ledger", assembly.StatusFail, "does not open", "audit.db.broken"}},
			wantFail: true,
		},
		{
			name:     "state directory is a file",
			setup:    func(t *testing.T, dir string, _ *assembly.DoctorConfig) { write(t, dir, "x", 0o600) },
			want:     []want{{"state directory", assembly.StatusFail, "is not a directory", ".bak"}},
			wantFail: true,
		},
		{
			name: "configuration that does not load",
			setup: func(t *testing.T, dir string, cfg *assembly.DoctorConfig) {
				cfg.ConfigPath = filepath.Join(filepath.Dir(dir), "rigout.json")
				write(t, cfg.ConfigPath, `{"no_such_key": true}`, 0o600)
			},
			want: []want{
				{"configuration", assembly.StatusFail, "no_such_key", "rigout config check"},
				{"ssh", assembly.StatusFail, "no_such_key", "rigout config check"},
			},
			wantFail: true,
		},
		{
			name: "ssh helper beside the program",
			setup: func(_ *testing.T, _ string, cfg *assembly.DoctorConfig) {
				cfg.Executable = filepath.Join(release, "rigout")
			},
			want: []want{{"ssh helper", assembly.StatusOK, "linux/amd64 beside " + filepath.Join(release, "rigout"), ""}},
		},
		{
			name:  "no ssh helper",
			setup: func(*testing.T, string, *assembly.DoctorConfig) {},
			want:  []want{{"ssh helper", assembly.StatusWarn, "none found", "rigout-helper-linux-<arch>"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "state")
			cfg := assembly.DoctorConfig{
				StateDir:   dir,
				KnownHosts: filepath.Join(tmp, "known_hosts"), // none: no host of this machine's user is tried
				SSHConfig:  filepath.Join(tmp, "ssh_config"),
				Executable: filepath.Join(tmp, "rigout"),
				Getenv:     func(string) string { return "" },
			}
			tt.setup(t, dir, &cfg)
			found := assembly.Doctor(context.Background(), cfg)
			failed := false
			for _, f := range found {
				failed = failed || f.Status == assembly.StatusFail
				if f.Status == assembly.StatusFail && f.Fix == "" {
					t.Errorf("%s fails without a fix: %s", f.Check, f.Detail)
				}
			}
			if failed != tt.wantFail {
				t.Errorf("something failed: %v, want %v; findings:\n%s", failed, tt.wantFail, dump(found))
			}
		want:
			for _, w := range tt.want {
				for _, f := range found {
					if f.Check == w.check && f.Status == w.status && strings.Contains(f.Detail, w.detail) && strings.Contains(f.Fix, w.fix) {
						continue want
					}
				}
				t.Errorf("no finding %s %s %q (fix %q); findings:\n%s", w.check, w.status, w.detail, w.fix, dump(found))
			}
		})
	}
}

func dump(found []assembly.Finding) string {
	var b strings.Builder
	for _, f := range found {
		fmt.Fprintf(&b, "  %-4s %-20s %s | %s\n", f.Status, f.Check, f.Detail, f.Fix)
	}
	return b.String()
}
