package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec"
)

// Defaults of RouterConfig.
const (
	// DefaultConnectTimeout bounds the TCP connection plus the SSH
	// handshake and login, per hop.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultKeepaliveInterval and DefaultKeepaliveCountMax: a connection
	// is dead after this many unanswered keepalive@openssh.com probes sent
	// this far apart (OpenSSH ServerAliveInterval/ServerAliveCountMax).
	DefaultKeepaliveInterval = 15 * time.Second
	DefaultKeepaliveCountMax = 3
	// DefaultIdleTTL is how long a connection without sessions stays open
	// (OpenSSH ControlPersist).
	DefaultIdleTTL = 10 * time.Minute
	// DefaultMaxChannels is the number of sessions a connection carries
	// before another is opened (sshd's MaxSessions default).
	DefaultMaxChannels = 10
	// DefaultFanOutLimit is how many hosts FanOut runs on at once.
	DefaultFanOutLimit = 8
)

// RouterConfig configures a Router. The zero value is not valid: a
// HostKeyPolicy is required. Everything else has a default, stated on the
// field. NewRouter copies the struct; changing it afterwards has no effect.
type RouterConfig struct {
	// Local runs commands on this machine, for the routes "local", "self"
	// and names of this machine. If nil, those routes are refused with
	// ErrLocalDisabled.
	Local exec.Runner

	// Hosts are the hosts declared in rigout's configuration.
	Hosts []HostConfig
	// SSHConfigFiles are OpenSSH client configuration files read in order,
	// typically ~/.ssh/config. Missing files are skipped. If empty, none is
	// read (the library never reads ~/.ssh on its own).
	SSHConfigFiles []string
	// UserKnownHostsFiles are known_hosts files read but never written,
	// typically ~/.ssh/known_hosts. Missing files are skipped.
	UserKnownHostsFiles []string
	// KnownHostsFile is rigout's own known_hosts file: read, and where
	// HostKeyAcceptNew and Trust record hashed lines (created 0600). If
	// empty, keys are never recorded and HostKeyAcceptNew is refused.
	KnownHostsFile string
	// HostKeyPolicy is required: HostKeyStrict, HostKeyAcceptNew or
	// HostKeyInsecureIgnore. Zero is an error (ErrNoHostKeyPolicy).
	HostKeyPolicy HostKeyPolicy
	// OnHostKey, if set, is told about every host key learned, refused or
	// ignored, for the audit ledger. It is called during the handshake,
	// from the dialling goroutine, and must not block for long. ctx is the
	// context of the call that opened the connection.
	OnHostKey func(ctx context.Context, ev HostKeyEvent)

	// AgentSocket is the ssh-agent socket (SSH_AUTH_SOCK). If empty, no
	// agent is used.
	AgentSocket string
	// PassphraseEnv names the environment variable that holds the
	// passphrase of encrypted private keys. If empty, encrypted keys are
	// used only through the agent. The passphrase is read when a key is
	// loaded and never logged.
	PassphraseEnv string
	// Getenv reads PassphraseEnv. If nil, os.Getenv.
	Getenv func(string) string
	// HomeDir expands ~ and %d, locates the default keys (~/.ssh/id_*) and
	// relative Include files. If empty, the user's home directory.
	HomeDir string
	// LocalUser is the remote login when neither the request nor the
	// configuration names one. If empty, the user running rigout.
	LocalUser string

	// ConnectTimeout bounds TCP connect plus handshake and login, per hop.
	// If zero, DefaultConnectTimeout. ssh_config ConnectTimeout wins.
	ConnectTimeout time.Duration
	// KeepaliveInterval and KeepaliveCountMax: see
	// DefaultKeepaliveInterval. If zero, the defaults. Positive
	// ssh_config ServerAliveInterval/ServerAliveCountMax values win.
	KeepaliveInterval time.Duration
	KeepaliveCountMax int
	// IdleTTL closes a connection that carried no session for this long.
	// If zero, DefaultIdleTTL.
	IdleTTL time.Duration
	// MaxChannels caps the sessions on one connection; past it another
	// connection opens. If zero, DefaultMaxChannels.
	MaxChannels int
	// Grace is the time between SIGTERM and SIGKILL for a remote command
	// that timed out or was cancelled. If zero, DefaultGrace.
	Grace time.Duration
	// Drain is how long to wait for a channel to close after SIGKILL, and
	// again after closing it ourselves, before the connection is judged
	// unresponsive and closed. If zero, 1s.
	Drain time.Duration
	// RemoteShell runs shell commands remotely with -c. If empty, bash
	// where the host has it, else sh (see RemoteCommandLine).
	RemoteShell string
	// Helper, if set, ships rigout's helper to Linux hosts and runs their
	// commands and file operations through it (see HelperConfig and
	// HostConfig.Helper). If nil, hosts are reached by plain SSH and
	// SFTP, and each Result says the far side runs no sandbox.
	Helper *HelperConfig

	// AutoHosts are the candidates of the "auto" route, in order. If nil,
	// every configured host (Hosts and Add).
	AutoHosts []string
	// AutoLocal lets "auto" fall back to this machine when no candidate
	// answers. Off by default.
	AutoLocal bool
	// FanOutLimit is how many hosts FanOut runs on at once when the
	// request sets no limit. If zero, DefaultFanOutLimit.
	FanOutLimit int

	// IsLocal reports whether a bare host name or address is this machine,
	// so that it runs locally. If nil: localhost names, loopback and
	// unspecified addresses, this machine's host name and interface
	// addresses. No DNS lookup is made.
	IsLocal func(host string) bool
	// Check, if set, is called before anything is sent for every command
	// run through a Target from this Router, with the host name asked for.
	// A non-nil error refuses the command; Run returns it unchanged. Use
	// it to apply the command policy.
	Check func(ctx context.Context, host string, cmd exec.Command) error
	// TrustCommand renders the command that trusts a host, for error
	// messages. If nil, "rigout hosts trust NAME".
	TrustCommand func(host string) string

	// UnsafeProxyCommand honours ssh_config ProxyCommand, which runs a
	// local command through /bin/sh for every connection. Off: ProxyCommand
	// is ignored and reported in Endpoint.Notes. LocalCommand,
	// KnownHostsCommand and Match exec are never run.
	UnsafeProxyCommand bool

	// Logger receives operator logs. If nil, they are discarded.
	Logger *slog.Logger
	// Now tells the time for events. If nil, time.Now.
	Now func() time.Time
}

