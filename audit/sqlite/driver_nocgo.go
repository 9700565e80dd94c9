//go:build !cgo

package sqlite

import (
	"errors"
	"io/fs"
	"net/url"
	"os"

	_ "github.com/ncruces/go-sqlite3/driver" // registers the "sqlite3" database/sql driver
)

// driverName is the database/sql driver the ledger opens: without cgo,
// github.com/ncruces/go-sqlite3, the same SQLite translated to pure Go, so
// that CGO_ENABLED=0 builds (cross builds, the release archives) keep a
// working ledger.
const driverName = "sqlite3"

// Driver names the SQLite driver this build links, for doctor and status.
const Driver = "ncruces/go-sqlite3 (pure Go, no cgo)"

// defaultBusyTimeout is go-sqlite3's (the cgo driver's) default, kept so
// that both builds wait alike when no _busy_timeout is given.
const defaultBusyTimeout = "5000"

// dsn is the data source name of the database at path with the
// connection parameters q, given in go-sqlite3's (the cgo driver's)
// spelling and rewritten for ncruces/go-sqlite3: _journal_mode,
// _synchronous and _busy_timeout become _pragma parameters, _txlock is
// kept and defaults to deferred as in go-sqlite3 (ncruces defaults to
// immediate), and SQLite's own URI parameters such as mode pass through.
// modeof=path makes the WAL file take the database's (owner-only) mode, as
// SQLite's C VFS does by itself.
func dsn(path string, q url.Values) string {
	out := url.Values{"modeof": {path}}
	pragmas := map[string]string{"_journal_mode": "journal_mode", "_synchronous": "synchronous", "_busy_timeout": "busy_timeout"}
	for k, vs := range q {
		p, ok := pragmas[k]
		if !ok {
			out[k] = vs
			continue
		}
		for _, v := range vs {
			out.Add("_pragma", p+"("+v+")")
		}
	}
	if q.Get("_busy_timeout") == "" {
		out.Add("_pragma", "busy_timeout("+defaultBusyTimeout+")")
	}
	if q.Get("_txlock") == "" {
		out.Set("_txlock", "deferred")
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: out.Encode()}
	return u.String()
}

// beforeOpen creates the database's -shm file owner-only if it is
// missing: ncruces/go-sqlite3's VFS creates it with the umask's mode where
// SQLite's C VFS copies the database's mode (modeof covers the WAL file,
// not this one).
func beforeOpen(path string) error {
	f, err := os.OpenFile(path+"-shm", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
