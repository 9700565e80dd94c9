package auth

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode"
)

// Scopes is what a token may do. The zero value allows nothing except file
// access without a root restriction, and that only to tools it may call,
// which is none: grant explicitly, or use [FullScopes].
//
// Tools and Hosts are glob lists: "*" matches any run of characters and "?"
// exactly one; everything else is literal. Tool names match case-sensitively,
// host names case-insensitively. Host globs match configured host names
// only: an address nobody configured must be named exactly (see
// [Scopes.AllowReach]). The root package decides what a call is checked
// against: what its host arguments resolve to.
type Scopes struct {
	// Tools are globs over tool names; ["*"] allows every tool.
	Tools []string `json:"tools,omitempty"`
	// Hosts are globs over host names; ["*"] allows every host.
	Hosts []string `json:"hosts,omitempty"`
	// Roots are absolute file roots. Empty means no restriction.
	Roots []string `json:"roots,omitempty"`
	// ReadOnly limits the token to tools of the read-only risk class.
	ReadOnly bool `json:"read_only,omitempty"`
	// Bypass allows bypass_security: true, skipping the command policy.
	Bypass bool `json:"bypass,omitempty"`
	// Terminals allows opening persistent terminal sessions, whose input
	// cannot be policy-checked line by line.
	Terminals bool `json:"terminals,omitempty"`
	// RevealSecrets allows reading a credential's value (the credentials
	// tool's get). Off unless granted: FullScopes does not include it, and
	// a token without it can still use credentials by reference, without
	// seeing them.
	RevealSecrets bool `json:"reveal_secrets,omitempty"`
	// Metrics allows reading the gateway's Prometheus metrics (/metrics):
	// counts and latencies by tool, status, rule and host name, never a
	// command or an argument.
	Metrics bool `json:"metrics,omitempty"`
	// Approve allows deciding other principals' held-back calls: listing
	// the gateway's pending approvals and approving or denying them
	// (`rigout approve`, the approvals API). A token never decides its own
	// calls. Off unless granted: FullScopes does not include it.
	Approve bool `json:"approve,omitempty"`
	// InteractiveClient is the operator's declaration that this token's
	// client is a person's own interactive client, so that its answer to a
	// question the gateway asked (MCP elicitation) counts as that person's
	// confirmation of a command a rule in confirm mode holds back. Off by
	// default: then no client's answer counts, and held-back commands wait
	// for an operator instead. It never lets a client approve a bypass.
	InteractiveClient bool `json:"interactive_client,omitempty"`
	// AskBypass lets a token without Bypass set bypass_security: the call
	// then waits for an operator's approval out of band (never the
	// client's). Off unless granted.
	AskBypass bool `json:"ask_bypass,omitempty"`
}

// FullScopes returns scopes that allow everything: every tool and host, no
// root restriction, writes, policy bypass and terminals. A token given with
// --auth-token or RIGOUT_AUTH_TOKEN gets these.
func FullScopes() Scopes {
	return Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, Bypass: true, Terminals: true, Metrics: true}
}

// IsFull reports whether s allows everything [FullScopes] allows.
func (s Scopes) IsFull() bool {
	return slices.Contains(s.Tools, "*") && slices.Contains(s.Hosts, "*") &&
		len(s.Roots) == 0 && !s.ReadOnly && s.Bypass && s.Terminals
}

// AllowTool reports whether the token may call the tool name.
func (s Scopes) AllowTool(name string) bool {
	for _, g := range s.Tools {
		if matchGlob(g, name) {
			return true
		}
	}
	return false
}

// AllowHost reports whether the token may reach host. Host names compare
// case-insensitively.
func (s Scopes) AllowHost(host string) bool {
	h := strings.ToLower(host)
	for _, g := range s.Hosts {
		if matchGlob(strings.ToLower(g), h) {
			return true
		}
	}
	return false
}

// AllowReach reports whether the token may reach a destination as the
// routing ladder resolved it. A configured host name (or "local") is
// matched against the host globs like [Scopes.AllowHost]. An ad-hoc
// destination, an address nobody configured, is named by its canonical
// user@host:port and admitted only by a host scope equal to it (compared
// case-insensitively) or by "*": so hosts ["web*"] admits the configured
// web1 but never web@127.0.0.2:1.
func (s Scopes) AllowReach(name string, adHoc bool) bool {
	if !adHoc {
		return s.AllowHost(name)
	}
	for _, g := range s.Hosts {
		if g == "*" || strings.EqualFold(g, name) {
			return true
		}
	}
	return false
}