func (c *RouterConfig) setDefaults() error {
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.HomeDir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("exec: no home directory (set RouterConfig.HomeDir): %w", err)
		}
		c.HomeDir = h
	}
	if c.LocalUser == "" {
		if u, err := user.Current(); err == nil {
			c.LocalUser = u.Username
		} else {
			c.LocalUser = c.Getenv("USER")
		}
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.KeepaliveInterval <= 0 {
		c.KeepaliveInterval = DefaultKeepaliveInterval
	}
	if c.KeepaliveCountMax <= 0 {
		c.KeepaliveCountMax = DefaultKeepaliveCountMax
	}
	if c.IdleTTL <= 0 {
		c.IdleTTL = DefaultIdleTTL
	}
	if c.MaxChannels <= 0 {
		c.MaxChannels = DefaultMaxChannels
	}
	if c.Grace <= 0 {
		c.Grace = exec.DefaultGrace
	}
	if c.Drain <= 0 {
		c.Drain = time.Second
	}
	if c.FanOutLimit <= 0 {
		c.FanOutLimit = DefaultFanOutLimit
	}
	if c.TrustCommand == nil {
		c.TrustCommand = func(host string) string { return "rigout hosts trust " + shellQuote(host) }
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Router resolves the `host` argument of a tool to a place to run: this
// machine or an SSH host, through the routing ladder (see Resolve). It
// owns the SSH connection pool, the known_hosts files and the host
// inventory.
//
// A Router is safe for concurrent use. Close it to close its connections
// and stop its goroutines.
type Router struct {
	cfg  RouterConfig
	inv  *inventory
	keys *knownHosts
	auth *authenticator
	pool *pool

	localOnce  sync.Once
	localNames map[string]bool
	localAddrs map[netip.Addr]bool

	// mu protects the following.
	mu     sync.Mutex
	active string // the "auto" route's current host
	closed bool
	shells map[string]learnedShell // detected shells, by shellKey
}

// Errors of the routing ladder.
var (
	// ErrLocalDisabled means a route led to this machine and the Router
	// has no Local runner.
	ErrLocalDisabled = errors.New("exec: running on this machine is disabled")
	// ErrNoHostAvailable means "auto" found no candidate that answers and
	// no local fallback.
	ErrNoHostAvailable = errors.New("exec: no host available")
)

// NewRouter checks cfg and builds a Router. It reads the ssh_config and
// known_hosts files; it opens no connection.
func NewRouter(cfg RouterConfig) (*Router, error) {
	c := cfg
	switch c.HostKeyPolicy {
	case HostKeyStrict, HostKeyAcceptNew, HostKeyInsecureIgnore:
	case 0:
		return nil, ErrNoHostKeyPolicy
	default:
		return nil, fmt.Errorf("exec: unknown host key policy %d", int(c.HostKeyPolicy))
	}
	if c.HostKeyPolicy == HostKeyAcceptNew && c.KnownHostsFile == "" {
		return nil, errors.New("exec: host key policy accept-new needs RouterConfig.KnownHostsFile to record keys in")
	}
	if err := c.setDefaults(); err != nil {
		return nil, err
	}
	c.Hosts = slices.Clone(c.Hosts)
	c.AutoHosts = slices.Clone(c.AutoHosts)
	if c.HostKeyPolicy == HostKeyInsecureIgnore {
		c.Logger.LogAttrs(context.Background(), slog.LevelWarn, "SSH host keys are NOT checked (insecure-ignore-host-key): connections can be intercepted")
	}
	unsafe := unsafeOptions{proxyCommand: c.UnsafeProxyCommand}
	sc, err := loadSSHConfig(c.SSHConfigFiles, c.HomeDir, c.Logger, unsafe)
	if err != nil {
		return nil, err
	}
	inv, err := newInventory(c.Hosts, sc, c.HomeDir, c.LocalUser, unsafe)
	if err != nil {
		return nil, err
	}
	keys, err := newKnownHosts(c.UserKnownHostsFiles, c.KnownHostsFile, c.HostKeyPolicy, c.OnHostKey, c.Logger, c.Now, c.TrustCommand)
	if err != nil {
		return nil, err
	}
	r := &Router{
		cfg:  c,
		inv:  inv,
		keys: keys,
		auth: &authenticator{home: c.HomeDir, agentSocket: c.AgentSocket, passphraseEnv: c.PassphraseEnv, getenv: c.Getenv, logger: c.Logger},
		pool: newPool(poolConfig{
			keepalive: c.KeepaliveInterval, keepaliveN: c.KeepaliveCountMax,
			idleTTL: c.IdleTTL, maxChannels: c.MaxChannels, logger: c.Logger,
		}),
	}
	return r, nil
}

// Close closes every pooled connection and waits for the Router's
// goroutines to end. Runs in progress fail. It is safe to call twice.
func (r *Router) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.pool.close()
	return nil
}

func (r *Router) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Resolve applies the routing ladder to host, for principal (the caller
// identity: connections are never shared between principals):
//
//  1. "local", "self" or "" run on this machine;
//  2. "auto" is Rigout's failover: the host that answered last if it still
//     answers, else the fastest candidate (RouterConfig.AutoHosts), else
//     this machine if RouterConfig.AutoLocal;
//  3. "user@host" and "host:port" go over SSH to host, with the host's
//     configuration for everything else;
//  4. an inventory alias (a configured host, or a literal Host name in
//     ssh_config) goes over SSH;
//  5. a name or address of this machine runs locally (RouterConfig.IsLocal);
//  6. anything else is a plain SSH attempt, ssh_config wildcards applied.
//
// A malformed host or user is a *HostSpecError. Resolve opens no
// connection, except for "auto", which tests the candidates.
func (r *Router) Resolve(ctx context.Context, host, principal string) (exec.Target, error) {
	t, _, err := r.resolve(ctx, host, principal)
	return t, err
}

// resolve is Resolve, with the SSH destination of a remote Target (nil
// when it is this machine).
func (r *Router) resolve(ctx context.Context, host, principal string) (exec.Target, *Endpoint, error) {
	if r.isClosed() {
		return exec.Target{}, nil, ErrClosed
	}
	switch strings.ToLower(host) {
	case "", "local", "self":
		t, err := r.localTarget(host)
		return t, nil, err
	case "auto":
		return r.auto(ctx, principal)
	}
	spec, err := ParseHostSpec(host)
	if err != nil {
		return exec.Target{}, nil, err
	}
	if spec.User == "" && spec.Port == 0 && !r.inv.isAlias(spec.Host) && r.isLocal(spec.Host) {
		t, err := r.localTarget(host)
		return t, nil, err
	}
	ep, err := r.inv.resolve(spec)
	if err != nil {
		return exec.Target{}, nil, err
	}
	return exec.Target{
		Runner: &SSH{r: r, ep: ep, principal: principal},
		Route:  ep.Route(),
		Host:   host,
	}, ep, nil
}

func (r *Router) localTarget(host string) (exec.Target, error) {
	if r.cfg.Local == nil {
		return exec.Target{}, ErrLocalDisabled
	}
	if host == "" {
		host = "local"
	}
	var run exec.Runner = r.cfg.Local
	if r.cfg.Check != nil {
		run = &checkedRunner{run: r.cfg.Local, check: r.cfg.Check, host: host}
	}
	return exec.Target{Runner: run, Route: "local", Host: host, Local: true}, nil
}

// checkedRunner applies RouterConfig.Check before a local run.
type checkedRunner struct {
	run   exec.Runner
	check func(context.Context, string, exec.Command) error
	host  string
}

func (c *checkedRunner) Run(ctx context.Context, cmd exec.Command) (exec.Result, error) {
	if err := cmd.Validate(); err != nil {
		return exec.Result{Route: "local", ExitCode: -1}, err
	}
	if err := c.check(ctx, c.host, cmd); err != nil {
		return exec.Result{Route: "local", ExitCode: -1}, err
	}
	return c.run.Run(ctx, cmd)
}

// isLocal applies RouterConfig.IsLocal or the default detection.
func (r *Router) isLocal(h string) bool {
	if r.cfg.IsLocal != nil {
		return r.cfg.IsLocal(h)
	}
	r.localOnce.Do(func() {
		r.localNames = map[string]bool{"localhost": true, "localhost.localdomain": true, "ip6-localhost": true, "ip6-loopback": true}
		if hn, err := os.Hostname(); err == nil && hn != "" {
			hn = strings.ToLower(hn)
			r.localNames[hn] = true
			short, _, _ := strings.Cut(hn, ".")
			r.localNames[short] = true
		}
		r.localAddrs = map[netip.Addr]bool{}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if p, err := netip.ParsePrefix(a.String()); err == nil {
					r.localAddrs[p.Addr().Unmap()] = true
				}
			}
		}
	})
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		return a.IsLoopback() || a.IsUnspecified() || r.localAddrs[a]
	}
	return r.localNames[h]
}

