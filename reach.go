package rigout

import (
	"context"
	"strings"
)

// HostReach is what a host argument reaches, as host scopes judge it
// (see [Config.ResolveHost]).
type HostReach struct {
	// Name is a configured host's name, "local" for this machine, or for a
	// destination nobody configured its canonical user@host:port.
	Name string
	// AdHoc marks a Name that is an address rather than a configured
	// name: only a host scope that names it exactly, or "*", admits it.
	AdHoc bool
}

// HostAsGiven is the resolution of a host name the gateway cannot
// interpret itself (a federated peer's, or any when Config.ResolveHost is
// nil): the value as given, ad hoc when it has the form of an address (a
// user@ or a :port, or an IPv6 literal), so that no glob admits it.
func HostAsGiven(_ context.Context, host string) ([]HostReach, error) {
	return []HostReach{{Name: host, AdHoc: strings.ContainsAny(host, "@:[]")}}, nil
}

// reachOf resolves one host value with the argument's resolver, the
// gateway's, or HostAsGiven.
func (c *Call) reachOf(ctx context.Context, arg *HostArg, host string) ([]HostReach, error) {
	resolve := HostAsGiven
	switch {
	case arg != nil && arg.Resolve != nil:
		resolve = arg.Resolve
	case c.gw != nil && c.gw.cfg.ResolveHost != nil:
		resolve = c.gw.cfg.ResolveHost
	}
	return resolve(ctx, host)
}
