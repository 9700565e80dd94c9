//go:build cgo

package sqlite

import (
	"net/url"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" database/sql driver
)

// driverName is the database/sql driver the ledger opens: with cgo,
// github.com/mattn/go-sqlite3 (SQLite compiled from C).
const driverName = "sqlite3"

// Driver names the SQLite driver this build links, for doctor and status.
const Driver = "mattn/go-sqlite3 (cgo)"

// dsn is the data source name of the database at path with the
// connection parameters q, in go-sqlite3's spelling (_journal_mode,
// _synchronous, _busy_timeout, _txlock, and SQLite's own URI parameters
// such as mode).
func dsn(path string, q url.Values) string {
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// beforeOpen does nothing with cgo: SQLite's C VFS gives the WAL and -shm
// files the database's mode by itself.
func beforeOpen(path string) error { return nil }
