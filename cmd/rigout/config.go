package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rigout/rigout/credentials"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/validate"
)

// fileConfig is rigout's JSON configuration file (--config, RIGOUT_CONFIG).
// Every field is optional. Unknown fields are an error, so a misspelt
// setting is never silently ignored.
type fileConfig struct {
	// Tokens are bearer tokens with names and scopes. A token's value is
	// given as its SHA-256 digest (sha256) or read from an environment
	// variable (env); the file never holds a token itself.
	Tokens []fileToken `json:"tokens"`
	// OAuth configures the built-in authorization server.
	OAuth *fileOAuth `json:"oauth"`
	// AllowedOrigins and AllowedHosts extend the Origin and Host checks.
	AllowedOrigins []string `json:"allowed_origins"`
	AllowedHosts   []string `json:"allowed_hosts"`
	// CORS answers browser preflights for allowed origins.
	CORS bool `json:"cors"`
	// Audit settings.
	Audit fileAudit `json:"audit"`
	// Policy is the command policy (see package validate).
	Policy *filePolicy `json:"policy"`
	// Hosts are SSH hosts beside ~/.ssh/config: name, address, user,
	// port, key, proxy_jump, labels.
	Hosts []exec.HostConfig `json:"hosts"`
	// SSH settings.
	SSH fileSSH `json:"ssh"`
	// RateLimit limits how often calls that run something may start:
	// "per_principal" and "per_host", each "N/s", "N/m" or "N/h".
	RateLimit fileRateLimit `json:"rate_limit"`
	// Families turns the optional tool families on and off (systools.go).
	Families fileFamilies `json:"tool_families"`
	// Credentials are aliases of credentials kept elsewhere (credentials.go).
	Credentials map[string]credentials.Spec `json:"credentials"`
	// WorkAreas are trees, besides the home directory and the working
	// directory, that commands of a token without a roots scope may
	// change; everything else is read-only in their view.
	WorkAreas []string `json:"work_areas"`
	// Downstream are downstream MCP servers by name (downstream.go).
	Downstream map[string]fileDownstream `json:"downstream"`
}

type fileRateLimit struct {
	PerPrincipal string `json:"per_principal"`
	PerHost      string `json:"per_host"`
}

// limits parses the rate limits; an empty field sets no limit.
func (f fileRateLimit) limits() (rigout.RateLimits, error) {
	var r rigout.RateLimits
	var err error
	if r.PerPrincipal, err = parseRate(f.PerPrincipal); err != nil {
		return r, fmt.Errorf("rate_limit.per_principal: %w", err)
	}
	if r.PerHost, err = parseRate(f.PerHost); err != nil {
		return r, fmt.Errorf("rate_limit.per_host: %w", err)
	}
	return r, nil
}

// parseRate reads "N/s", "N/m" or "N/h" (also "N/second", "N/minute",
// "N/hour"); "" is no limit.
func parseRate(s string) (rigout.Rate, error) {
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

type fileToken struct {
	Name    string      `json:"name"`
	SHA256  string      `json:"sha256"`
	Env     string      `json:"env"`
	Scopes  auth.Scopes `json:"scopes"`
	Expires time.Time   `json:"expires"`
}

type fileOAuth struct {
	Consent             bool         `json:"consent"`
	InsecureAutoApprove bool         `json:"insecure_auto_approve"`
	AllowRegistration   bool         `json:"allow_registration"`
	RegistrationScopes  auth.Scopes  `json:"registration_scopes"`
	AccessTTL           duration     `json:"access_ttl"`
	Clients             []fileClient `json:"clients"`
}

type fileClient struct {
	ID           string      `json:"id"`
	Name         string      `json:"name"`
	SecretSHA256 string      `json:"secret_sha256"`
	SecretEnv    string      `json:"secret_env"`
	RedirectURIs []string    `json:"redirect_uris"`
	Scopes       auth.Scopes `json:"scopes"`
}

// filePolicy is the command policy's configuration; see package validate
// for the rule IDs.
type filePolicy struct {
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
func (fp *filePolicy) protectedRoots() ([]string, error) {
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

// policy returns the configured command policy, or nil for the default.
func (c *fileConfig) policy() (*validate.Policy, error) {
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

type fileSSH struct {
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
	Helper *fileSSHHelper `json:"helper"`
}

type fileSSHHelper struct {
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

// config reads the binaries into the Router's HelperConfig. Without
// configured binaries it takes the ones a release ships beside exe (the
// running rigout; exec.FindHelperBinaries), and says where none was found.
func (h *fileSSHHelper) config(principal func(context.Context) exec.Principal, exe string) (*exec.HelperConfig, error) {
	if h == nil {
		h = &fileSSHHelper{}
	}
	var cfg *exec.HelperConfig
	if len(h.Binaries) == 0 {
		found, err := exec.FindHelperBinaries(exe)
		if err != nil {
			return nil, fmt.Errorf("config: ssh.helper: %w", err)
		}
		cfg = found
	} else {
		cfg = &exec.HelperConfig{Binaries: map[string][]byte{}, Origin: "ssh.helper.binaries"}
	}
	cfg.CacheDir, cfg.Hidden, cfg.Principal = h.CacheDir, h.Hidden, principal
	for platform, path := range h.Binaries {
		if !strings.HasPrefix(platform, "linux/") {
			return nil, fmt.Errorf("config: ssh.helper.binaries: %q: only linux/<arch> hosts run the helper", platform)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: ssh.helper.binaries: %s: %w", platform, err)
		}
		cfg.Binaries[platform] = b
	}
	return cfg, nil
}

type fileAudit struct {
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
	// <state dir>/audit.db. See postgres.go.
	Postgres string `json:"postgres"`
	// PasswordEnv names the environment variable holding the database
	// password; a password in Postgres is refused.
	PasswordEnv string `json:"password_env"`
	// Gateway names this gateway instance in the rows it writes (default:
	// the host name).
	Gateway string `json:"gateway"`
	// KeyEnv names the environment variable holding the ledger's chain
	// key, 64 or more hex digits (see chainKey). Required with Postgres,
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

// duration is a time.Duration written as "90s", "1h".
type duration time.Duration

// MarshalJSON writes the duration as UnmarshalJSON reads it.
func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"1h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// loadConfig reads the configuration file at path; an empty path means
// no file.
func loadConfig(path string) (*fileConfig, error) {
	var c fileConfig
	if path == "" {
		return &c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	// Unknown keys, syntax errors and values of the types with their own
	// parsers are reported with their line and column by checkKeys; the
	// decoder's type errors carry an offset too.
	if err := checkKeys(path, b, reflect.TypeFor[fileConfig]()); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, decodeError(path, b, err)
	}
	return &c, nil
}

// authTokens turns the file's tokens into auth tokens, reading values from
// the environment through getenv.
func (c *fileConfig) authTokens(getenv func(string) string) ([]auth.Token, error) {
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

// oauthConfig turns the file's OAuth section into auth's.
func (c *fileConfig) oauthConfig(getenv func(string) string) (*auth.OAuthConfig, error) {
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
