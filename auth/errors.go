package auth

import "errors"

// Sentinel errors returned (wrapped) by [New].
var (
	// ErrNoCredentials: the Config names no token, no OAuth server and not
	// InsecureNoAuth.
	ErrNoCredentials = errors.New("auth: no token or OAuth server configured")
	// ErrNoAuthNotLoopback: InsecureNoAuth on a listener that is not
	// loopback.
	ErrNoAuthNotLoopback = errors.New("auth: no-auth is refused on a non-loopback listener")
)

// ConfigError reports an invalid [Config] field.
type ConfigError struct {
	// Field names the setting, e.g. "Tokens[2].Name" or "OAuth.Clients[0]".
	Field string
	// Reason says what is wrong with it.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *ConfigError) Error() string {
	s := "auth: config " + e.Field + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }
