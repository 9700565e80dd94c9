package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rigout/rigout/config"
)

// secretsFDEnv names the descriptor a re-executed rigout reads its secrets
// from.
const secretsFDEnv = "RIGOUT_SECRETS_FD"

// notSecret are RIGOUT_* variables that configure rather than authenticate.
var notSecret = []string{
	"RIGOUT_ADDR", "RIGOUT_CONFIG", "RIGOUT_STATE_DIR", "RIGOUT_PUBLIC_URL",
	"RIGOUT_LOG_LEVEL", "RIGOUT_HOST_KEYS", "RIGOUT_WORK_AREAS", secretsFDEnv,
}

// secrets are the values the gateway was given through its environment,
// held after they were moved off it. The zero value reads the real
// environment.
type secrets struct {
	vals  map[string]string
	names map[string]bool // every variable that holds a secret, present or not
}

// getenv reads a variable: a secret moved off the environment, else the
// environment.
func (s *secrets) getenv(name string) string {
	if v, ok := s.vals[name]; ok {
		return v
	}
	return os.Getenv(name)
}

// private reports whether a variable of the gateway's environment must not
// reach a command: rigout's own, the secrets the configuration names, and
// the SSH agent socket (a command could use the gateway user's keys to
// reach hosts outside its token's scopes).
func (s *secrets) private(name string) bool {
	return strings.HasPrefix(name, "RIGOUT_") || s.names[name] || name == "SSH_AUTH_SOCK"
}

// values returns every secret value held, for the redactor.
func (s *secrets) values() []string {
	var out []string
	for _, v := range s.vals {
		out = append(out, v)
	}
	for n := range s.names {
		if v := os.Getenv(n); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// secretNames returns the variables that hold secrets: RIGOUT_* ones that
// are not configuration, and those the configuration file names for tokens
// and client secrets. A configuration file that cannot be read names none;
// the command reports the error itself later.
func secretNames(args []string) map[string]bool {
	names := map[string]bool{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "RIGOUT_") && !slices.Contains(notSecret, name) {
			names[name] = true
		}
	}
	path := os.Getenv("RIGOUT_CONFIG")
	for i, a := range args {
		switch {
		case (a == "--config" || a == "-config") && i+1 < len(args):
			path = args[i+1]
		case strings.HasPrefix(a, "--config="), strings.HasPrefix(a, "-config="):
			_, path, _ = strings.Cut(a, "=")
		}
	}
	if f, err := config.Load(path); err == nil {
		// Tokens, client secrets, credential aliases of the env backend,
		// the PostgreSQL password, the ledger's chain key, downstream
		// tokens.
		for _, n := range f.SecretEnv() {
			names[n] = true
		}
	}
	return names
}

// hideSecrets moves the secrets in the environment off it, so that the
// serving process's /proc/PID/environ holds none: it re-executes the binary
// in place (same PID) without them, their values on a memory file the new
// image reads back and closes. A process that was re-executed so returns
// what it read. It also marks the process not dumpable, so that other
// processes of the same user cannot read its memory or environment through
// /proc.
func hideSecrets(args []string) (*secrets, error) {
	if err := undumpable(); err != nil {
		return nil, err
	}
	if fd := os.Getenv(secretsFDEnv); fd != "" {
		return readSecrets(fd, secretNames(args))
	}
	names := secretNames(args)
	vals := map[string]string{}
	var env []string
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		if names[name] {
			vals[name] = v
			continue
		}
		env = append(env, kv)
	}
	if len(vals) == 0 {
		return &secrets{names: names}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("re-exec: %w", err)
	}
	mfd, err := secretsMemFile() // no CLOEXEC: the new image inherits it
	if err != nil {
		return nil, fmt.Errorf("re-exec: %w", err)
	}
	b, _ := json.Marshal(vals)
	if _, err := unix.Write(mfd, b); err != nil {
		return nil, fmt.Errorf("re-exec: %w", err)
	}
	env = append(env, secretsFDEnv+"="+strconv.Itoa(mfd))
	err = syscall.Exec(self, os.Args, env)
	unix.Close(mfd)
	return nil, fmt.Errorf("re-exec %s: %w", self, err)
}

// readSecrets reads the secrets a previous image left on fd, and closes it.
func readSecrets(fdText string, names map[string]bool) (*secrets, error) {
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not a descriptor", secretsFDEnv, fdText)
	}
	os.Unsetenv(secretsFDEnv)
	f := os.NewFile(uintptr(fd), "rigout-secrets")
	defer f.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	var vals map[string]string
	if err := json.NewDecoder(f).Decode(&vals); err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	for n := range vals {
		names[n] = true
	}
	return &secrets{vals: vals, names: names}, nil
}
