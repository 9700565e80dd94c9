package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/federation"
)

// fileDownstream is one entry of the configuration file's "downstream"
// section: a downstream MCP server whose tools are served as NAME__TOOL.
// Give command (a stdio server the gateway starts and supervises) or url
// (streamable HTTP, with the bearer token in the variable token_env).
type fileDownstream struct {
	Command       []string          `json:"command"`
	Env           map[string]string `json:"env"`
	Dir           string            `json:"dir"`
	URL           string            `json:"url"`
	TokenEnv      string            `json:"token_env"`
	Allow         []string          `json:"allow"`
	Deny          []string          `json:"deny"`
	ReadOnlyTools []string          `json:"read_only_tools"`
	Timeout       duration          `json:"timeout"`
}

// downstreamTokenEnvs names the variables that hold downstream tokens, so
// they are treated as the gateway's secrets: moved off its environment,
// kept from commands, masked in output.
func (c *fileConfig) downstreamTokenEnvs() []string {
	var out []string
	for _, d := range c.Downstream {
		if d.TokenEnv != "" {
			out = append(out, d.TokenEnv)
		}
	}
	return out
}

// federation builds (without starting) the federation of the file's
// downstream servers, or returns nil when there are none. The HTTP
// servers' tokens are read through getenv from the variables the file
// names (the credential store will resolve them later, through
// federation.Credentials).
func (c *fileConfig) federation(getenv func(string) string, logger *slog.Logger) (*federation.Federation, error) {
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
		servers = append(servers, federation.Server{
			Name: n, Command: slices.Clone(d.Command), Env: d.Env, Dir: d.Dir,
			URL: d.URL, Token: d.TokenEnv,
			Allow: d.Allow, Deny: d.Deny, ReadOnlyTools: d.ReadOnlyTools,
			Timeout: time.Duration(d.Timeout),
		})
	}
	fed, err := federation.New(federation.Config{
		Servers:     servers,
		Credentials: federation.EnvCredentials(getenv),
		Logger:      logger,
	})
	if err != nil {
		return nil, fmt.Errorf("config: downstream: %w", err)
	}
	return fed, nil
}

// downstreams starts the federation of the file's downstream servers on
// gw, or returns nil when there are none.
func (c *common) downstreams(gw *rigout.Gateway, logger *slog.Logger) (*federation.Federation, error) {
	fed, err := c.file.federation(c.sec.getenv, logger)
	if err != nil || fed == nil {
		return nil, err
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		return nil, err
	}
	return fed, nil
}
