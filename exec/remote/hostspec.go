package remote

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// HostSpec is a parsed host argument: an optional user, a host name or IP
// address, and an optional port.
type HostSpec struct {
	// User is the remote login name, or empty when none was given.
	User string
	// Host is a host name, an inventory alias, or an IP address (IPv6
	// without brackets).
	Host string
	// Port is the TCP port, or 0 when none was given.
	Port int
}

// String renders the spec as it would be typed: [user@]host[:port], with
// an IPv6 address in brackets when a port follows.
func (s HostSpec) String() string {
	var b strings.Builder
	if s.User != "" {
		b.WriteString(s.User)
		b.WriteByte('@')
	}
	switch {
	case s.Port != 0:
		b.WriteString(net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
	case strings.Contains(s.Host, ":"):
		b.WriteString("[" + s.Host + "]")
	default:
		b.WriteString(s.Host)
	}
	return b.String()
}

// HostSpecError reports a host, user or jump list that rigout refuses to
// use. The rules follow OpenSSH's fix for CVE-2023-51385: a value may not
// start with '-' and may not carry shell metacharacters.
type HostSpecError struct {
	// Input is the string that was refused.
	Input string
	// Reason says which rule it broke.
	Reason string
}

func (e *HostSpecError) Error() string {
	return fmt.Sprintf("exec: invalid host %q: %s", e.Input, e.Reason)
}

// ParseHostSpec parses "[user@]host[:port]", where host is a host name, an
// IPv4 address, or an IPv6 address (bracketed when a port follows, bare
// otherwise). The user must match ^[a-z_][a-z0-9_.-]{0,31}$; the host may
// hold only letters, digits, '.', '-' and '_' and may not start with '-'
// or '.'; the port must be 1–65535. Anything else is a *HostSpecError.
func ParseHostSpec(s string) (HostSpec, error) {
	var spec HostSpec
	if s == "" {
		return spec, &HostSpecError{Input: s, Reason: "empty"}
	}
	rest := s
	if user, host, ok := strings.Cut(s, "@"); ok {
		if err := checkUser(user); err != nil {
			return spec, &HostSpecError{Input: s, Reason: err.Error()}
		}
		spec.User, rest = user, host
	}
	host, port, err := splitHostPort(rest)
	if err != nil {
		return HostSpec{}, &HostSpecError{Input: s, Reason: err.Error()}
	}
	spec.Host, spec.Port = host, port
	return spec, nil
}

// splitHostPort splits host[:port], [v6]:port, [v6] and bare IPv6.
func splitHostPort(s string) (string, int, error) {
	if s == "" {
		return "", 0, fmt.Errorf("no host name")
	}
	var host, port string
	switch {
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, fmt.Errorf("unclosed '['")
		}
		host = s[1:end]
		after := s[end+1:]
		switch {
		case after == "":
		case after[0] == ':':
			port = after[1:]
			if port == "" {
				return "", 0, fmt.Errorf("empty port")
			}
		default:
			return "", 0, fmt.Errorf("unexpected %q after ']'", after)
		}
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return "", 0, fmt.Errorf("%q in brackets is not an IP address", host)
		}
		host = a.String()
	case strings.Count(s, ":") > 1:
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", 0, fmt.Errorf("not an IPv6 address (put it in brackets to add a port)")
		}
		host = a.String()
	default:
		host = s
		if h, p, ok := strings.Cut(s, ":"); ok {
			host, port = h, p
			if port == "" {
				return "", 0, fmt.Errorf("empty port")
			}
		}
		if err := checkHostName(host); err != nil {
			return "", 0, err
		}
	}
	n := 0
	if port != "" {
		p, err := parsePort(port)
		if err != nil {
			return "", 0, err
		}
		n = p
	}
	return host, n, nil
}

func parsePort(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return n, nil
}

