package assembly

import (
	"fmt"

	"github.com/rigout/rigout/credentials"
)

// credentialStore builds the credential store from the file's
// "credentials" section, or returns nil when it has none. The env
// backend reads through the secrets moved off the environment (its
// variables are among them: see config.File.SecretEnv), so a command never
// inherits one.
func (c *Config) credentialStore() (*credentials.Store, error) {
	if len(c.File.Credentials) == 0 {
		return nil, nil
	}
	s, err := credentials.New(credentials.Config{Aliases: c.File.Credentials, Getenv: c.Getenv})
	if err != nil {
		return nil, fmt.Errorf("config credentials: %w", err)
	}
	return s, nil
}
