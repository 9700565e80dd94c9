package config

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/internal/atomicfile"
	"github.com/rigout/rigout/redact"
	"github.com/rigout/rigout/validate"
)

// File is rigout's JSON configuration file (--config, RIGOUT_CONFIG).
// Every field is optional: the zero File is the defaults. Unknown fields are an error, so a misspelt
// setting is never silently ignored.
type File struct {
	// Tokens are bearer tokens with names and scopes. A token's value is
	// given as its SHA-256 digest (sha256) or read from an environment
	// variable (env); the file never holds a token itself.
	Tokens []Token `json:"tokens"`
	// OAuth configures the built-in authorization server.
	OAuth *OAuth `json:"oauth"`
	// AllowedOrigins and AllowedHosts extend the Origin and Host checks.
	AllowedOrigins []string `json:"allowed_origins"`
	AllowedHosts   []string `json:"allowed_hosts"`
	// CORS answers browser preflights for allowed origins.
	CORS bool `json:"cors"`
	// Audit settings.
	Audit Audit `json:"audit"`
	// Policy is the command policy (see package validate).
	Policy *Policy `json:"policy"`
	// Hosts are SSH hosts beside ~/.ssh/config: name, address, user,
	// port, key, proxy_jump, labels, helper, shell (auto, posix, cmd,
	// powershell).
	Hosts []Host `json:"hosts"`
	// SSH settings.
	SSH SSH `json:"ssh"`
	// RateLimit limits how often calls that run something may start:
	// "per_principal" and "per_host", each "N/s", "N/m" or "N/h".
	RateLimit RateLimit `json:"rate_limit"`
	// Families turns the optional tool families on and off.
	Families Families `json:"tool_families"`
	// Credentials are aliases of credentials kept elsewhere (see package
	// credentials).
	Credentials map[string]credentials.Spec `json:"credentials"`
	// WorkAreas are trees, besides the home directory and the working
	// directory, that commands of a token without a roots scope may
	// change; everything else is read-only in their view.
	WorkAreas []string `json:"work_areas"`
	// Downstream are downstream MCP servers by name.
	Downstream map[string]Downstream `json:"downstream"`
}

// RateLimit is the "rate_limit" section: how often calls that run
// something may start, "N/s", "N/m" or "N/h"; empty is no limit.
type RateLimit struct {
	PerPrincipal string `json:"per_principal"`
	PerHost      string `json:"per_host"`
}

// Limits parses the rate limits; an empty field sets no limit.
func (f RateLimit) Limits() (rigout.RateLimits, error) {
	var r rigout.RateLimits
	var err error
	if r.PerPrincipal, err = ParseRate(f.PerPrincipal); err != nil {
		return r, fmt.Errorf("rate_limit.per_principal: %w", err)
	}
	if r.PerHost, err = ParseRate(f.PerHost); err != nil {
		return r, fmt.Errorf("rate_limit.per_host: %w", err)
	}
	return r, nil
}

// ParseRate reads "N/s", "N/m" or "N/h" (also "N/second", "N/minute",
// "N/hour"); "" is no limit.
func ParseRate(s string) (rigout.Rate, error) {
	if s == "" {
		return rigout.Rate{}, nil
	}
	n, unit, ok := strings.Cut(strings.ReplaceAll(s, " ", ""), "/")
	calls, err := strconv.Atoi(n)
	if !ok || err != nil || calls <= 0 {
		return rigout.Rate{}, fmt.Errorf("%q: want N/s, N/m or N/h with N > 0", s)
	}
	per := map[string]time.Duration{"s": time.Second, "second": time.Second, "m": time.Minute, "min": time.Minute, "minute": time.Minute, "h": time.Hour, "hour": time.Hour}[unit]
	if per == 0 {
		return rigout.Rate{}, fmt.Errorf("%q: unit %q is not s, m or h", s, unit)
	}
	return rigout.Rate{Calls: calls, Per: per}, nil
}

// Token is one of the "tokens": a bearer token's name, scopes and
// expiry, and its value as a SHA-256 digest (SHA256) or the variable that
// holds it (Env), one of the two.
type Token struct {
	Name    string      `json:"name"`
	SHA256  string      `json:"sha256"`
	Env     string      `json:"env"`
	Scopes  auth.Scopes `json:"scopes"`
	Expires time.Time   `json:"expires"`
}

// OAuth is the "oauth" section: the built-in authorization server.
type OAuth struct {
	Consent             bool        `json:"consent"`
	InsecureAutoApprove bool        `json:"insecure_auto_approve"`
	AllowRegistration   bool        `json:"allow_registration"`
	RegistrationScopes  auth.Scopes `json:"registration_scopes"`
	AccessTTL           Duration    `json:"access_ttl"`
	Clients             []Client    `json:"clients"`
}