// checkHostName accepts host names, inventory aliases and IPv4 addresses:
// letters, digits, '.', '-', '_', at most 253 bytes, labels of at most 63,
// no empty label, and no label starting with '-'.
func checkHostName(h string) error {
	if h == "" {
		return fmt.Errorf("no host name")
	}
	if len(h) > 253 {
		return fmt.Errorf("host name longer than 253 bytes")
	}
	if h[0] == '-' {
		return fmt.Errorf("host name starts with '-'")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return fmt.Errorf("empty label in host name")
		}
		if len(label) > 63 {
			return fmt.Errorf("host name label longer than 63 bytes")
		}
		if label[0] == '-' {
			return fmt.Errorf("host name label starts with '-'")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			default:
				return fmt.Errorf("character %q is not allowed in a host name", c)
			}
		}
	}
	return nil
}

// checkHost accepts a host name or an IP address (IPv6 bare).
func checkHost(h string) error {
	if a, err := netip.ParseAddr(h); err == nil && a.Zone() == "" {
		return nil
	}
	return checkHostName(h)
}

// checkUser applies the strict rule for user names that arrive in a
// request: ^[a-z_][a-z0-9_.-]{0,31}$.
func checkUser(u string) error {
	if u == "" {
		return fmt.Errorf("empty user name")
	}
	if len(u) > 32 {
		return fmt.Errorf("user name longer than 32 bytes")
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_':
		case (c >= '0' && c <= '9') || c == '.' || c == '-':
			if i == 0 {
				return fmt.Errorf("user name must start with a lowercase letter or '_'")
			}
		default:
			return fmt.Errorf("character %q is not allowed in a user name (want ^[a-z_][a-z0-9_.-]{0,31}$)", c)
		}
	}
	return nil
}

// checkConfigUser applies the looser rule for user names written in a
// configuration file by the operator: printable ASCII without shell
// metacharacters or whitespace, not starting with '-'. Upper case is
// allowed there (Windows and directory accounts use it).
func checkConfigUser(u string) error {
	if u == "" {
		return fmt.Errorf("empty user name")
	}
	if len(u) > 64 {
		return fmt.Errorf("user name longer than 64 bytes")
	}
	if u[0] == '-' {
		return fmt.Errorf("user name starts with '-'")
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '.', c == '-', c == '$':
		default:
			return fmt.Errorf("character %q is not allowed in a user name", c)
		}
	}
	return nil
}

// ParseProxyJump parses an OpenSSH ProxyJump value: "none", or a comma
// separated list of hops, each "[user@]host[:port]" or
// "ssh://[user@]host[:port]". The hops are returned in dialing order; "none"
// and the empty string give no hops. Every hop obeys the rules of
// ParseHostSpec.
func ParseProxyJump(s string) ([]HostSpec, error) {
	if s == "" || strings.EqualFold(s, "none") {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxJumps {
		return nil, &HostSpecError{Input: s, Reason: fmt.Sprintf("more than %d jump hosts", maxJumps)}
	}
	hops := make([]HostSpec, 0, len(parts))
	for _, p := range parts {
		if p == "" {
			return nil, &HostSpecError{Input: s, Reason: "empty jump host"}
		}
		if rest, ok := strings.CutPrefix(p, "ssh://"); ok {
			p = strings.TrimSuffix(rest, "/")
		}
		h, err := ParseHostSpec(p)
		if err != nil {
			var he *HostSpecError
			if ok := asHostSpecError(err, &he); ok {
				return nil, &HostSpecError{Input: s, Reason: "jump host " + fmt.Sprintf("%q", he.Input) + ": " + he.Reason}
			}
			return nil, err
		}
		hops = append(hops, h)
	}
	return hops, nil
}

// maxJumps bounds a ProxyJump chain, including chains reached through a
// jump host's own ProxyJump.
const maxJumps = 8

func asHostSpecError(err error, target **HostSpecError) bool {
	e, ok := err.(*HostSpecError)
	if ok {
		*target = e
	}
	return ok
}
