package remote

import (
	"net"
	"strconv"
	"strings"
)

// Reach names what a host argument reaches, as host scopes judge it.
type Reach struct {
	// Name is a configured host's name (rigout's configuration, or a
	// literal Host line of ssh_config), "local" for this machine, or for
	// any other destination the canonical user@host:port it dials.
	Name string
	// AdHoc is set when Name is a canonical address rather than a
	// configured name: only a scope that names it exactly admits it.
	AdHoc bool
}

// Reaches returns what host leads to through the routing ladder (see
// Resolve), without connecting: one Reach, or for "auto" every host the
// route may pick. A configured name given with a user or a port of its
// own is ad hoc: it is not what the operator configured. A malformed host
// is a *HostSpecError.
func (r *Router) Reaches(host string) ([]Reach, error) {
	if r.isClosed() {
		return nil, ErrClosed
	}
	switch strings.ToLower(host) {
	case "", "local", "self":
		return []Reach{{Name: "local"}}, nil
	case "auto":
		var out []Reach
		for _, c := range r.autoCandidates() {
			if strings.EqualFold(c, "auto") {
				continue
			}
			rs, err := r.Reaches(c)
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
		}
		if r.cfg.AutoLocal && r.cfg.Local != nil {
			out = append(out, Reach{Name: "local"})
		}
		return out, nil
	}
	spec, err := ParseHostSpec(host)
	if err != nil {
		return nil, err
	}
	alias := r.inv.isAlias(spec.Host)
	if spec.User == "" && spec.Port == 0 {
		switch {
		case alias:
			return []Reach{{Name: spec.Host}}, nil
		case r.isLocal(spec.Host):
			return []Reach{{Name: "local"}}, nil
		}
	}
	ep, err := r.inv.resolve(spec)
	if err != nil {
		return nil, err
	}
	return []Reach{{Name: ep.User + "@" + net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port)), AdHoc: true}}, nil
}
