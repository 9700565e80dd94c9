package main

import (
	"fmt"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/credentials"
	credtool "github.com/rigout/rigout/tools/credentials"
)

// credentialStore builds the credential store from the file's
// "credentials" section, or returns nil when it has none. The env
// backend reads through the secrets moved off the environment (its
// variables are among them: see config.File.SecretEnv), so a command never
// inherits one.
func (c *common) credentialStore() (*credentials.Store, error) {
	if len(c.file.Credentials) == 0 {
		return nil, nil
	}
	s, err := credentials.New(credentials.Config{Aliases: c.file.Credentials, Getenv: c.sec.getenv})
	if err != nil {
		return nil, fmt.Errorf("config credentials: %w", err)
	}
	return s, nil
}

// credentialTools returns the credentials tool and its instructions when
// a store is configured: without one the tool is not served, which keeps
// the default tools/list small.
func credentialTools(store *credentials.Store) ([]rigout.Tool, []string, error) {
	if store == nil {
		return nil, nil, nil
	}
	f, err := credtool.New(credtool.Config{Store: store})
	if err != nil {
		return nil, nil, err
	}
	return f.Tools(), []string{f.Instructions()}, nil
}