// TestResult is the outcome of Test.
type TestResult struct {
	// Host is the host asked for.
	Host string `json:"host"`
	// Route is where it leads.
	Route string `json:"route"`
	// Local is set when the host is this machine (always reachable).
	Local bool `json:"local,omitempty"`
	// Reachable is set when a connection answered a keepalive.
	Reachable bool `json:"reachable"`
	// Latency is the time to get a working connection and a reply: a
	// round trip on a pooled connection, or a whole connect when none was
	// open.
	Latency time.Duration `json:"latency"`
	// HostKey is the host's key type and fingerprint.
	HostKey string `json:"host_key,omitempty"`
	// Err says why the host is not reachable.
	Err error `json:"-"`
}

// Test checks that host answers: it connects (or reuses the principal's
// pooled connection) and waits for a keepalive reply.
func (r *Router) Test(ctx context.Context, host, principal string) TestResult {
	res := TestResult{Host: host}
	t, ep, err := r.resolve(ctx, host, principal)
	if err != nil {
		res.Err = err
		return res
	}
	res.Route = t.Route
	if t.Local {
		res.Local, res.Reachable = true, true
		return res
	}
	return r.testEndpoint(ctx, ep, principal, res)
}

func (r *Router) testEndpoint(ctx context.Context, ep *Endpoint, principal string, res TestResult) TestResult {
	start := time.Now()
	c, err := r.pool.acquire(ctx, ep.poolKey(principal), func(dctx context.Context) (*conn, error) {
		return r.dialEndpoint(dctx, ep, principal)
	})
	if err != nil {
		res.Err = err
		return res
	}
	defer c.release()
	res.HostKey = c.fingerprint
	reply := make(chan error, 1)
	r.pool.goTracked(func() {
		_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
		reply <- err
	})
	wait := time.NewTimer(r.cfg.ConnectTimeout)
	defer wait.Stop()
	select {
	case err = <-reply:
	case <-ctx.Done():
		err = ctx.Err()
	case <-wait.C:
		err = fmt.Errorf("no keepalive reply within %v: %w", r.cfg.ConnectTimeout, ErrConnectTimeout)
	}
	res.Latency = time.Since(start)
	if err != nil {
		res.Err = &DialError{Host: ep.Name, Address: ep.Address(), Err: err}
		return res
	}
	res.Reachable = true
	return res
}

