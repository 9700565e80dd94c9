package credentials

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rigout/rigout/auth"
)

// Defaults used when the corresponding Config field is zero.
const (
	// DefaultTimeout bounds one run of a vault client.
	DefaultTimeout = 10 * time.Second
)

// maxValue bounds what a backend may return.
const maxValue = 64 << 10

// ErrUnknownAlias is returned for an alias the store does not have.
var ErrUnknownAlias = errors.New("unknown credential alias")

// Kind names a backend.
type Kind string

// The backends.
const (
	Env   Kind = "env"   // an environment variable of the gateway
	File  Kind = "file"  // a file readable by its owner only
	Op    Kind = "op"    // 1Password: op read op://…
	Pass  Kind = "pass"  // pass show NAME (first line)
	Vault Kind = "vault" // HashiCorp Vault: vault kv get -field=F PATH
	Bw    Kind = "bw"    // Bitwarden: bw get password NAME
)

// Spec is one alias as the configuration file gives it: exactly one
// backend reference, and who may use it.
type Spec struct {
	// Env names an environment variable that holds the value.
	Env string `json:"env,omitempty"`
	// File is the absolute path of a file that holds the value (one
	// trailing newline is dropped). It must be a regular file that neither
	// group nor others may read.
	File string `json:"file,omitempty"`
	// Op is a 1Password secret reference, op://vault/item/field.
	Op string `json:"op,omitempty"`
	// Pass names a pass(1) entry; its first line is the value.
	Pass string `json:"pass,omitempty"`
	// Vault is a HashiCorp Vault KV secret and field.
	Vault *VaultRef `json:"vault,omitempty"`
	// Bw names a Bitwarden item; its password is the value.
	Bw string `json:"bw,omitempty"`
	// Hosts are globs over the hosts the alias may be used on. If empty,
	// only "local".
	Hosts []string `json:"hosts,omitempty"`
	// Tools are globs over the tools that may use the alias. If empty,
	// only execute_command.
	Tools []string `json:"tools,omitempty"`
}

// VaultRef is a HashiCorp Vault KV secret's path and field.
type VaultRef struct {
	Path  string `json:"path"`
	Field string `json:"field"`
}

// kind returns the spec's one backend and its reference, as shown.
func (s Spec) kind() (Kind, string, error) {
	var kinds []Kind
	var ref string
	add := func(k Kind, r string) {
		if r != "" {
			kinds = append(kinds, k)
			ref = r
		}
	}
	add(Env, s.Env)
	add(File, s.File)
	add(Op, s.Op)
	add(Pass, s.Pass)
	if s.Vault != nil {
		if s.Vault.Path == "" || s.Vault.Field == "" {
			return "", "", fmt.Errorf("vault needs both path and field")
		}
		add(Vault, s.Vault.Path+"#"+s.Vault.Field)
	}
	add(Bw, s.Bw)
	switch {
	case len(kinds) == 0:
		return "", "", fmt.Errorf("no backend: give one of env, file, op, pass, vault or bw")
	case len(kinds) > 1:
		return "", "", fmt.Errorf("more than one backend (%v): give exactly one", kinds)
	}
	k := kinds[0]
	switch {
	case k == File && !path.IsAbs(s.File):
		return "", "", fmt.Errorf("file %q is not an absolute path", s.File)
	case k == Op && !strings.HasPrefix(s.Op, "op://"):
		return "", "", fmt.Errorf("op reference %q does not start with op://", s.Op)
	case k != File && strings.HasPrefix(ref, "-"):
		return "", "", fmt.Errorf("reference %q starts with '-' (it would be read as an option)", ref)
	}
	return k, ref, nil
}

