package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout/audit"
)

func TestUnsafeSyncNormal(t *testing.T) {
	l, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "audit.db"), UnsafeSyncNormal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var level int
	if err := l.wconn.QueryRowContext(context.Background(), `PRAGMA synchronous`).Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != 1 {
		t.Errorf("synchronous = %d, want 1 (NORMAL)", level)
	}
	if err := l.Record(context.Background(), audit.Event{Type: audit.TypeServerStart}); err != nil {
		t.Fatal(err)
	}
}