// auto is the "auto" route.
func (r *Router) auto(ctx context.Context, principal string) (exec.Target, *Endpoint, error) {
	cands := r.autoCandidates()
	r.mu.Lock()
	active := r.active
	r.mu.Unlock()
	var tried []TestResult
	if active != "" && slices.Contains(cands, active) {
		tr := r.Test(ctx, active, principal)
		if tr.Reachable {
			return r.resolve(ctx, active, principal)
		}
		tried = append(tried, tr)
	}
	if len(cands) > 0 {
		results := make([]TestResult, len(cands))
		var wg sync.WaitGroup
		for i, h := range cands {
			wg.Go(func() { results[i] = r.Test(ctx, h, principal) })
		}
		wg.Wait()
		best := -1
		for i, tr := range results {
			if tr.Reachable && (best < 0 || tr.Latency < results[best].Latency) {
				best = i
			}
		}
		if best >= 0 {
			r.mu.Lock()
			r.active = cands[best]
			r.mu.Unlock()
			return r.resolve(ctx, cands[best], principal)
		}
		tried = results
	}
	if r.cfg.AutoLocal && r.cfg.Local != nil {
		t, err := r.localTarget("local")
		return t, nil, err
	}
	var why []string
	for _, tr := range tried {
		why = append(why, fmt.Sprintf("%s: %v", tr.Host, tr.Err))
	}
	if len(cands) == 0 {
		why = append(why, "no candidate hosts are configured")
	}
	return exec.Target{}, nil, fmt.Errorf("%w for \"auto\": %s", ErrNoHostAvailable, strings.Join(why, "; "))
}