// Client is a registered OAuth client; its secret, if it has one, is
// given as a digest (SecretSHA256) or a variable (SecretEnv).
type Client struct {
	ID           string      `json:"id"`
	Name         string      `json:"name"`
	SecretSHA256 string      `json:"secret_sha256"`
	SecretEnv    string      `json:"secret_env"`
	RedirectURIs []string    `json:"redirect_uris"`
	Scopes       auth.Scopes `json:"scopes"`
}

// Policy is the command policy's configuration; see package validate
// for the rule IDs.
type Policy struct {
	// Mode is "deny" (refuse what the rules refuse) or "allow" (also
	// refuse programs not in Allow).
	Mode validate.Mode `json:"mode"`
	// Allow lists the programs allow mode permits.
	Allow []string `json:"allow"`
	// Rules sets rules by ID to "deny", "confirm" or "off".
	Rules map[string]validate.Action `json:"rules"`
	// ProtectedRoots are added to the default protected roots;
	// ProtectedRootsReplace, if given, replaces them (an empty list
	// protects nothing). Devices and CriticalFiles replace the defaults
	// when given.
	ProtectedRoots        []string `json:"protected_roots"`
	ProtectedRootsReplace []string `json:"protected_roots_replace"`
	Devices               []string `json:"devices"`
	CriticalFiles         []string `json:"critical_files"`
}

// protectedRoots is the policy's protected roots: the defaults and the
// file's protected_roots, or protected_roots_replace alone; nil (the
// defaults) when the file sets neither.
func (fp *Policy) protectedRoots() ([]string, error) {
	switch {
	case fp.ProtectedRootsReplace != nil && fp.ProtectedRoots != nil:
		return nil, errors.New("config: policy: protected_roots adds to the defaults and protected_roots_replace replaces them: give one")
	case fp.ProtectedRootsReplace != nil:
		return slices.Clone(fp.ProtectedRootsReplace), nil
	case fp.ProtectedRoots != nil:
		roots := validate.DefaultProtectedRoots()
		for _, r := range fp.ProtectedRoots {
			if !slices.Contains(roots, r) {
				roots = append(roots, r)
			}
		}
		return roots, nil
	}
	return nil, nil
}

// CommandPolicy returns the configured command policy, checked, or nil
// for the default.
func (c *File) CommandPolicy() (*validate.Policy, error) {
	fp := c.Policy
	if fp == nil {
		return nil, nil
	}
	roots, err := fp.protectedRoots()
	if err != nil {
		return nil, err
	}
	p := &validate.Policy{
		Mode:           fp.Mode,
		Allow:          fp.Allow,
		Rules:          fp.Rules,
		ProtectedRoots: roots,
		Devices:        fp.Devices,
		CriticalFiles:  fp.CriticalFiles,
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("config: policy: %w", err)
	}
	return p, nil
}

// SSH is the "ssh" section.
type SSH struct {
	// HostKeys is "strict" (the default), "accept-new" or
	// "insecure-ignore-host-key".
	HostKeys string `json:"host_keys"`
	// AutoHosts are the candidates of host "auto", in order.
	AutoHosts []string `json:"auto_hosts"`
	// AutoLocal lets "auto" fall back to this machine.
	AutoLocal bool `json:"auto_local"`
	// UnsafeProxyCommand honours ssh_config ProxyCommand, which runs a
	// local command for every connection.
	UnsafeProxyCommand bool `json:"unsafe_proxy_command"`
	// PersistHosts saves the hosts manage_hosts and `rigout hosts add`
	// add (and forgets those they remove) in <state dir>/hosts.json, read
	// at every start; without it they last for the run.
	PersistHosts bool `json:"persist_hosts"`
	// Helper ships rigout-helper to Linux hosts, which then run commands
	// in a per-principal view of the host and file operations beneath
	// their roots (docs/SSH_HELPER.md). A host's "helper" is auto (the
	// default), require or off.
	Helper *SSHHelper `json:"helper"`
}

// SSHHelper is "ssh.helper": rigout-helper's binaries per platform.
type SSHHelper struct {
	// Binaries maps a platform ("linux/amd64", "linux/arm64") to a
	// rigout-helper built for it: CGO_ENABLED=0 GOARCH=… go build
	// ./cmd/rigout-helper. If empty, the rigout-helper-linux-<arch> files
	// a release archive ships beside rigout are used.
	Binaries map[string]string `json:"binaries"`
	// CacheDir is where hosts keep it, relative to the login's home
	// (default .cache/rigout).
	CacheDir string `json:"cache_dir"`
	// Hidden are further paths on hosts that commands cannot read.
	Hidden []string `json:"hidden"`
}

