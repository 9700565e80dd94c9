package remote

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rigout/rigout/exec"
)

// HostConfig declares a host in rigout's own configuration, beside the
// user's ~/.ssh/config. Its fields win over ssh_config for the same name,
// as command-line options win in OpenSSH; what it leaves empty is looked up
// in ssh_config under Name.
type HostConfig struct {
	// Name is the alias used in `host` arguments. Required; letters,
	// digits, '.', '-' and '_', not starting with '-'.
	Name string `json:"name"`
	// Address is the host name or IP address to connect to. If empty,
	// ssh_config's HostName for Name, else Name itself.
	Address string `json:"address,omitempty"`
	// User is the remote login. If empty, ssh_config's User, else the local
	// user name.
	User string `json:"user,omitempty"`
	// Port is the TCP port. If zero, ssh_config's Port, else 22.
	Port int `json:"port,omitempty"`
	// Key is a private key file, tried before ssh_config's IdentityFile
	// entries. A leading ~ is the home directory.
	Key string `json:"key,omitempty"`
	// ProxyJump is a jump host list in OpenSSH syntax
	// ("bastion,user@inner:2222"). Each hop is itself looked up by name.
	ProxyJump string `json:"proxy_jump,omitempty"`
	// Labels tag the host for fan-out selectors ("web", "env=prod").
	Labels []string `json:"labels,omitempty"`
	// Helper says whether the host's commands and file operations go
	// through the rigout helper when RouterConfig.Helper is set: auto
	// (the zero value), require or off (see HelperMode).
	Helper HelperMode `json:"helper,omitempty"`
	// Shell is the shell the host's SSH server runs commands with: auto
	// (the zero value: detected on first use, see SSH.Shell), posix, cmd
	// or powershell. It decides how commands are quoted and which policy
	// judges them.
	Shell exec.Shell `json:"shell,omitempty"`
}

// Validate reports whether h is well formed.
func (h *HostConfig) Validate() error {
	if err := checkHostName(h.Name); err != nil {
		return fmt.Errorf("exec: host name %q: %v", h.Name, err)
	}
	if strings.EqualFold(h.Name, "local") || strings.EqualFold(h.Name, "self") || strings.EqualFold(h.Name, "auto") {
		return fmt.Errorf("exec: host name %q is reserved", h.Name)
	}
	if h.Address != "" {
		if err := checkHost(h.Address); err != nil {
			return fmt.Errorf("exec: host %s: address %q: %v", h.Name, h.Address, err)
		}
	}
	if h.User != "" {
		if err := checkConfigUser(h.User); err != nil {
			return fmt.Errorf("exec: host %s: user %q: %v", h.Name, h.User, err)
		}
	}
	if h.Port < 0 || h.Port > 65535 {
		return fmt.Errorf("exec: host %s: port %d is not from 1 to 65535", h.Name, h.Port)
	}
	if strings.HasPrefix(h.Key, "-") {
		return fmt.Errorf("exec: host %s: key path starts with '-'", h.Name)
	}
	if _, err := ParseProxyJump(h.ProxyJump); err != nil {
		return fmt.Errorf("exec: host %s: proxy jump: %w", h.Name, err)
	}
	for _, l := range h.Labels {
		if err := checkLabel(l); err != nil {
			return fmt.Errorf("exec: host %s: label %q: %v", h.Name, l, err)
		}
	}
	if err := h.Helper.Validate(); err != nil {
		return fmt.Errorf("exec: host %s: %w", h.Name, err)
	}
	if err := h.Shell.Validate(); err != nil {
		return fmt.Errorf("exec: host %s: %w", h.Name, err)
	}
	return nil
}

func checkLabel(l string) error {
	if l == "" {
		return errors.New("empty")
	}
	if len(l) > 128 {
		return errors.New("longer than 128 bytes")
	}
	if l[0] == '!' || l[0] == '-' {
		return fmt.Errorf("starts with %q", l[0])
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_.-=/:", c) >= 0:
		default:
			return fmt.Errorf("character %q is not allowed (letters, digits and _.-=/:)", c)
		}
	}
	return nil
}

