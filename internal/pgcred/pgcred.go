// Package pgcred refuses PostgreSQL credentials the gateway did not get
// explicitly: a password pgx read from PGPASSWORD, a password file
// (~/.pgpass, PGPASSFILE) or a service file. The commands a gateway runs
// can usually read those too, and would then reach the database that holds
// its ledger and OAuth grants; a password given in the configuration (and
// moved off the environment) they cannot.
package pgcred

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// ErrAmbient is wrapped by [Check] when the connection would use a
// password the caller did not give.
var ErrAmbient = errors.New("the connection would use a password from PGPASSWORD, a password file (~/.pgpass, PGPASSFILE) or a service file, which the commands the gateway runs can read too")

// kvPassword finds a password in a key=value connection string.
var kvPassword = regexp.MustCompile(`(^|\s)password\s*=`)

// Check returns an error wrapping [ErrAmbient] when resolved, the password
// pgx resolved for dsn, was not written in dsn itself (as a URL's user
// information or a password parameter). given is the password the caller
// gives explicitly; when it is set, pgx's resolution does not matter.
func Check(dsn, given, resolved string) error {
	if given != "" || resolved == "" || hasPassword(dsn) {
		return nil
	}
	return ErrAmbient
}

// hasPassword reports whether dsn carries a password of its own.
func hasPassword(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return false
		}
		if _, ok := u.User.Password(); ok {
			return true
		}
		return u.Query().Has("password")
	}
	return kvPassword.MatchString(dsn)
}