// Audit is the "audit" section: the ledger.
type Audit struct {
	// StoreArgs keeps every argument's redacted value beside the digest
	// (file contents included); without it the ledger keeps each command
	// and path as it ran, redacted, and digests of the rest.
	StoreArgs bool `json:"store_args"`
	// UnsafeBestEffort runs calls the ledger cannot record.
	UnsafeBestEffort bool `json:"unsafe_best_effort"`
	// UnsafeSyncNormal commits without waiting for the disk (SQLite
	// synchronous=NORMAL): safe against a crash of rigout, not against a
	// power loss; about half the latency per audited call.
	UnsafeSyncNormal bool `json:"unsafe_sync_normal"`
	// Postgres is a PostgreSQL connection string: the ledger is kept
	// there, shared by every gateway given the same one, instead of in
	// <state dir>/audit.db.
	Postgres string `json:"postgres"`
	// PasswordEnv names the environment variable holding the database
	// password; a password in Postgres is refused.
	PasswordEnv string `json:"password_env"`
	// Gateway names this gateway instance in the rows it writes (default:
	// the host name).
	Gateway string `json:"gateway"`
	// KeyEnv names the environment variable holding the ledger's chain
	// key, 64 or more hex digits. Required with Postgres,
	// the same on every gateway; with SQLite it replaces the key derived
	// from <state dir>/audit.db.key.
	KeyEnv string `json:"key_env"`
	// UnsafeAmbientCredentials lets the PostgreSQL connection use a
	// password from PGPASSWORD or ~/.pgpass, which commands can read too.
	UnsafeAmbientCredentials bool `json:"unsafe_ambient_credentials"`
	// AnchorFile is a second copy of the SQLite ledger's head, kept out of
	// the state directory, so that deleting the whole ledger is detected.
	AnchorFile string `json:"anchor_file"`
	// UnsafeChainKeyInDatabase keys a PostgreSQL ledger without KeyEnv,
	// with a key derived from one the database itself holds: whoever can
	// read the database can then rewrite the ledger undetected.
	UnsafeChainKeyInDatabase bool `json:"unsafe_chain_key_in_database"`
}

// ChainKey reads the ledger's chain key from the variable KeyEnv names,
// through getenv: 64 or more hex digits (32 or more bytes). It is nil
// when KeyEnv is not set.
func (a Audit) ChainKey(getenv func(string) string) ([]byte, error) {
	if a.KeyEnv == "" {
		return nil, nil
	}
	v := getenv(a.KeyEnv)
	if v == "" {
		return nil, fmt.Errorf("audit.key_env names %s, which is not set", a.KeyEnv)
	}
	key, err := hex.DecodeString(strings.TrimSpace(v))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("audit.key_env: %s must hold 64 or more hex digits (32 bytes or more; openssl rand -hex 32 makes one)", a.KeyEnv)
	}
	return key, nil
}

// Duration is a time.Duration written as "90s", "1h".
type Duration time.Duration