// Endpoint is a resolved SSH destination: everything needed to connect.
type Endpoint struct {
	// Name is the name that was asked for: an alias or a host name.
	Name string `json:"name"`
	// User is the remote login.
	User string `json:"user"`
	// Host is the host name or IP address dialled (ssh_config HostName).
	Host string `json:"host"`
	// Port is the TCP port.
	Port int `json:"port"`
	// IdentityFiles are the private keys offered, in order. Files that do
	// not exist are skipped when connecting.
	IdentityFiles []string `json:"identity_files,omitempty"`
	// IdentitiesOnly limits agent keys to those of IdentityFiles.
	IdentitiesOnly bool `json:"identities_only,omitempty"`
	// Jumps are the ProxyJump hops in dialling order. A hop has no Jumps
	// of its own: a chain reached through a hop is flattened into this
	// list.
	Jumps []Endpoint `json:"jumps,omitempty"`
	// ProxyCommand is the command run as the transport. It is set only
	// when RouterConfig.UnsafeProxyCommand enables it.
	ProxyCommand string `json:"proxy_command,omitempty"`
	// KeepaliveInterval and KeepaliveCountMax come from ssh_config's
	// ServerAliveInterval and ServerAliveCountMax; zero means the router's
	// defaults.
	KeepaliveInterval time.Duration `json:"keepalive_interval,omitempty"`
	KeepaliveCountMax int           `json:"keepalive_count_max,omitempty"`
	// ConnectTimeout comes from ssh_config's ConnectTimeout; zero means the
	// router's default.
	ConnectTimeout time.Duration `json:"connect_timeout,omitempty"`
	// Source says where the name was found: "config" (rigout's
	// configuration), "ssh_config" (a Host line naming it), or "direct"
	// (neither: a plain SSH attempt, with ssh_config wildcards applied).
	Source string `json:"source"`
	// Labels are the labels of a configured host.
	Labels []string `json:"labels,omitempty"`
	// Helper is the configured host's helper mode (HostConfig.Helper).
	Helper HelperMode `json:"helper,omitempty"`
	// Shell is the configured host's shell (HostConfig.Shell); empty or
	// auto when it is detected.
	Shell exec.Shell `json:"shell,omitempty"`
	// Notes list ssh_config directives that apply to this host and were
	// ignored (ProxyCommand without UnsafeProxyCommand, LocalCommand).
	Notes []string `json:"notes,omitempty"`
}

