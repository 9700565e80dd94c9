//go:build !cgo

package sqlite

import (
	"net/url"
	"slices"
	"testing"
)

// TestDSNNoCgo: go-sqlite3's parameter spelling, which the ledger uses,
// becomes ncruces/go-sqlite3's, with go-sqlite3's defaults kept.
func TestDSNNoCgo(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   url.Values
		want url.Values
	}{
		{"defaults", url.Values{},
			url.Values{"modeof": {"/s/a.db"}, "_pragma": {"busy_timeout(5000)"}, "_txlock": {"deferred"}}},
		{"writer", url.Values{"_journal_mode": {"WAL"}, "_synchronous": {"FULL"}, "_busy_timeout": {"250"}, "_txlock": {"immediate"}},
			url.Values{"modeof": {"/s/a.db"}, "_pragma": {"busy_timeout(250)", "journal_mode(WAL)", "synchronous(FULL)"}, "_txlock": {"immediate"}}},
		{"reader", url.Values{"mode": {"ro"}, "_busy_timeout": {"100"}},
			url.Values{"modeof": {"/s/a.db"}, "mode": {"ro"}, "_pragma": {"busy_timeout(100)"}, "_txlock": {"deferred"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(dsn("/s/a.db", tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if u.Scheme != "file" || u.Path != "/s/a.db" {
				t.Errorf("dsn = %s: want a file: URI of /s/a.db", u)
			}
			got := u.Query()
			if len(got["_pragma"]) > 1 {
				// Map iteration order: compare pragmas as a set.
				slices.Sort(got["_pragma"])
			}
			if got.Encode() != tc.want.Encode() {
				t.Errorf("dsn parameters = %s, want %s", got.Encode(), tc.want.Encode())
			}
		})
	}
}