// RequireReach returns a [*ScopeError] naming "hosts:NAME" when the token
// may not reach the destination (see [Scopes.AllowReach]), else nil.
func (s Scopes) RequireReach(name string, adHoc bool) error {
	if s.AllowReach(name, adHoc) {
		return nil
	}
	if adHoc {
		return &ScopeError{Scope: "hosts:" + name, Reason: "this token may not reach " + name +
			": an address that is not a configured host needs a host scope naming it exactly (or a configured host name)"}
	}
	return &ScopeError{Scope: "hosts:" + name, Reason: "this token may not reach host " + name}
}

// AllowPath reports whether the absolute slash-separated path p lies in one
// of the token's roots (or s has no roots). The check is lexical: p is
// cleaned, then compared on a separator boundary, so the root /srv/app does
// not admit /srv/app-evil. The caller must still confine symlinks (os.Root
// locally, real paths over SFTP); this check cannot see them.
func (s Scopes) AllowPath(p string) bool {
	if len(s.Roots) == 0 {
		return true
	}
	if !path.IsAbs(p) {
		return false
	}
	p = path.Clean(p)
	for _, r := range s.Roots {
		r = path.Clean(r)
		if p == r || r == "/" || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// RequireTool returns a [*ScopeError] naming the scope "tools:NAME" when the
// token may not call the tool, else nil.
func (s Scopes) RequireTool(name string) error {
	if s.AllowTool(name) {
		return nil
	}
	return &ScopeError{Scope: "tools:" + name, Reason: "this token may not call tool " + name}
}

// RequireHost returns a [*ScopeError] naming "hosts:HOST" when the token may
// not reach host, else nil.
func (s Scopes) RequireHost(host string) error {
	if s.AllowHost(host) {
		return nil
	}
	return &ScopeError{Scope: "hosts:" + host, Reason: "this token may not reach host " + host}
}

// RequirePath returns a [*ScopeError] naming "roots:PATH" when p is outside
// the token's roots, else nil.
func (s Scopes) RequirePath(p string) error {
	if s.AllowPath(p) {
		return nil
	}
	return &ScopeError{Scope: "roots:" + escapeScopeValue(p), Reason: "path " + p + " is outside this token's file roots"}
}

// RequireWrite returns a [*ScopeError] naming the scope "write" when the
// token is read-only, else nil.
func (s Scopes) RequireWrite() error {
	if !s.ReadOnly {
		return nil
	}
	return &ScopeError{Scope: "write", Reason: "this token is read-only"}
}

// RequireBypass returns a [*ScopeError] naming "bypass" when the token may
// not set bypass_security, else nil. The message says so plainly, because an
// agent that sets bypass_security without the scope should learn why the
// call was refused rather than retry.
func (s Scopes) RequireBypass() error {
	if s.Bypass {
		return nil
	}
	return &ScopeError{Scope: "bypass", Reason: "bypass_security: true needs a token with the bypass scope; this token does not have it"}
}

// RequireTerminals returns a [*ScopeError] naming "terminals" when the token
// may not open terminal sessions, else nil.
func (s Scopes) RequireTerminals() error {
	if s.Terminals {
		return nil
	}
	return &ScopeError{Scope: "terminals", Reason: "this token may not open terminal sessions"}
}

// RequireRevealSecrets returns a [*ScopeError] naming "reveal_secrets"
// when the token may not read credential values, else nil.
func (s Scopes) RequireRevealSecrets() error {
	if s.RevealSecrets {
		return nil
	}
	return &ScopeError{Scope: "reveal_secrets", Reason: "revealing a credential's value needs a token with the reveal_secrets scope; this token does not have it (it may still use the credential by reference: secrets on execute_command)"}
}

// RequireApprove returns a [*ScopeError] naming "approve" when the token
// may not decide held-back calls, else nil.
func (s Scopes) RequireApprove() error {
	if s.Approve {
		return nil
	}
	return &ScopeError{Scope: "approve", Reason: "deciding held-back calls needs a token with the approve scope; this token does not have it"}
}

// String renders s as an OAuth scope string: space-separated scope tokens
// "tools:GLOB", "hosts:GLOB", "roots:PATH" (path-escaped), "read_only",
// "bypass", "terminals", "reveal_secrets", "metrics", "approve",
// "interactive_client" and "ask_bypass". [ParseScopes] reads it
// back.
func (s Scopes) String() string {
	var parts []string
	for _, t := range s.Tools {
		parts = append(parts, "tools:"+t)
	}
	for _, h := range s.Hosts {
		parts = append(parts, "hosts:"+h)
	}
	for _, r := range s.Roots {
		parts = append(parts, "roots:"+escapeScopeValue(r))
	}
	if s.ReadOnly {
		parts = append(parts, "read_only")
	}
	if s.Bypass {
		parts = append(parts, "bypass")
	}
	if s.Terminals {
		parts = append(parts, "terminals")
	}
	if s.RevealSecrets {
		parts = append(parts, "reveal_secrets")
	}
	if s.Metrics {
		parts = append(parts, "metrics")
	}
	if s.Approve {
		parts = append(parts, "approve")
	}
	if s.InteractiveClient {
		parts = append(parts, "interactive_client")
	}
	if s.AskBypass {
		parts = append(parts, "ask_bypass")
	}
	return strings.Join(parts, " ")
}

// ParseScopes parses the form [Scopes.String] produces.
func ParseScopes(v string) (Scopes, error) {
	var s Scopes
	for _, f := range strings.Fields(v) {
		switch {
		case f == "read_only":
			s.ReadOnly = true
		case f == "bypass":
			s.Bypass = true
		case f == "terminals":
			s.Terminals = true
		case f == "reveal_secrets":
			s.RevealSecrets = true
		case f == "metrics":
			s.Metrics = true
		case f == "approve":
			s.Approve = true
		case f == "interactive_client":
			s.InteractiveClient = true
		case f == "ask_bypass":
			s.AskBypass = true
		case strings.HasPrefix(f, "tools:"):
			s.Tools = append(s.Tools, strings.TrimPrefix(f, "tools:"))
		case strings.HasPrefix(f, "hosts:"):
			s.Hosts = append(s.Hosts, strings.TrimPrefix(f, "hosts:"))
		case strings.HasPrefix(f, "roots:"):
			r, err := url.PathUnescape(strings.TrimPrefix(f, "roots:"))
			if err != nil {
				return Scopes{}, fmt.Errorf("auth: scope %q: %w", f, err)
			}
			s.Roots = append(s.Roots, r)
		default:
			return Scopes{}, fmt.Errorf("auth: unknown scope %q", f)
		}
	}
	if err := s.validate(); err != nil {
		return Scopes{}, err
	}
	return s, nil
}

// validate checks that globs can be written into a scope string and a
// WWW-Authenticate header, and that roots are absolute.
func (s Scopes) validate() error {
	for _, list := range [][]string{s.Tools, s.Hosts} {
		for _, g := range list {
			if g == "" {
				return fmt.Errorf("auth: empty glob in scopes")
			}
			if i := strings.IndexFunc(g, badScopeRune); i >= 0 {
				return fmt.Errorf("auth: glob %q: character %q not allowed", g, g[i])
			}
		}
	}
	for _, r := range s.Roots {
		if !path.IsAbs(r) {
			return fmt.Errorf("auth: file root %q is not absolute", r)
		}
	}
	return nil
}

// clone returns a deep copy, so a Front never shares slices with its caller.
func (s Scopes) clone() Scopes {
	s.Tools = slices.Clone(s.Tools)
	s.Hosts = slices.Clone(s.Hosts)
	s.Roots = slices.Clone(s.Roots)
	return s
}

// badScopeRune reports characters that may not appear in a scope token
// (RFC 6749 §3.3 NQCHAR excludes space, '"' and '\').
func badScopeRune(r rune) bool {
	return r <= ' ' || r == '"' || r == '\\' || r == 0x7f || r > unicode.MaxASCII
}

// escapeScopeValue makes a path safe inside a scope token.
func escapeScopeValue(p string) string {
	return strings.ReplaceAll(url.PathEscape(p), "%2F", "/")
}

// ScopeError reports a call outside the token's scopes. Scope names the
// missing scope in the vocabulary of [Scopes.String] ("tools:NAME",
// "hosts:NAME", "roots:PATH", "bypass", "terminals") or "write" for a
// read-only token. At the MCP boundary it becomes an error result; at the
// HTTP level, [Front.WriteInsufficientScope] turns it into a 403.
type ScopeError struct {
	// Scope is the missing scope, e.g. "tools:execute_command".
	Scope string
	// Reason says in a sentence what the token may not do.
	Reason string
}

// Error implements error.
func (e *ScopeError) Error() string {
	return "auth: missing scope " + e.Scope + ": " + e.Reason
}

// matchGlob reports whether name matches the glob pattern g, in which '*'
// matches any run of bytes and '?' exactly one character. It runs in
// O(len(g)·len(name)) at worst, with no recursion.
func matchGlob(g, name string) bool {
	gr, nr := []rune(g), []rune(name)
	gi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(nr) {
		switch {
		case gi < len(gr) && gr[gi] == '*':
			star, mark = gi, ni
			gi++
		case gi < len(gr) && (gr[gi] == '?' || gr[gi] == nr[ni]):
			gi++
			ni++
		case star >= 0:
			gi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for gi < len(gr) && gr[gi] == '*' {
		gi++
	}
	return gi == len(gr)
}