func (r *Router) autoCandidates() []string {
	if r.cfg.AutoHosts != nil {
		return r.cfg.AutoHosts
	}
	configured, _ := r.inv.names()
	return configured
}

// List returns the known hosts: configured ones first, then ssh_config
// aliases, each resolved. A host that does not resolve carries the error
// in Notes.
func (r *Router) List() []Endpoint {
	configured, aliases := r.inv.names()
	out := make([]Endpoint, 0, len(configured)+len(aliases))
	for _, name := range append(configured, aliases...) {
		ep, err := r.inv.resolve(HostSpec{Host: name})
		if err != nil {
			src := "ssh_config"
			if slices.Contains(configured, name) {
				src = "config"
			}
			out = append(out, Endpoint{Name: name, Source: src, Notes: []string{err.Error()}})
			continue
		}
		out = append(out, *ep)
	}
	return out
}

// Add declares a host, in memory; persisting it is the caller's job. A
// name already configured is ErrHostExists.
func (r *Router) Add(h HostConfig) error { return r.inv.add(h) }

// Remove forgets a configured host, in memory. Hosts from ssh_config
// cannot be removed; an unknown name is ErrHostNotFound. Pooled
// connections to it close when idle.
func (r *Router) Remove(name string) error { return r.inv.remove(name) }

// Select returns the configured hosts whose labels match selector (see
// FanOutRequest.Selector), in configuration order.
func (r *Router) Select(selector string) ([]string, error) {
	sel, err := parseSelector(selector)
	if err != nil {
		return nil, err
	}
	configured, _ := r.inv.names()
	var out []string
	for _, name := range configured {
		labels, ok := r.inv.labels(name)
		if ok && sel.matches(labels) {
			out = append(out, name)
		}
	}
	return out, nil
}

