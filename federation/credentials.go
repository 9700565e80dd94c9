package federation

import (
	"context"
	"fmt"
)

// Credentials gives a downstream HTTP server the bearer token it expects.
// ref is the server's [Server.Token]. The credential store can satisfy
// it; [EnvCredentials] reads environment variables meanwhile.
type Credentials interface {
	Credential(ctx context.Context, ref string) (string, error)
}

// EnvCredentials reads a credential from the environment variable named
// by the reference, through getenv (os.Getenv, usually).
type EnvCredentials func(name string) string

// Credential returns the variable's value; an unset or empty variable is
// an error naming it (never a value).
func (e EnvCredentials) Credential(_ context.Context, ref string) (string, error) {
	v := e(ref)
	if v == "" {
		return "", fmt.Errorf("federation: environment variable %s is empty", ref)
	}
	return v, nil
}