// Config configures a Store.
type Config struct {
	// Aliases maps alias names to their specs.
	Aliases map[string]Spec
	// Getenv reads the Env backend's variables. If nil, os.Getenv.
	Getenv func(string) string
	// Timeout bounds each run of a vault client. If zero, DefaultTimeout.
	Timeout time.Duration
	// CacheTTL is how long a resolved value is kept and reused. If zero,
	// nothing is cached: every use fetches the value afresh.
	CacheTTL time.Duration
	// Path is the PATH vault clients are looked up in and run with. If
	// empty, the gateway's own.
	Path string
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

// Store resolves aliases. It is safe for concurrent use.
type Store struct {
	cfg     Config
	aliases map[string]alias

	mu    sync.Mutex
	cache map[string]cached
}

type alias struct {
	spec Spec
	kind Kind
	ref  string
}

type cached struct {
	v       auth.Secret
	expires time.Time
}

// Info describes an alias, never its value.
type Info struct {
	Alias string   `json:"alias"`
	Kind  Kind     `json:"kind"`
	Ref   string   `json:"ref"`
	Hosts []string `json:"hosts"`
	Tools []string `json:"tools"`
}

// New checks cfg's aliases and returns a Store.
func New(cfg Config) (*Store, error) {
	c := cfg
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	s := &Store{cfg: c, aliases: map[string]alias{}, cache: map[string]cached{}}
	for name, sp := range cfg.Aliases {
		if !validAlias(name) {
			return nil, fmt.Errorf("credential alias %q: want letters, digits, '_', '-' and '.'", name)
		}
		k, ref, err := sp.kind()
		if err != nil {
			return nil, fmt.Errorf("credential alias %q: %w", name, err)
		}
		sp.Hosts, sp.Tools = slices.Clone(sp.Hosts), slices.Clone(sp.Tools)
		if len(sp.Hosts) == 0 {
			sp.Hosts = []string{"local"}
		}
		if len(sp.Tools) == 0 {
			sp.Tools = []string{"execute_command"}
		}
		s.aliases[name] = alias{spec: sp, kind: k, ref: ref}
	}
	return s, nil
}

func validAlias(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// Len returns the number of aliases.
func (s *Store) Len() int { return len(s.aliases) }

// List describes every alias, sorted by name, without values.
func (s *Store) List() []Info {
	out := make([]Info, 0, len(s.aliases))
	for name, a := range s.aliases {
		out = append(out, Info{Alias: name, Kind: a.kind, Ref: a.ref, Hosts: slices.Clone(a.spec.Hosts), Tools: slices.Clone(a.spec.Tools)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Alias < out[j].Alias })
	return out
}

// DeniedError says an alias may not be used where it was asked for.
type DeniedError struct {
	Alias, Host, Tool string
}

func (e *DeniedError) Error() string {
	if e.Tool != "" {
		return fmt.Sprintf("credential alias %q may not be used by %s (see its \"tools\")", e.Alias, e.Tool)
	}
	return fmt.Sprintf("credential alias %q may not be used on host %q (see its \"hosts\")", e.Alias, e.Host)
}

// Allow returns nil when alias may be used on host by tool, an error
// wrapping ErrUnknownAlias for an alias the store does not have, and a
// *DeniedError otherwise. Host globs compare case-insensitively, and only
// with host names: a host given as an address (user@, :port, an IPv6
// literal) is allowed only by an entry naming it exactly, or "*", so that
// hosts ["web*"] never sends a secret to web@attacker:22.
func (s *Store) Allow(aliasName, host, tool string) error {
	a, ok := s.aliases[aliasName]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownAlias, aliasName)
	}
	if !matchAny(a.spec.Tools, tool, false) {
		return &DeniedError{Alias: aliasName, Tool: tool}
	}
	if !allowHost(a.spec.Hosts, host) {
		return &DeniedError{Alias: aliasName, Host: host}
	}
	return nil
}

// allowHost matches host against the alias's host globs; an address is
// matched exactly (or by "*"), never by a glob.
func allowHost(globs []string, host string) bool {
	if !strings.ContainsAny(host, "@:[]") {
		return matchAny(globs, host, true)
	}
	for _, g := range globs {
		if g == "*" || strings.EqualFold(g, host) {
			return true
		}
	}
	return false
}

func matchAny(globs []string, name string, fold bool) bool {
	if fold {
		name = strings.ToLower(name)
	}
	for _, g := range globs {
		if fold {
			g = strings.ToLower(g)
		}
		if ok, err := path.Match(g, name); err == nil && ok {
			return true
		}
	}
	return false
}

// Resolve fetches alias's value from its backend (or the cache, with a
// CacheTTL). The error names the alias and the backend, never a value.
func (s *Store) Resolve(ctx context.Context, aliasName string) (auth.Secret, error) {
	a, ok := s.aliases[aliasName]
	if !ok {
		return auth.Secret{}, fmt.Errorf("%w %q", ErrUnknownAlias, aliasName)
	}
	if s.cfg.CacheTTL > 0 {
		s.mu.Lock()
		c, ok := s.cache[aliasName]
		s.mu.Unlock()
		if ok && s.cfg.Now().Before(c.expires) {
			return c.v, nil
		}
	}
	v, err := s.fetch(ctx, a)
	if err != nil {
		return auth.Secret{}, fmt.Errorf("credential alias %q (%s): %w", aliasName, a.kind, err)
	}
	if v == "" {
		return auth.Secret{}, fmt.Errorf("credential alias %q (%s): the value is empty", aliasName, a.kind)
	}
	sec := auth.NewSecret(v)
	if s.cfg.CacheTTL > 0 {
		s.mu.Lock()
		s.cache[aliasName] = cached{v: sec, expires: s.cfg.Now().Add(s.cfg.CacheTTL)}
		s.mu.Unlock()
	}
	return sec, nil
}

func (s *Store) fetch(ctx context.Context, a alias) (string, error) {
	sp := a.spec
	switch a.kind {
	case Env:
		v := s.cfg.Getenv(sp.Env)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is not set", sp.Env)
		}
		return v, nil
	case File:
		return readOwnerOnly(sp.File)
	case Op:
		return s.run(ctx, "op", "read", sp.Op)
	case Pass:
		v, err := s.run(ctx, "pass", "show", sp.Pass)
		if err != nil {
			return "", err
		}
		first, _, _ := strings.Cut(v, "\n")
		return first, nil
	case Vault:
		return s.run(ctx, "vault", "kv", "get", "-field="+sp.Vault.Field, sp.Vault.Path)
	case Bw:
		return s.run(ctx, "bw", "get", "password", sp.Bw)
	}
	return "", fmt.Errorf("unknown backend %q", a.kind)
}

