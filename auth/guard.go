package auth

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// hostRule is one accepted Host value. port "" accepts any port.
type hostRule struct {
	host string
	port string
	// loopback matches every loopback name instead of host.
	loopback bool
	// anyIP matches every IP literal instead of host.
	anyIP bool
}

func (f *Front) initHostsAndOrigins() error {
	c := f.cfg
	// Loopback names on the listener's port (any port when unknown).
	f.hosts = append(f.hosts, hostRule{loopback: true, port: f.listenPort})
	if !f.loopback {
		// DNS rebinding needs a name that resolves to us; an IP literal in
		// Host cannot be one, so a non-loopback listener accepts them.
		f.hosts = append(f.hosts, hostRule{anyIP: true})
	}
	// ResourceURL's host, on its explicit port; on any port when it has
	// none (a TLS-terminating proxy may pass "Host: name" on plain http).
	ru, _ := url.Parse(f.resource)
	f.hosts = append(f.hosts, hostRule{host: strings.ToLower(ru.Hostname()), port: ru.Port()})
	for i, h := range c.AllowedHosts {
		host, port, ok := splitHostPort(h)
		if !ok || !validHostname(host) {
			return &ConfigError{Field: "AllowedHosts", Reason: "not a host or host:port: " + quoteForError(h, i)}
		}
		f.hosts = append(f.hosts, hostRule{host: host, port: port})
	}

	f.origins = map[string]bool{f.origin: true}
	if f.listenPort != "" {
		for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
			f.origins["http://"+h+":"+f.listenPort] = true
		}
	}
	for i, o := range c.AllowedOrigins {
		n, ok := normalizeOrigin(o)
		if !ok {
			return &ConfigError{Field: "AllowedOrigins", Reason: "not an origin (scheme://host[:port]; \"*\" and \"null\" are refused): " + quoteForError(o, i)}
		}
		f.origins[n] = true
	}
	return nil
}

// quoteForError shows a configured value in an error; these are not secrets.
func quoteForError(s string, i int) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return fmt.Sprintf("[%d] %q", i, s)
}

// hostAllowed reports whether the Host header value is acceptable.
func (f *Front) hostAllowed(hostHeader string, tls bool) bool {
	host, port, ok := splitHostPort(hostHeader)
	if !ok || !validHostname(host) {
		return false
	}
	eff := port
	if eff == "" {
		eff = "80"
		if tls {
			eff = "443"
		}
	}
	for _, rule := range f.hosts {
		if rule.port != "" && rule.port != eff {
			continue
		}
		switch {
		case rule.loopback:
			if isLoopbackHost(host) {
				return true
			}
		case rule.anyIP:
			if _, err := netip.ParseAddr(host); err == nil {
				return true
			}
		case rule.host == host:
			return true
		}
	}
	return false
}

// normalizeOrigin returns the serialised origin scheme://host[:port] in
// lower case with the default port dropped, or ok false for anything that
// is not an http(s) origin ("null", paths, user info, bad hosts, IDN in
// Unicode form).
func normalizeOrigin(o string) (string, bool) {
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok {
		return "", false
	}
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port, ok := splitHostPort(rest)
	if !ok || !validHostname(host) {
		return "", false
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	return scheme + "://" + joinHostPort(host, port), true
}

// Guard wraps next with the DNS-rebinding defences, run before anything
// else: the Host header must be one this server answers to (loopback names
// on the listener's port, ResourceURL's host, AllowedHosts; on a
// non-loopback listener also IP literals), and an Origin header, when
// present, must be one of this server's own origins or AllowedOrigins. A
// request failing either gets 403 with a JSON body and next never runs. An
// absent Origin (a non-browser client) continues to next.
//
// With Config.CORS, allowed cross-origin requests get
// Access-Control-Allow-Origin naming their origin and Vary: Origin, and
// preflights are answered here. Without it no CORS header is ever sent.
func (f *Front) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.hostAllowed(r.Host, r.TLS != nil) {
			f.reject(w, r, "host not allowed", "Host", r.Host)
			return
		}
		origins := r.Header.Values("Origin")
		if len(origins) > 1 {
			f.reject(w, r, "origin not allowed", "Origin", strings.Join(origins, ", "))
			return
		}
		if len(origins) == 1 {
			n, ok := normalizeOrigin(origins[0])
			if !ok || !f.origins[n] {
				f.reject(w, r, "origin not allowed", "Origin", origins[0])
				return
			}
			if f.cfg.CORS {
				h := w.Header()
				h.Set("Access-Control-Allow-Origin", origins[0])
				h.Add("Vary", "Origin")
				h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id, Retry-After")
				if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
					h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
					h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, X-Setup-Token")
					h.Set("Access-Control-Max-Age", "600")
					w.WriteHeader(http.StatusNoContent)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// reject answers 403 for a failed Host or Origin check.
func (f *Front) reject(w http.ResponseWriter, r *http.Request, desc, header, value string) {
	if len(value) > 200 {
		value = value[:200] + "…"
	}
	f.log.LogAttrs(r.Context(), slog.LevelWarn, "auth: request rejected",
		slog.String("reason", desc),
		slog.String(strings.ToLower(header), value),
		slog.String("remote", r.RemoteAddr),
		slog.String("path", r.URL.Path))
	f.event(r.Context(), Event{Type: EventRejected, RemoteAddr: r.RemoteAddr, Path: r.URL.Path, Reason: desc})
	writeJSON(w, http.StatusForbidden, errorBody{Error: "forbidden", Description: desc})
}
