package assembly

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/federation"
)

// downstreamTool is the tool name a credential alias must allow (its
// "tools") to serve as a downstream server's token.
const downstreamTool = "downstream"

// downstreamCredentials resolves a downstream HTTP server's token: a
// reference "env:VAR" through getenv, "credential:ALIAS" through the
// credential store, which must allow the alias for downstreamTool.
type downstreamCredentials struct {
	getenv func(string) string
	store  *credentials.Store // nil without a credentials section
}

// Credential implements federation.Credentials. Errors name the
// variable or alias, never a value.
func (d downstreamCredentials) Credential(ctx context.Context, ref string) (string, error) {
	if alias, ok := strings.CutPrefix(ref, "credential:"); ok {
		if d.store == nil {
			return "", fmt.Errorf("credential %q: the configuration has no credentials section", alias)
		}
		if err := d.store.AllowTool(alias, downstreamTool); err != nil {
			return "", err
		}
		v, err := d.store.Resolve(ctx, alias)
		if err != nil {
			return "", err
		}
		return v.Reveal(), nil
	}
	return federation.EnvCredentials(d.getenv).Credential(ctx, strings.TrimPrefix(ref, "env:"))
}

// federation builds (without starting) the federation of the file's
// downstream servers, or returns nil when there are none. The HTTP
// servers' tokens come from the variables (token_env) or credential
// aliases (token_credential) the file names. Stdio servers start in sb,
// each in the view of its own principal "federation:NAME" (see
// viewPrincipal); unsafeNoSandbox, with a nil sb, starts them unconfined.
func federationOf(c *config.File, creds downstreamCredentials, sb *exec.Sandbox, unsafeNoSandbox bool, logger *slog.Logger) (*federation.Federation, error) {
	if len(c.Downstream) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(c.Downstream))
	for n := range c.Downstream {
		names = append(names, n)
	}
	sort.Strings(names)
	var servers []federation.Server
	for _, n := range names {
		d := c.Downstream[n]
		var token string
		switch {
		case d.TokenEnv != "" && d.TokenCredential != "":
			return nil, fmt.Errorf("config: downstream %s: give token_env or token_credential, not both", n)
		case d.TokenEnv != "":
			token = "env:" + d.TokenEnv
		case d.TokenCredential != "":
			token = "credential:" + d.TokenCredential
		}
		var envCreds map[string]string
		for k, alias := range d.EnvCredentials {
			if envCreds == nil {
				envCreds = map[string]string{}
			}
			envCreds[k] = "credential:" + alias
		}
		servers = append(servers, federation.Server{
			Name: n, Command: slices.Clone(d.Command), Env: d.Env, Dir: d.Dir,
			URL: d.URL, Token: token, EnvCredentials: envCreds,
			MaxResult: d.MaxResultBytes, MaxMessage: d.MaxMessageBytes,
			Allow: d.Allow, Deny: d.Deny, ReadOnlyTools: d.ReadOnlyTools, PathArgs: d.PathArgs,
			Timeout: time.Duration(d.Timeout),
		})
	}
	fed, err := federation.New(federation.Config{
		Servers:         servers,
		Credentials:     creds,
		Logger:          logger,
		Sandbox:         sb,
		UnsafeNoSandbox: sb == nil && unsafeNoSandbox,
	})
	if err != nil {
		return nil, fmt.Errorf("config: downstream: %w", err)
	}
	return fed, nil
}

// downstreams starts the federation of the file's downstream servers on
// gw, or returns nil when there are none. Stdio servers start in sb, nil
// only with Config.UnsafeNoSandbox.
func (c *Config) downstreams(gw *rigout.Gateway, sb *exec.Sandbox, store *credentials.Store, logger *slog.Logger) (*federation.Federation, error) {
	fed, err := federationOf(c.File, downstreamCredentials{getenv: c.Getenv, store: store}, sb, c.UnsafeNoSandbox, logger)
	if err != nil || fed == nil {
		return nil, err
	}
	for _, v := range c.File.SecretLookingEnv() {
		logger.Warn("downstream env value looks like a secret written in the configuration file; keep it in the credential store and name it in env_credentials", "downstream_env", v)
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		return nil, err
	}
	return fed, nil
}
