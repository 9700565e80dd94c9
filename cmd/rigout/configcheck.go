package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/internal/statedir"
	"github.com/rigout/rigout/redact"
	"github.com/rigout/rigout/validate"
)

const configUsage = `usage: rigout config check [FILE]

Validate rigout's configuration file (FILE, else --config, else
$RIGOUT_CONFIG) the way rigout start would — unknown keys and bad values
with their line and column, tokens whose variables are empty, the command
policy, rate limits, SSH settings and hosts — and print the effective
configuration: the file with the environment and defaults applied, secrets
redacted (a token's digest is cut short; variables say only whether they
are set).

Exit status: 0 valid, 1 invalid, 2 usage error.
`

// runConfig is `rigout config check`.
func runConfig(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, configUsage)
			return 0
		}
		fmt.Fprint(stderr, configUsage)
		return 2
	}
	fs := flag.NewFlagSet("rigout config check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), configUsage) }
	path := fs.String("config", os.Getenv("RIGOUT_CONFIG"), "the file to check (or give it as the argument)")
	stateDir := fs.String("state-dir", "", "state directory to report (default $RIGOUT_STATE_DIR, else the per-user default)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch len(pos) {
	case 0:
	case 1:
		*path = pos[0]
	default:
		fmt.Fprintln(stderr, "rigout config check: want at most one FILE")
		return 2
	}
	if *path == "" {
		fmt.Fprintln(stderr, "rigout config check: no file: give FILE, --config or RIGOUT_CONFIG (without one rigout uses its defaults)")
		return 2
	}
	f, err := config.Load(*path)
	if err != nil {
		fmt.Fprintf(stderr, "rigout config check: %v\n", err)
		return 1
	}
	hostKeys := f.HostKeys(os.Getenv("RIGOUT_HOST_KEYS"))
	problems := assembly.Check(f, hostKeys, os.Getenv)
	for _, v := range f.SecretLookingEnv() {
		fmt.Fprintf(stderr, "rigout config check: warning: downstream %s: env %s looks like a secret written in the file; keep it in the credential store and name it in env_credentials\n", strings.SplitN(v, ".", 2)[0], strings.SplitN(v, ".", 2)[1])
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(stderr, "rigout config check: %v\n", p)
		}
		return 1
	}
	policy, _ := f.CommandPolicy() // checked above
	dir, err := statedir.Resolve(*stateDir, nil)
	if err != nil {
		dir = "(" + err.Error() + ")"
	}
	eff := map[string]any{
		"config_file": *path,
		"state_dir":   dir,
		"addr":        envOr("RIGOUT_ADDR", config.DefaultAddr),
		"log_level":   envOr("RIGOUT_LOG_LEVEL", config.DefaultLogLevel),
		"public_url":  os.Getenv("RIGOUT_PUBLIC_URL"),
		"host_keys":   hostKeys,
		"auth_token":  authTokenSource(f),
		"file":        redactedFile(f),
		"policy":      effectivePolicy(policy),
	}
	b, _ := json.MarshalIndent(eff, "", "  ")
	fmt.Fprintln(stdout, string(b))
	fmt.Fprintf(stderr, "%s: valid\n", *path)
	return 0
}

// authTokenSource says, without the value, where rigout serve's handed-out
// token comes from.
func authTokenSource(f *config.File) string {
	switch {
	case os.Getenv("RIGOUT_AUTH_TOKEN") != "":
		return "RIGOUT_AUTH_TOKEN (set; value redacted)"
	case len(f.Tokens) > 0 || f.OAuth != nil:
		return "none handed out: the configured tokens and OAuth clients authenticate"
	}
	return "the state directory's token file (generated on first start)"
}

// redactedFile is the configuration as JSON with digests cut short and
// the variables that hold secrets shown only as set or not.
func redactedFile(f *config.File) any {
	b, _ := json.Marshal(f)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	short := func(d string) string {
		if len(d) > 8 {
			return d[:8] + "…(redacted)"
		}
		return "(redacted)"
	}
	mark := func(obj map[string]any, digestKey, envKey string) {
		if d, ok := obj[digestKey].(string); ok && d != "" {
			obj[digestKey] = short(d)
		}
		if e, ok := obj[envKey].(string); ok && e != "" {
			obj[envKey+"_set"] = os.Getenv(e) != ""
		}
	}
	if toks, ok := m["tokens"].([]any); ok {
		for _, t := range toks {
			if obj, ok := t.(map[string]any); ok {
				mark(obj, "sha256", "env")
			}
		}
	}
	if o, ok := m["oauth"].(map[string]any); ok {
		if cls, ok := o["clients"].([]any); ok {
			for _, c := range cls {
				if obj, ok := c.(map[string]any); ok {
					mark(obj, "secret_sha256", "secret_env")
				}
			}
		}
	}
	if ds, ok := m["downstream"].(map[string]any); ok {
		for _, d := range ds {
			if obj, ok := d.(map[string]any); ok {
				mark(obj, "", "token_env")
				if env, ok := obj["env"].(map[string]any); ok {
					for k, v := range env {
						if s, _ := v.(string); s != "" && redact.String(k+"="+s) != k+"="+s {
							env[k] = "(redacted)"
						}
					}
				}
			}
		}
	}
	return m
}

// effectivePolicy is the command policy as it applies: its lists with the
// defaults filled in, never null.
func effectivePolicy(p *validate.Policy) map[string]any {
	if p == nil {
		p = &validate.Policy{}
	}
	or := func(v, def []string) []string {
		if v == nil {
			return def
		}
		return v
	}
	return map[string]any{
		"mode":            p.Mode,
		"protected_roots": or(p.ProtectedRoots, validate.DefaultProtectedRoots()),
		"devices":         or(p.Devices, validate.DefaultDevices()),
		"critical_files":  or(p.CriticalFiles, validate.DefaultCriticalFiles()),
	}
}
