package auth

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// IsLoopback reports whether hostOrAddr names the loopback interface: any
// address in 127.0.0.0/8, ::1 (also IPv4-mapped loopback), or the name
// "localhost" (any letter case), each with or without a port. A wildcard
// ("0.0.0.0", "::"), an empty value, a zone, another name, or anything it
// cannot parse is not loopback: the safe answer when in doubt is "needs
// authentication".
func IsLoopback(hostOrAddr string) bool {
	host, _, ok := splitHostPort(hostOrAddr)
	if !ok {
		return false
	}
	return isLoopbackHost(host)
}

// isLoopbackHost is IsLoopback for a bare host (no port, no brackets).
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return false
	}
	return a.Unmap().IsLoopback()
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port" into a
// lower-cased host without brackets and a port ("" when absent). ok is false
// for anything malformed, including an empty host or a non-numeric port.
func splitHostPort(s string) (host, port string, ok bool) {
	if s == "" {
		return "", "", false
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		if h == "" || !validPort(p) {
			return "", "", false
		}
		return strings.ToLower(h), p, true
	}
	// No port. A bracketed IPv6 literal without port, or a bare host.
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") || len(s) < 3 {
			return "", "", false
		}
		h := s[1 : len(s)-1]
		if _, err := netip.ParseAddr(h); err != nil {
			return "", "", false
		}
		return strings.ToLower(h), "", true
	}
	if strings.ContainsAny(s, "[]/ \t") {
		return "", "", false
	}
	if strings.Contains(s, ":") {
		// A bare IPv6 literal ("::1") is a host; "host:" is not.
		if _, err := netip.ParseAddr(s); err != nil {
			return "", "", false
		}
	}
	return strings.ToLower(s), "", true
}

// validPort reports whether p is a decimal port 1–65535 (or "0", which a
// listener may carry before it is bound).
func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535 && strconv.Itoa(n) == p
}
