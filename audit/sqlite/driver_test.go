package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// TestSidecarFilesAreOwnerOnly: whichever driver this build links (the cgo
// one, or the pure-Go one under CGO_ENABLED=0), the WAL and shared-memory
// files are owner-only, under a umask that would make them readable by
// everyone, on the first open and after a reopen.
func TestSidecarFilesAreOwnerOnly(t *testing.T) {
	ctx := context.Background()
	cfg := sqlite.Config{Path: filepath.Join(t.TempDir(), "state", "audit.db")}
	for round := range 2 {
		l, err := sqlite.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("round %d: Open: %v", round, err)
		}
		if err := l.Record(ctx, audit.Event{Type: audit.TypeServerStart}); err != nil {
			t.Fatalf("round %d: Record: %v", round, err)
		}
		if _, err := l.Query(ctx, audit.Filter{}); err != nil {
			t.Fatalf("round %d: Query: %v", round, err)
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			fi, err := os.Stat(cfg.Path + suffix)
			if err != nil {
				t.Fatalf("round %d (%s): %v", round, sqlite.Driver, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("round %d (%s): %s has mode %04o, want 0600", round, sqlite.Driver, suffix, fi.Mode().Perm())
			}
		}
		if err := l.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
	}
}