// Description is the access guide for one host: where it leads, whether it
// answers, and the command a person would paste to reach it.
type Description struct {
	// Host is the host asked for.
	Host string `json:"host"`
	// Route is where it leads: "local" or "ssh(…)".
	Route string `json:"route"`
	// Local is set when it is this machine.
	Local bool `json:"local,omitempty"`
	// Endpoint is the resolved destination; nil when Local.
	Endpoint *Endpoint `json:"endpoint,omitempty"`
	// HostKeyPolicy is the policy in force.
	HostKeyPolicy string `json:"host_key_policy"`
	// KnownKeys are the keys on file for the host.
	KnownKeys []KnownKey `json:"known_keys,omitempty"`
	// Reachable is set when a connection answered (see Test).
	Reachable bool `json:"reachable"`
	// Latency is the time the test took (see TestResult.Latency).
	Latency time.Duration `json:"latency,omitempty"`
	// HostKey is the key type and fingerprint the host showed.
	HostKey string `json:"host_key,omitempty"`
	// Error says why the host did not answer.
	Error string `json:"error,omitempty"`
	// SSHCommand is the OpenSSH command line that reaches the same place
	// interactively, quoted for a POSIX shell. Empty when Local.
	SSHCommand string `json:"ssh_command,omitempty"`
	// Notes are caveats: ignored ssh_config directives, unknown host keys.
	Notes []string `json:"notes,omitempty"`
	// Helper says what holds on the host: the rigout helper's report
	// (version, how commands are confined, how file operations resolve
	// names), or why commands and files take plain SSH and SFTP (see
	// HelperConfig). Empty when Local or unreachable.
	Helper string `json:"helper,omitempty"`
	// Shell is the shell the host runs commands with and how it was
	// learned: "cmd (configured)", "posix (detected: …)" (see SSH.Shell),
	// or why it could not be. Empty when Local or unreachable.
	Shell string `json:"shell,omitempty"`
}

// Describe resolves host, tests it, and returns the access guide.
func (r *Router) Describe(ctx context.Context, host, principal string) (Description, error) {
	t, ep, err := r.resolve(ctx, host, principal)
	if err != nil {
		return Description{}, err
	}
	d := Description{Host: host, Route: t.Route, Local: t.Local, HostKeyPolicy: r.cfg.HostKeyPolicy.String()}
	if t.Local {
		d.Reachable = true
		d.Notes = append(d.Notes, "runs on this machine; no SSH involved")
		return d, nil
	}
	d.Endpoint = ep
	d.Notes = append(d.Notes, ep.Notes...)
	known, err := r.keys.known(ep.Address())
	if err != nil {
		return d, err
	}
	d.KnownKeys = known
	if len(known) == 0 {
		d.Notes = append(d.Notes, "no host key on file: run "+r.cfg.TrustCommand(host)+" after checking the fingerprint")
	}
	spec, _ := ParseHostSpec(host)
	d.SSHCommand = r.sshCommand(ep, spec, known)
	tr := r.testEndpoint(ctx, ep, principal, TestResult{Host: host, Route: t.Route})
	d.Reachable, d.Latency, d.HostKey = tr.Reachable, tr.Latency, tr.HostKey
	if tr.Err != nil {
		d.Error = tr.Err.Error()
	}
	if s, ok := t.Runner.(*SSH); ok && tr.Err == nil {
		sh, how, err := s.shell(ctx)
		switch {
		case err != nil:
			d.Shell = "unknown: " + err.Error()
		default:
			d.Shell = string(sh) + " (" + how + ")"
		}
		if sh.Windows() {
			d.Helper = "not used: a Windows host (" + string(sh) + "); the helper runs on Linux only"
		} else {
			d.Helper = s.describeHelper(ctx)
		}
	}
	return d, nil
}

