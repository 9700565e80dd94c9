// Package sqlitetest provides test helpers for package sqlite: [Open] opens
// a real ledger in a test's temporary directory. For an in-memory fake that
// needs no database, see package github.com/rigout/rigout/audit/audittest.
package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout/audit/sqlite"
)

// Open opens a real ledger in a new temporary directory of t, applying mod
// to the configuration first if it is not nil, and closes it when the test
// ends. It fails the test if the ledger cannot be opened.
func Open(t testing.TB, mod func(*sqlite.Config)) *sqlite.Ledger {
	t.Helper()
	cfg := sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db")}
	if mod != nil {
		mod(&cfg)
	}
	l, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