// Address returns host:port.
func (e *Endpoint) Address() string {
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// Route describes the path to the endpoint, as reported in results:
// "ssh(web1 → 10.0.0.5:22)", with jump hosts after "via".
func (e *Endpoint) Route() string {
	var b strings.Builder
	b.WriteString("ssh(")
	b.WriteString(e.Name)
	b.WriteString(" → ")
	b.WriteString(e.Address())
	if len(e.Jumps) > 0 {
		b.WriteString(" via ")
		for i, j := range e.Jumps {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(j.Address())
		}
	}
	if e.ProxyCommand != "" {
		b.WriteString(" via ProxyCommand")
	}
	b.WriteString(")")
	return b.String()
}

// poolKey identifies what a pooled connection is: the same key means the
// same transport, login and credentials.
func (e *Endpoint) poolKey(principal string) string {
	var b strings.Builder
	b.WriteString(strconv.Quote(principal))
	for _, j := range e.Jumps {
		b.WriteString(" " + j.hopKey())
	}
	b.WriteString(" " + e.hopKey())
	return b.String()
}

func (e *Endpoint) hopKey() string {
	return strconv.Quote(e.User) + "@" + e.Address() + "|" + strings.Join(e.IdentityFiles, ",") +
		"|" + strconv.FormatBool(e.IdentitiesOnly) + "|" + strconv.Quote(e.ProxyCommand)
}

// inventory is the hosts rigout knows: declared ones and ssh_config.
type inventory struct {
	ssh       *sshConfig
	home      string
	localUser string
	unsafe    unsafeOptions

	// mu protects the following.
	mu       sync.RWMutex
	declared map[string]HostConfig
	order    []string
}

func newInventory(hosts []HostConfig, ssh *sshConfig, home, localUser string, unsafe unsafeOptions) (*inventory, error) {
	inv := &inventory{ssh: ssh, home: home, localUser: localUser, unsafe: unsafe, declared: map[string]HostConfig{}}
	for _, h := range hosts {
		if err := inv.add(h); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

// ErrHostExists means a configured host of that name already exists.
var ErrHostExists = errors.New("exec: a configured host of that name already exists")

// ErrHostNotFound means no configured host has that name.
var ErrHostNotFound = errors.New("exec: no configured host of that name")

func (inv *inventory) add(h HostConfig) error {
	if err := h.Validate(); err != nil {
		return err
	}
	h.Labels = slices.Clone(h.Labels)
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if _, ok := inv.declared[h.Name]; ok {
		return fmt.Errorf("%w: %s", ErrHostExists, h.Name)
	}
	inv.declared[h.Name] = h
	inv.order = append(inv.order, h.Name)
	return nil
}

func (inv *inventory) remove(name string) error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if _, ok := inv.declared[name]; !ok {
		return fmt.Errorf("%w: %s", ErrHostNotFound, name)
	}
	delete(inv.declared, name)
	inv.order = slices.DeleteFunc(inv.order, func(s string) bool { return s == name })
	return nil
}

// isAlias reports whether name is a configured host or a literal Host name
// in ssh_config.
func (inv *inventory) isAlias(name string) bool {
	inv.mu.RLock()
	_, ok := inv.declared[name]
	inv.mu.RUnlock()
	return ok || slices.Contains(inv.ssh.aliases, name)
}

// names returns the configured hosts, then the ssh_config aliases that are
// not also configured.
func (inv *inventory) names() (configured, sshAliases []string) {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	configured = slices.Clone(inv.order)
	for _, a := range inv.ssh.aliases {
		if _, ok := inv.declared[a]; !ok {
			sshAliases = append(sshAliases, a)
		}
	}
	return configured, sshAliases
}

func (inv *inventory) labels(name string) ([]string, bool) {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	h, ok := inv.declared[name]
	return h.Labels, ok
}

// resolve builds the endpoint for spec. A user or port in spec wins over
// everything; then the configured host; then ssh_config.
func (inv *inventory) resolve(spec HostSpec) (*Endpoint, error) {
	return inv.endpoint(spec, 0, true)
}

func (inv *inventory) endpoint(spec HostSpec, depth int, withJumps bool) (*Endpoint, error) {
	if depth > maxJumps {
		return nil, fmt.Errorf("exec: ProxyJump chain for %s is longer than %d hops (a loop?)", spec.Host, maxJumps)
	}
	name := spec.Host
	// The name keeps a port given with it, so that messages and the trust
	// command name the same place.
	ep := &Endpoint{Name: HostSpec{Host: spec.Host, Port: spec.Port}.String(), Source: "direct"}
	pre := map[string]string{}
	if spec.User != "" {
		pre["user"] = spec.User
	}
	if spec.Port != 0 {
		pre["port"] = strconv.Itoa(spec.Port)
	}
	inv.mu.RLock()
	d, declared := inv.declared[name]
	inv.mu.RUnlock()
	if declared {
		ep.Source = "config"
		ep.Labels = slices.Clone(d.Labels)
		ep.Helper = d.Helper
		ep.Shell = d.Shell
		if d.Address != "" {
			pre["hostname"] = d.Address
		}
		if d.User != "" && pre["user"] == "" {
			pre["user"] = d.User
		}
		if d.Port != 0 && pre["port"] == "" {
			pre["port"] = strconv.Itoa(d.Port)
		}
		if d.Key != "" {
			pre["identityfile"] = d.Key
		}
		if d.ProxyJump != "" {
			pre["proxyjump"] = d.ProxyJump
		}
	} else if slices.Contains(inv.ssh.aliases, name) {
		ep.Source = "ssh_config"
	}
	s := inv.ssh.lookup(name, pre, inv.localUser)

	ep.Host = name
	if v, ok := s.get("hostname"); ok && v != "" {
		ep.Host = expandTokens(v, map[byte]string{'h': name})
	}
	// OpenSSH lower-cases the host it connects to (and checks in
	// known_hosts).
	ep.Host = strings.ToLower(ep.Host)
	if err := checkHost(ep.Host); err != nil {
		return nil, &HostSpecError{Input: ep.Host, Reason: "HostName for " + name + ": " + err.Error()}
	}
	ep.User = inv.localUser
	if v, ok := s.get("user"); ok && v != "" {
		ep.User = v
	}
	if err := checkConfigUser(ep.User); err != nil {
		return nil, &HostSpecError{Input: ep.User, Reason: "user for " + name + ": " + err.Error()}
	}
	ep.Port = 22
	if v, ok := s.get("port"); ok {
		p, err := parsePort(v)
		if err != nil {
			return nil, &HostSpecError{Input: v, Reason: "port for " + name + ": " + err.Error()}
		}
		ep.Port = p
	}
	tokens := map[byte]string{
		'd': inv.home, 'u': inv.localUser, 'h': ep.Host, 'r': ep.User,
		'p': strconv.Itoa(ep.Port), 'n': name,
	}
	for _, f := range s.identityFiles {
		if strings.EqualFold(f.value, "none") {
			continue
		}
		p := expandTilde(expandTokens(f.value, tokens), inv.home)
		if !filepath.IsAbs(p) {
			p = filepath.Join(inv.home, p)
		}
		if !slices.Contains(ep.IdentityFiles, p) {
			ep.IdentityFiles = append(ep.IdentityFiles, p)
		}
	}
	if v, ok := s.get("identitiesonly"); ok {
		ep.IdentitiesOnly = strings.EqualFold(v, "yes")
	}
	if v, ok := s.get("serveraliveinterval"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			ep.KeepaliveInterval = time.Duration(n) * time.Second
		}
	}
	if v, ok := s.get("serveralivecountmax"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			ep.KeepaliveCountMax = n
		}
	}
	if v, ok := s.get("connecttimeout"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			ep.ConnectTimeout = time.Duration(n) * time.Second
		}
	}
	for _, k := range []string{"localcommand", "knownhostscommand"} {
		if v, ok := s.values[k]; ok {
			ep.Notes = append(ep.Notes, fmt.Sprintf("%s:%d: %s ignored (it runs a local command)", v.file, v.line, k))
		}
	}
	if v, ok := s.values["proxycommand"]; ok && !strings.EqualFold(v.value, "none") {
		if inv.unsafe.proxyCommand {
			ep.ProxyCommand = expandTokens(v.value, tokens)
		} else {
			ep.Notes = append(ep.Notes, fmt.Sprintf("%s:%d: ProxyCommand ignored (it runs a local command; RouterConfig.UnsafeProxyCommand enables it)", v.file, v.line))
		}
	}
	if v, ok := s.get("proxyjump"); ok && withJumps {
		hops, err := ParseProxyJump(v)
		if err != nil {
			return nil, err
		}
		for i, hop := range hops {
			// The first hop is reached by its own configuration, jumps
			// included; later hops through the hops before them.
			h, err := inv.endpoint(hop, depth+1, i == 0)
			if err != nil {
				return nil, fmt.Errorf("exec: jump host %s for %s: %w", hop, name, err)
			}
			ep.Jumps = append(ep.Jumps, h.Jumps...)
			h.Jumps = nil
			ep.Jumps = append(ep.Jumps, *h)
		}
		if len(ep.Jumps) > maxJumps {
			return nil, fmt.Errorf("exec: ProxyJump chain for %s is longer than %d hops", name, maxJumps)
		}
	}
	return ep, nil
}