// sshCommand renders the ssh(1) command for ep. An ssh_config alias is
// named as is (the person's ssh reads the same file); anything else is
// spelled out.
func (r *Router) sshCommand(ep *Endpoint, spec HostSpec, known []KnownKey) string {
	args := []string{"ssh"}
	onlyOurs := len(known) > 0 && r.cfg.KnownHostsFile != "" &&
		!slices.ContainsFunc(known, func(k KnownKey) bool { return k.File != r.cfg.KnownHostsFile })
	if onlyOurs {
		files := append(slices.Clone(r.cfg.UserKnownHostsFiles), r.cfg.KnownHostsFile)
		args = append(args, "-o", "UserKnownHostsFile="+strings.Join(files, " "))
	}
	if ep.Source == "ssh_config" {
		if spec.User != "" {
			args = append(args, "-l", spec.User)
		}
		if spec.Port != 0 {
			args = append(args, "-p", strconv.Itoa(spec.Port))
		}
		args = append(args, ep.Name)
	} else {
		if ep.Port != 22 {
			args = append(args, "-p", strconv.Itoa(ep.Port))
		}
		for _, f := range ep.IdentityFiles {
			args = append(args, "-i", f)
		}
		if ep.IdentitiesOnly {
			args = append(args, "-o", "IdentitiesOnly=yes")
		}
		if len(ep.Jumps) > 0 {
			var hops []string
			for _, j := range ep.Jumps {
				h := j.User + "@" + j.Host
				if strings.Contains(j.Host, ":") {
					h = j.User + "@[" + j.Host + "]"
				}
				if j.Port != 22 {
					h += ":" + strconv.Itoa(j.Port)
				}
				hops = append(hops, h)
			}
			args = append(args, "-J", strings.Join(hops, ","))
		}
		args = append(args, ep.User+"@"+ep.Host)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// ErrFingerprintMismatch means Trust was given a fingerprint and the host
// showed another key. Nothing was recorded.
var ErrFingerprintMismatch = errors.New("exec: host key fingerprint differs from the one expected")

// ErrFingerprintRequired means Trust was given no fingerprint, or one that
// is not of the form "SHA256:…". Nothing was recorded.
var ErrFingerprintRequired = errors.New("exec: trusting a host key needs its SHA256:… fingerprint")

// TrustResult is the outcome of HostKey and Trust.
type TrustResult struct {
	// Host is the host asked for.
	Host string `json:"host"`
	// Address is the host:port whose key was read.
	Address string `json:"address"`
	// KeyType and Fingerprint describe the key the host showed.
	KeyType     string `json:"key_type"`
	Fingerprint string `json:"fingerprint"`
	// AlreadyKnown is set when that key is on file already.
	AlreadyKnown bool `json:"already_known,omitempty"`
	// Changed is set when a different key is on file for the host; Known
	// lists the keys on file then.
	Changed bool       `json:"changed,omitempty"`
	Known   []KnownKey `json:"known,omitempty"`
	// Recorded is set when Trust wrote a hashed line to File.
	Recorded bool `json:"recorded,omitempty"`
	// File is rigout's known_hosts file (RouterConfig.KnownHostsFile).
	File string `json:"file,omitempty"`
}

// HostKey connects to host and reads the key it shows, without logging in,
// and says whether that key is on file (AlreadyKnown) or differs from the
// one on file (Changed). It records nothing, whatever the HostKeyPolicy:
// it is the first of two steps, the second being Trust with the
// fingerprint once a person has checked it.
//
// When the key was read, the result describes it even if the error is not
// nil. A key that Trust would refuse, because it differs from the one on
// file or is revoked, comes with the *HostKeyError a connection would get,
// which says how to resolve it. Other errors mean the key could not be read
// (a *HostSpecError, a *DialError, a host that is this machine). Jump hosts
// are checked under the policy, as for any connection.
func (r *Router) HostKey(ctx context.Context, host string) (TrustResult, error) {
	res, _, err := r.readHostKey(ctx, host)
	return res, err
}

// Trust records host's key as a hashed line in RouterConfig.KnownHostsFile,
// whatever the HostKeyPolicy, if and only if the host shows the key whose
// SHA256 fingerprint is fingerprint ("SHA256:…", as HostKey and
// ssh-keygen -lf print it). It connects and reads the key as HostKey does;
// no login is attempted.
//
// An empty or malformed fingerprint is ErrFingerprintRequired, before any
// connection: read the key with HostKey first. A host showing another key
// is ErrFingerprintMismatch. A key on file already is reported with
// AlreadyKnown, and a host whose key differs from the one on file is
// refused with a *HostKeyError (remove the old line first). In every one of
// those cases nothing is written. A recorded key is reported through
// RouterConfig.OnHostKey as HostKeyLearned.
func (r *Router) Trust(ctx context.Context, host, fingerprint string) (TrustResult, error) {
	if fingerprint == "" {
		return TrustResult{Host: host}, fmt.Errorf("%w: read the key with Router.HostKey, check it with the host's administrator, then pass its fingerprint (from a terminal: rigout hosts trust %s --expect SHA256:…)",
			ErrFingerprintRequired, shellQuote(host))
	}
	if rest, ok := strings.CutPrefix(fingerprint, "SHA256:"); !ok || rest == "" {
		return TrustResult{Host: host}, fmt.Errorf("%w: %q is not one (want SHA256: and the base64 hash, as ssh-keygen -lf prints it)", ErrFingerprintRequired, fingerprint)
	}
	if r.cfg.KnownHostsFile == "" {
		return TrustResult{Host: host}, errors.New("exec: no RouterConfig.KnownHostsFile to record keys in")
	}
	res, key, err := r.readHostKey(ctx, host)
	if key == nil {
		return res, err
	}
	if res.Fingerprint != fingerprint {
		return res, fmt.Errorf("%w: %s (%s) showed %s %s, expected %s", ErrFingerprintMismatch, host, res.Address, res.KeyType, res.Fingerprint, fingerprint)
	}
	if err != nil || res.AlreadyKnown {
		return res, err
	}
	file, learned, err := r.keys.learn(res.Address, key)
	if err != nil {
		return res, err
	}
	res.File, res.Recorded, res.AlreadyKnown = file, learned, !learned
	if learned {
		r.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "host key trusted",
			slog.String("host", host), slog.String("address", res.Address),
			slog.String("key", res.KeyType+" "+res.Fingerprint), slog.String("file", file))
		r.keys.emit(ctx, HostKeyEvent{Kind: HostKeyLearned, Host: host, Address: res.Address,
			KeyType: res.KeyType, Fingerprint: res.Fingerprint, File: file, Time: r.cfg.Now()})
	}
	return res, nil
}

// readHostKey is HostKey, also returning the key itself when it was read
// (then the result describes it, whatever the error).
func (r *Router) readHostKey(ctx context.Context, host string) (TrustResult, ssh.PublicKey, error) {
	t, ep, err := r.resolve(ctx, host, "")
	if err != nil {
		return TrustResult{Host: host}, nil, err
	}
	if t.Local {
		return TrustResult{Host: host}, nil, fmt.Errorf("exec: %q runs on this machine; there is no host key to trust", host)
	}
	res := TrustResult{Host: host, Address: ep.Address(), File: r.cfg.KnownHostsFile}
	key, err := r.fetchHostKey(ctx, ep)
	if err != nil {
		return res, nil, err
	}
	res.KeyType, res.Fingerprint = key.Type(), ssh.FingerprintSHA256(key)
	v, err := r.keys.check(ep.Address(), probeAddr(), key)
	if err != nil {
		return res, key, err
	}
	switch v.reason {
	case nil:
		res.AlreadyKnown = true
	case ErrHostKeyUnknown:
	default:
		res.Changed, res.Known = v.reason == ErrHostKeyChanged, v.known
		return res, key, r.keys.refusal(hop{name: host, addr: ep.Address()}, key, v)
	}
	return res, key, nil
}

// errKeyCaptured ends a handshake once the host key is in hand.
var errKeyCaptured = errors.New("exec: host key captured")

// fetchHostKey reads ep's host key through its jump hosts without logging
// in. It asks for a key type on file when there is one, so that the key
// can be compared.
func (r *Router) fetchHostKey(ctx context.Context, ep *Endpoint) (ssh.PublicKey, error) {
	var via *ssh.Client
	if len(ep.Jumps) > 0 {
		last := ep.Jumps[len(ep.Jumps)-1]
		last.Jumps = ep.Jumps[:len(ep.Jumps)-1]
		c, err := r.dialEndpoint(ctx, &last, "")
		if err != nil {
			return nil, err
		}
		defer c.closeTransport()
		via = c.client
	}
	hctx, cancel := context.WithTimeout(ctx, r.cfg.ConnectTimeout)
	defer cancel()
	h := *ep
	h.Jumps = nil
	nc, err := r.transport(hctx, &h, via)
	if err != nil {
		return nil, &DialError{Host: ep.Name, Address: ep.Address(), Err: connectErr(ctx, hctx, err, r.cfg.ConnectTimeout, "connect")}
	}
	defer nc.Close()
	known, err := r.keys.known(ep.Address())
	if err != nil {
		return nil, err
	}
	var key ssh.PublicKey
	cfg := &ssh.ClientConfig{
		User: ep.User,
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
			key = k
			return errKeyCaptured
		},
		HostKeyAlgorithms: algorithms(slices.DeleteFunc(known, func(k KnownKey) bool { return k.CertAuthority })),
		ClientVersion:     "SSH-2.0-rigout",
	}
	if dl, ok := hctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(hctx, func() { nc.Close() })
	defer stop()
	_, _, _, err = ssh.NewClientConn(nc, ep.Address(), cfg)
	if key != nil {
		return key, nil
	}
	return nil, &DialError{Host: ep.Name, Address: ep.Address(), Err: connectErr(ctx, hctx, err, r.cfg.ConnectTimeout, "SSH handshake")}
}
