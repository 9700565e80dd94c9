package rigout

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
)

// resolveAction settles the call's action and, from it, the call's risk.
func (c *Call) resolveAction() error {
	t := c.Tool
	if t.Action == "" {
		return nil
	}
	a, _ := c.Args[t.Action].(string)
	if t.ActionAlias != "" {
		alias, _ := c.Args[t.ActionAlias].(string)
		switch {
		case a == "":
			a = alias
		case alias != "" && alias != a:
			return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s %q and %s %q: give one (%s is the older name of %s)", t.Action, a, t.ActionAlias, alias, t.ActionAlias, t.Action)}}
		}
	}
	if a == "" {
		return &ArgumentError{Tool: t.Name, Problems: []string{t.Action + ": required: one of " + strings.Join(sortedKeys(t.Actions), ", ")}}
	}
	r, ok := t.Actions[a]
	if !ok {
		return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s: unknown action %q: want one of %s", t.Action, a, strings.Join(sortedKeys(t.Actions), ", "))}}
	}
	c.action, c.risk = a, r
	return nil
}

// resolveHosts collects the hosts the call names through its declared host
// arguments, expanding selectors, or the tool's default host.
func (c *Call) resolveHosts(ctx context.Context) error {
	t := c.Tool
	var hosts []string
	var from []*HostArg // the argument each of hosts came from; nil for DefaultHost
	named := false
	for i := range t.Hosts {
		h := &t.Hosts[i]
		for len(from) < len(hosts) {
			from = append(from, &t.Hosts[i-1])
		}
		v, ok := c.Args[h.Name]
		if s, isString := v.(string); !ok || v == nil || (isString && s == "") {
			continue // unset; some clients send "" for an optional field
		}
		named = true
		switch v := v.(type) {
		case string:
			if strings.TrimSpace(v) == "" {
				return &ArgumentError{Tool: t.Name, Problems: []string{h.Name + ": blank host name or selector"}}
			}
			if h.Select == nil {
				hosts = append(hosts, v)
				continue
			}
			names, err := h.Select(ctx, v)
			if err != nil {
				return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s: selector %q: %v", h.Name, v, err)}}
			}
			if len(names) == 0 {
				return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s: selector %q matches no host", h.Name, v)}}
			}
			hosts = append(hosts, names...)
		case []any:
			if len(v) == 0 {
				return &ArgumentError{Tool: t.Name, Problems: []string{h.Name + ": empty list of hosts"}}
			}
			for i, e := range v {
				s, ok := e.(string)
				if !ok || strings.TrimSpace(s) == "" {
					return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s[%d]: want a host name", h.Name, i)}}
				}
				hosts = append(hosts, s)
			}
		case []string: // an in-process client passing Go values
			if len(v) == 0 {
				return &ArgumentError{Tool: t.Name, Problems: []string{h.Name + ": empty list of hosts"}}
			}
			hosts = append(hosts, v...)
		default:
			return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s: want a host name or a list of them, got %T", h.Name, v)}}
		}
	}
	if len(t.Hosts) > 0 {
		for len(from) < len(hosts) {
			from = append(from, &t.Hosts[len(t.Hosts)-1])
		}
	}
	if !named && t.DefaultHost != "" {
		hosts, from = []string{t.DefaultHost}, []*HostArg{nil}
	}
	// Host scopes judge what each value reaches, never the value itself.
	seen := map[HostReach]bool{}
	for i, h := range hosts {
		rs, err := c.reachOf(ctx, from[i], h)
		if err == nil && len(rs) == 0 {
			err = fmt.Errorf("reaches no host")
		}
		if err != nil {
			return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("host %q: %v", h, err)}}
		}
		for _, r := range rs {
			if !seen[r] {
				seen[r] = true
				c.reaches = append(c.reaches, r)
			}
		}
	}
	c.hosts = dedupe(hosts)
	return nil
}

// resolvePaths resolves every declared path argument the call sets.
func (c *Call) resolvePaths(ctx context.Context) error {
	t := c.Tool
	for _, p := range t.Paths {
		v, ok := c.Args[p.Name]
		if s, isString := v.(string); !ok || v == nil || (isString && s == "") {
			continue // unset; some clients send "" for an optional field
		}
		var raw []string
		switch v := v.(type) {
		case string:
			raw = []string{v}
		case []any:
			for i, e := range v {
				s, ok := e.(string)
				if !ok {
					return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s[%d]: want a path", p.Name, i)}}
				}
				raw = append(raw, s)
			}
		case []string:
			raw = v
		default:
			return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s: want a path, got %T", p.Name, v)}}
		}
		for _, r := range raw {
			resolved, err := c.resolvePath(ctx, p, r)
			if err != nil {
				return &ArgumentError{Tool: t.Name, Problems: []string{fmt.Sprintf("%s: %v", p.Name, err)}}
			}
			if c.paths == nil {
				c.paths = make(map[string][]string)
			}
			c.paths[p.Name] = append(c.paths[p.Name], resolved)
		}
	}
	return nil
}

func (c *Call) resolvePath(ctx context.Context, p PathArg, v string) (string, error) {
	if strings.ContainsRune(v, 0) {
		return "", fmt.Errorf("path contains a NUL byte")
	}
	if p.Resolve != nil {
		return p.Resolve(ctx, c, v)
	}
	if v == "" {
		return "", fmt.Errorf("empty path in the list")
	}
	if !path.IsAbs(v) && len(c.principal.Scopes.Roots) > 0 {
		return "", fmt.Errorf("%q is relative; this token is confined to file roots, so give an absolute path", v)
	}
	return path.Clean(v), nil
}

// authorize refuses calls outside the caller's scopes: writes by a
// read-only token, each host, each path and each capability the call
// needs (admit has checked the tool scope already). The error is an
// *auth.ScopeError naming the scope.
func (c *Call) authorize() error {
	s := c.principal.Scopes
	if !c.ReadOnly() {
		if err := s.RequireWrite(); err != nil {
			return err
		}
	}
	for _, r := range c.reaches {
		if err := s.RequireReach(r.Name, r.AdHoc); err != nil {
			return err
		}
	}
	for _, p := range c.Tool.Paths {
		for _, v := range c.paths[p.Name] {
			if err := s.RequirePath(v); err != nil {
				return err
			}
		}
	}
	for _, n := range c.Tool.Needs {
		if len(n.Actions) > 0 && !slices.Contains(n.Actions, c.action) {
			continue
		}
		if n.When != "" {
			if set, _ := c.Args[n.When].(bool); !set {
				continue
			}
		}
		if err := n.Capability.require(s); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// dedupe drops repeated entries, keeping the first of each.
func dedupe(s []string) []string {
	if len(s) < 2 {
		return s
	}
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