// defaultIdentityFiles are OpenSSH's default keys, in its order of
// preference among the types rigout supports.
func defaultIdentityFiles(home string) []string {
	return []string{
		filepath.Join(home, ".ssh", "id_rsa"),
		filepath.Join(home, ".ssh", "id_ecdsa"),
		filepath.Join(home, ".ssh", "id_ed25519"),
	}
}

// Selector syntax, for FanOut and Select: comma-separated terms that must
// all hold. A term is a label ("web", "env=prod") that the host must have,
// or "!label" that it must not have. "*" alone selects every configured
// host.

// ErrEmptySelector means a selector had no terms.
var ErrEmptySelector = errors.New("exec: empty host selector")

type selector struct {
	all  bool
	want []string
	not  []string
}

func parseSelector(s string) (*selector, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrEmptySelector
	}
	if s == "*" {
		return &selector{all: true}, nil
	}
	sel := &selector{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		neg := strings.HasPrefix(t, "!")
		if neg {
			t = strings.TrimSpace(t[1:])
		}
		if err := checkLabel(t); err != nil {
			return nil, fmt.Errorf("exec: selector %q: term %q: %v", s, t, err)
		}
		if neg {
			sel.not = append(sel.not, t)
		} else {
			sel.want = append(sel.want, t)
		}
	}
	return sel, nil
}

func (s *selector) matches(labels []string) bool {
	if s.all {
		return true
	}
	for _, w := range s.want {
		if !slices.Contains(labels, w) {
			return false
		}
	}
	for _, n := range s.not {
		if slices.Contains(labels, n) {
			return false
		}
	}
	return true
}