// MarshalJSON writes the duration as UnmarshalJSON reads it.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a string time.ParseDuration accepts.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"1h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Load reads the configuration file at path; an empty path means no file
// (the zero File). Unknown keys, syntax errors and values of the wrong
// type are errors with their line and column ([PositionError]).
func Load(path string) (*File, error) {
	if path == "" {
		return &File{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, b)
}

// Parse reads a configuration from b; name is the file it came from, for
// error messages.
func Parse(name string, b []byte) (*File, error) {
	var c File
	if err := Unmarshal(name, b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Unmarshal decodes the JSON document b into v, a pointer to a struct,
// as strictly as [Load]: a key v's type does not have (matched exactly,
// case included) or a syntax error is a [PositionError] with its line and
// column, as is a value its type's own parser refuses; name is the
// document's file, for messages. Other programs' files that sit beside
// the configuration (the saved hosts) are read with it.
func Unmarshal(name string, b []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("config: Unmarshal(%T): want a pointer", v)
	}
	// Unknown keys, syntax errors and values of the types with their own
	// parsers are reported with their line and column by checkKeys; the
	// decoder's type errors carry an offset too.
	if err := checkKeys(name, b, t.Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(name, b, err)
	}
	return nil
}

// Marshal returns the configuration as indented JSON, as [Load] reads it
// back; fields at their zero value are written too.
func (c *File) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return append(b, '\n'), nil
}

// Write writes the configuration to w as [File.Marshal] does.
func (c *File) Write(w io.Writer) error {
	b, err := c.Marshal()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WriteFile writes the configuration to path, owner-only (it names the
// variables that hold secrets, and digests of tokens), through a
// temporary file renamed over path: a reader sees the old file or the
// new, never part of one.
func (c *File) WriteFile(path string) error {
	b, err := c.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, b); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// AuthTokens turns the file's tokens into auth tokens, reading values from
// the environment through getenv.
func (c *File) AuthTokens(getenv func(string) string) ([]auth.Token, error) {
	var out []auth.Token
	for i, t := range c.Tokens {
		tok := auth.Token{Name: t.Name, Scopes: t.Scopes, Expires: t.Expires}
		switch {
		case t.SHA256 != "" && t.Env != "":
			return nil, fmt.Errorf("config: token %d (%s): give sha256 or env, not both", i, t.Name)
		case t.SHA256 != "":
			d, err := auth.ParseDigest(t.SHA256)
			if err != nil {
				return nil, fmt.Errorf("config: token %d (%s): %w", i, t.Name, err)
			}
			tok.Digest = d
		case t.Env != "":
			v := getenv(t.Env)
			if v == "" {
				return nil, fmt.Errorf("config: token %d (%s): environment variable %s is empty", i, t.Name, t.Env)
			}
			tok.Secret = auth.NewSecret(v)
		default:
			return nil, fmt.Errorf("config: token %d (%s): needs sha256 (the token's SHA-256 digest) or env (a variable holding it)", i, t.Name)
		}
		out = append(out, tok)
	}
	return out, nil
}

// OAuthConfig turns the file's OAuth section into auth's; nil without
// one.
func (c *File) OAuthConfig(getenv func(string) string) (*auth.OAuthConfig, error) {
	if c.OAuth == nil {
		return nil, nil
	}
	o := &auth.OAuthConfig{
		Consent:             c.OAuth.Consent,
		InsecureAutoApprove: c.OAuth.InsecureAutoApprove,
		AllowRegistration:   c.OAuth.AllowRegistration,
		RegistrationScopes:  c.OAuth.RegistrationScopes,
		AccessTTL:           time.Duration(c.OAuth.AccessTTL),
	}
	for i, fc := range c.OAuth.Clients {
		cl := auth.Client{ID: fc.ID, Name: fc.Name, RedirectURIs: fc.RedirectURIs, Scopes: fc.Scopes}
		switch {
		case fc.SecretSHA256 != "" && fc.SecretEnv != "":
			return nil, fmt.Errorf("config: oauth client %d (%s): give secret_sha256 or secret_env, not both", i, fc.ID)
		case fc.SecretSHA256 != "":
			d, err := auth.ParseDigest(fc.SecretSHA256)
			if err != nil {
				return nil, fmt.Errorf("config: oauth client %d (%s): %w", i, fc.ID, err)
			}
			cl.SecretDigest = d
		case fc.SecretEnv != "":
			v := getenv(fc.SecretEnv)
			if v == "" {
				return nil, fmt.Errorf("config: oauth client %d (%s): environment variable %s is empty", i, fc.ID, fc.SecretEnv)
			}
			cl.Secret = auth.NewSecret(v)
		}
		o.Clients = append(o.Clients, cl)
	}
	return o, nil
}

// Families is the "tool_families" section: which of the optional tool
// families are served. system (system_monitoring, get_hardware_info),
// docker (docker_operations) and packages (install_software,
// environment_setup) are off unless set to true, which keeps the default
// tools/list (commands, processes, files, terminals, hosts, activity)
// under its 10 KiB budget.
type Families struct {
	System   bool `json:"system"`
	Docker   bool `json:"docker"`
	Packages bool `json:"packages"`
	// PipOptions are given to every pip install before the package names:
	// a mirror ("--index-url", URL) or local wheels ("--no-index",
	// "--find-links", DIR).
	PipOptions []string `json:"pip_options"`
}

// Downstream is one entry of the "downstream" section: a downstream MCP
// server whose tools are served as NAME__TOOL. Give command (a stdio
// server the gateway starts and supervises) or url (streamable HTTP, with
// its bearer token in the variable token_env or the credential alias
// token_credential). A command's variables may come from credential
// aliases (env_credentials); max_result_bytes and max_message_bytes bound
// what it returns.
type Downstream struct {
	Command         []string          `json:"command"`
	Env             map[string]string `json:"env"`
	EnvCredentials  map[string]string `json:"env_credentials"`
	MaxResultBytes  int               `json:"max_result_bytes"`
	MaxMessageBytes int               `json:"max_message_bytes"`
	Dir             string            `json:"dir"`
	URL             string            `json:"url"`
	TokenEnv        string            `json:"token_env"`
	TokenCredential string            `json:"token_credential"`
	Allow           []string          `json:"allow"`
	Deny            []string          `json:"deny"`
	ReadOnlyTools   []string          `json:"read_only_tools"`
	PathArgs        []string          `json:"path_args"`
	Timeout         Duration          `json:"timeout"`
}

// Host is one of the "hosts": an SSH host beside ~/.ssh/config. Its
// fields are those of remote.HostConfig, which the assembly (package
// server) builds from it and checks.
type Host struct {
	// Name is the alias used in host arguments.
	Name string `json:"name"`
	// Address is the host name or IP address to connect to; if empty,
	// ssh_config's HostName for Name, else Name.
	Address string `json:"address,omitempty"`
	// User is the remote login; if empty, ssh_config's, else the local
	// user's name.
	User string `json:"user,omitempty"`
	// Port is the TCP port; if zero, ssh_config's, else 22.
	Port int `json:"port,omitempty"`
	// Key is a private key file; a leading ~ is the home directory.
	Key string `json:"key,omitempty"`
	// ProxyJump is a jump host list in OpenSSH syntax.
	ProxyJump string `json:"proxy_jump,omitempty"`
	// Labels tag the host for fan-out selectors ("web", "env=prod").
	Labels []string `json:"labels,omitempty"`
	// Helper is "auto" (the default), "require" or "off": whether the
	// host runs commands through rigout-helper when ssh.helper is set.
	Helper string `json:"helper,omitempty"`
	// Shell is the shell the host's SSH server runs commands with: "auto"
	// (the default: learned on first contact), "posix", "cmd" or
	// "powershell" (docs/platforms.md).
	Shell string `json:"shell,omitempty"`
}

// Defaults of the settings that have one outside the file: the listen
// address of rigout serve, the log level and the SSH host key policy.
const (
	DefaultAddr     = "127.0.0.1:8765"
	DefaultLogLevel = "info"
	DefaultHostKeys = "strict"
)

// HostKeys is the SSH host key policy in effect: override (a flag or
// RIGOUT_HOST_KEYS) if set, else the file's ssh.host_keys, else
// [DefaultHostKeys].
func (c *File) HostKeys(override string) string {
	switch {
	case override != "":
		return override
	case c.SSH.HostKeys != "":
		return c.SSH.HostKeys
	}
	return DefaultHostKeys
}

// SecretEnv names the environment variables the file says hold secrets:
// tokens, OAuth client secrets, credential aliases of the env backend,
// the PostgreSQL password, the ledger's chain key and downstream tokens.
// The gateway moves them off its environment, keeps them from commands
// and masks their values in output.
func (c *File) SecretEnv() []string {
	var out []string
	add := func(n string) {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, t := range c.Tokens {
		add(t.Env)
	}
	for _, s := range c.Credentials {
		add(s.Env)
	}
	add(c.Audit.PasswordEnv)
	add(c.Audit.KeyEnv)
	if c.OAuth != nil {
		for _, cl := range c.OAuth.Clients {
			add(cl.SecretEnv)
		}
	}
	for _, d := range c.Downstream {
		add(d.TokenEnv)
	}
	return out
}

// SecretLookingEnv names the literal env values of stdio downstreams that
// look like secrets (by their name or their shape), as "NAME.VAR": they
// belong in the credential store (env_credentials).
func (c *File) SecretLookingEnv() []string {
	var out []string
	for n, d := range c.Downstream {
		for k, v := range d.Env {
			if kv := k + "=" + v; v != "" && redact.String(kv) != kv {
				out = append(out, n+"."+k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Check reports what is wrong with the configuration beyond its syntax,
// reading the variables it names through getenv: tokens and OAuth
// clients without a value or with two, the command policy and the rate
// limits. It builds nothing and touches no file. What needs the executor
// to be judged (the SSH host key policy, the hosts as the SSH router
// reads them, the downstream servers as federation does) is checked by
// assembly.Check, which calls Check first; rigout config check is that.
func (c *File) Check(getenv func(string) string) []error {
	var problems []error
	if _, err := c.AuthTokens(getenv); err != nil {
		problems = append(problems, err)
	}
	if _, err := c.OAuthConfig(getenv); err != nil {
		problems = append(problems, err)
	}
	if _, err := c.CommandPolicy(); err != nil {
		problems = append(problems, err)
	}
	if _, err := c.RateLimit.Limits(); err != nil {
		problems = append(problems, fmt.Errorf("config: %w", err))
	}
	return problems
}
