package assembly_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/config"
)

func TestOpenLedger(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  assembly.Config
		want string // "" for success
		path string // the SQLite file it must open
	}{
		{"state directory", assembly.Config{File: &config.File{}, StateDir: dir}, "", filepath.Join(dir, "audit.db")},
		{"audit db wins", assembly.Config{File: &config.File{}, StateDir: dir, AuditDB: filepath.Join(dir, "other.db")}, "", filepath.Join(dir, "other.db")},
		{"nowhere", assembly.Config{File: &config.File{}}, "neither Config.AuditDB nor Config.StateDir", ""},
		{"no file", assembly.Config{StateDir: dir}, "Config.File is nil", ""},
		{"key variable unset", assembly.Config{File: &config.File{Audit: config.Audit{KeyEnv: "RIGOUT_TEST_NO_SUCH_KEY"}}, StateDir: dir}, "which is not set", ""},
		{"password in the DSN", assembly.Config{File: &config.File{Audit: config.Audit{Postgres: "postgres://u:pw@db/rigout"}}}, "password_env", ""},
		{"postgres without a chain key", assembly.Config{File: &config.File{Audit: config.Audit{Postgres: "postgres://u@db/rigout"}}}, "key_env", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := assembly.OpenLedger(context.Background(), tt.cfg)
			if tt.want != "" {
				if err == nil {
					l.Close()
					t.Fatal("opened")
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want it to mention %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			u, ok := l.(interface{ Unwrap() assembly.Ledger })
			if !ok {
				t.Fatalf("%T does not stamp intent rows", l)
			}
			if _, ok := u.Unwrap().(*sqlite.Ledger); !ok {
				t.Errorf("under the stamp: %T, want the SQLite ledger", u.Unwrap())
			}
			if _, err := os.Stat(tt.path); err != nil {
				t.Errorf("ledger file: %v", err)
			}
		})
	}
}