// readOwnerOnly reads a regular file that only its owner may read.
func readOwnerOnly(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", name, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat %s: %w", name, err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", name)
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("%s is readable or writable by group or others (mode %04o): chmod 600 it", name, fi.Mode().Perm())
	case fi.Size() > maxValue:
		return "", fmt.Errorf("%s is larger than %d bytes", name, maxValue)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s is owned by uid %d, not by the gateway's user (uid %d)", name, st.Uid, os.Geteuid())
	}
	b := make([]byte, fi.Size()+1)
	n, err := f.Read(b)
	if err != nil && n == 0 && fi.Size() > 0 {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b[:n]), "\n"), "\r"), nil
}

// run runs a vault client: argv, no shell, stdin /dev/null, no terminal
// (a new session), bounded in time and output. Its stdout is the value and
// never goes into an error.
func (s *Store) run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	bin := name
	env := os.Environ()
	if s.cfg.Path != "" {
		p, err := lookPath(name, s.cfg.Path)
		if err != nil {
			return "", err
		}
		bin = p
		env = append(env, "PATH="+s.cfg.Path)
	} else if p, err := osexec.LookPath(name); err == nil {
		bin = p
	} else {
		return "", fmt.Errorf("%s is not installed (not on PATH)", name)
	}
	c := osexec.CommandContext(ctx, bin, args...)
	c.Env = env
	c.Stdin = nil // /dev/null
	var stdout, stderr limited
	stdout.max, stderr.max = maxValue, 4<<10
	c.Stdout, c.Stderr = &stdout, &stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal: no prompt
	c.WaitDelay = time.Second
	err := c.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("%s did not answer within %v (is it signed in? it may not prompt)", name, s.cfg.Timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.b.String())
		msg, _, _ = strings.Cut(msg, "\n")
		if v := strings.TrimSpace(stdout.b.String()); len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "***")
		}
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		if msg == "" {
			msg = "no message"
		}
		return "", fmt.Errorf("%s failed (%v): %s", name, exitText(err), msg)
	}
	if stdout.over {
		return "", fmt.Errorf("%s printed more than %d bytes", name, maxValue)
	}
	return strings.TrimSuffix(strings.TrimSuffix(stdout.b.String(), "\n"), "\r"), nil
}

func exitText(err error) string {
	var ee *osexec.ExitError
	if errors.As(err, &ee) {
		return fmt.Sprintf("exit %d", ee.ExitCode())
	}
	return "could not run"
}

// lookPath finds name in the directories of pathList.
func lookPath(name, pathList string) (string, error) {
	for _, dir := range strings.Split(pathList, ":") {
		if dir == "" {
			continue
		}
		p := path.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed (not on PATH)", name)
}

// limited keeps at most max bytes.
type limited struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room < len(p) {
		l.over = true
		if room > 0 {
			l.b.Write(p[:room])
		}
		return len(p), nil
	}
	return l.b.Write(p)
}

// AllowTool is Allow without a host: for a tool that reaches none, such
// as the credentials tool's get.
func (s *Store) AllowTool(aliasName, tool string) error {
	a, ok := s.aliases[aliasName]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownAlias, aliasName)
	}
	if !matchAny(a.spec.Tools, tool, false) {
		return &DeniedError{Alias: aliasName, Tool: tool}
	}
	return nil
}
