package credentials_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/internal/fakecmd"
)

const value = "cr3d-VALUE-0987654321"

func newStore(t *testing.T, cfg credentials.Config) *credentials.Store {
	t.Helper()
	s, err := credentials.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// noValue fails if any text holds the value.
func noValue(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, value) {
			t.Fatalf("%s holds the value: %s", what, s)
		}
	}
}

// TestVaultBackends: each vault client is run as the exact argv, and its
// output (first line for pass, trailing newline dropped) is the value;
// the value prints as [REDACTED] everywhere but Reveal.
func TestVaultBackends(t *testing.T) {
	cases := []struct {
		name string
		spec credentials.Spec
		out  string
		argv string
	}{
		{"op", credentials.Spec{Op: "op://Prod/db/password"}, value, "op read op://Prod/db/password"},
		{"pass", credentials.Spec{Pass: "ci/github"}, value + "\nlogin: ci\nurl: x\n", "pass show ci/github"},
		{"vault", credentials.Spec{Vault: &credentials.VaultRef{Path: "secret/app", Field: "api_key"}}, value + "\n", "vault kv get -field=api_key secret/app"},
		{"bw", credentials.Spec{Bw: "deploy key"}, value, "bw get password deploy key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := fakecmd.New(t)
			fake.Add(t, c.name, c.out, 0)
			s := newStore(t, credentials.Config{Aliases: map[string]credentials.Spec{"a": c.spec}, Path: fake.Path + ":" + os.Getenv("PATH")})
			v, err := s.Resolve(context.Background(), "a")
			if err != nil {
				t.Fatal(err)
			}
			if v.Reveal() != value {
				t.Fatalf("value = %q", v.Reveal())
			}
			if got := fakecmd.Join(fake.Last(t)); got != c.argv {
				t.Fatalf("ran %q, want %q", got, c.argv)
			}
			if len(fake.Last(t)) != strings.Count(c.argv, " ")+1-strings.Count(c.spec.Bw, " ") {
				t.Fatalf("argv %q: a reference was split", fake.Last(t))
			}
			j, _ := json.Marshal(struct{ V any }{v})
			var log strings.Builder
			slog.New(slog.NewTextHandler(&log, nil)).Info("x", "v", v)
			noValue(t, "printing", fmt.Sprint(v), fmt.Sprintf("%v %+v %#v %s", v, v, v, v), string(j), log.String())
		})
	}
}

// TestVaultClientFailure: a failing client's error names the alias and
// the message on its stderr, never what it printed on stdout.
func TestVaultClientFailure(t *testing.T) {
	fake := fakecmd.New(t)
	script := "#!/bin/sh\necho '" + value + "'\necho 'not signed in: " + value + "' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(fake.Path, "op"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, credentials.Config{Aliases: map[string]credentials.Spec{"db": {Op: "op://a/b/c"}}, Path: fake.Path + ":" + os.Getenv("PATH")})
	_, err := s.Resolve(context.Background(), "db")
	if err == nil || !strings.Contains(err.Error(), `alias "db" (op)`) || !strings.Contains(err.Error(), "exit 3") || !strings.Contains(err.Error(), "not signed in") {
		t.Fatalf("err = %v", err)
	}
	noValue(t, "the error", err.Error())
}

// TestVaultClientNoPrompt: a client that would wait for input gets
// /dev/null and no terminal; one that hangs is ended by the timeout.
func TestVaultClientNoPrompt(t *testing.T) {
	fake := fakecmd.New(t)
	// Reads stdin (EOF at once from /dev/null), then checks for a tty.
	prompt := "#!/bin/sh\nread -r line; if [ -n \"$line\" ]; then exit 9; fi\nif (: </dev/tty) 2>/dev/null; then echo has-tty >&2; exit 8; fi\necho " + value + "\n"
	hang := "#!/bin/sh\nexec sleep 30\n"
	os.WriteFile(filepath.Join(fake.Path, "pass"), []byte(prompt), 0o755)
	os.WriteFile(filepath.Join(fake.Path, "bw"), []byte(hang), 0o755)
	s := newStore(t, credentials.Config{Path: fake.Path + ":" + os.Getenv("PATH"), Timeout: 300 * time.Millisecond,
		Aliases: map[string]credentials.Spec{"p": {Pass: "x"}, "h": {Bw: "y"}}})
	if v, err := s.Resolve(context.Background(), "p"); err != nil || v.Reveal() != value {
		t.Fatalf("pass: %v", err)
	}
	_, err := s.Resolve(context.Background(), "h")
	if err == nil || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("hanging bw: err = %v", err)
	}
}

// TestEnvAndFileBackends, for real: the variable and an owner-only file;
// a group- or world-readable file, a missing one and an unset variable
// are refused with errors that say why.
func TestEnvAndFileBackends(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	loose := filepath.Join(dir, "loose")
	os.WriteFile(good, []byte(value+"\n"), 0o600)
	os.WriteFile(loose, []byte(value), 0o644)
	os.Chmod(loose, 0o644)
	t.Setenv("RIGOUT_TEST_CRED", value)
	s := newStore(t, credentials.Config{Aliases: map[string]credentials.Spec{
		"env": {Env: "RIGOUT_TEST_CRED"}, "unset": {Env: "RIGOUT_TEST_UNSET_CRED"},
		"file": {File: good}, "loose": {File: loose}, "missing": {File: filepath.Join(dir, "none")}, "dir": {File: dir},
	}})
	for _, a := range []string{"env", "file"} {
		v, err := s.Resolve(context.Background(), a)
		if err != nil || v.Reveal() != value {
			t.Fatalf("%s: %q, %v", a, v.Reveal(), err)
		}
	}
	for a, want := range map[string]string{"unset": "is not set", "loose": "group or others", "missing": "no such file", "dir": "not a regular file"} {
		_, err := s.Resolve(context.Background(), a)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err = %v, want %q", a, err, want)
		}
		noValue(t, "the error", err.Error())
	}
	if _, err := s.Resolve(context.Background(), "nope"); !errors.Is(err, credentials.ErrUnknownAlias) {
		t.Fatalf("unknown alias: %v", err)
	}
}

// TestCache: without CacheTTL every use fetches afresh; with it, within
// the TTL the client runs once, after it again.
func TestCache(t *testing.T) {
	fake := fakecmd.New(t)
	fake.Add(t, "pass", value, 0)
	now := time.Unix(1000, 0)
	spec := map[string]credentials.Spec{"a": {Pass: "x"}}
	s := newStore(t, credentials.Config{Aliases: spec, Path: fake.Path + ":" + os.Getenv("PATH")})
	s.Resolve(context.Background(), "a")
	s.Resolve(context.Background(), "a")
	if n := len(fake.Calls(t)); n != 2 {
		t.Fatalf("no cache: %d runs, want 2", n)
	}
	fake.Reset(t)
	c := newStore(t, credentials.Config{Aliases: spec, Path: fake.Path + ":" + os.Getenv("PATH"), CacheTTL: time.Minute, Now: func() time.Time { return now }})
	c.Resolve(context.Background(), "a")
	c.Resolve(context.Background(), "a")
	now = now.Add(2 * time.Minute)
	c.Resolve(context.Background(), "a")
	if n := len(fake.Calls(t)); n != 2 {
		t.Fatalf("cache: %d runs, want 2", n)
	}
}

// TestAllow: hosts and tools, with their defaults (local, execute_command).
func TestAllow(t *testing.T) {
	s := newStore(t, credentials.Config{Aliases: map[string]credentials.Spec{
		"d": {Env: "X"},
		"w": {Env: "X", Hosts: []string{"web-*"}, Tools: []string{"execute_command", "process"}},
	}})
	for _, c := range []struct {
		alias, host, tool string
		ok                bool
	}{
		{"d", "local", "execute_command", true},
		{"d", "web-1", "execute_command", false},
		{"d", "local", "credentials", false},
		{"w", "WEB-2", "process", true},
		{"w", "db-1", "process", false},
	} {
		err := s.Allow(c.alias, c.host, c.tool)
		var de *credentials.DeniedError
		if c.ok != (err == nil) || (!c.ok && !errors.As(err, &de)) {
			t.Errorf("Allow(%s, %s, %s) = %v", c.alias, c.host, c.tool, err)
		}
	}
}

// TestBadSpecs are refused with the alias named.
func TestBadSpecs(t *testing.T) {
	for spec, want := range map[*credentials.Spec]string{
		{}:                               "no backend",
		{Env: "X", Pass: "y"}:            "more than one backend",
		{File: "rel/path"}:               "not an absolute path",
		{Op: "vault/item"}:               "op://",
		{Vault: &credentials.VaultRef{}}: "path and field",
		{Pass: "-x"}:                     "starts with '-'",
	} {
		_, err := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{"bad": *spec}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"bad"`) {
			t.Errorf("%+v: err = %v, want %q", *spec, err, want)
		}
	}
}

// TestListHasNoValues.
func TestListHasNoValues(t *testing.T) {
	t.Setenv("RIGOUT_TEST_CRED", value)
	s := newStore(t, credentials.Config{Aliases: map[string]credentials.Spec{"e": {Env: "RIGOUT_TEST_CRED"}, "v": {Vault: &credentials.VaultRef{Path: "p", Field: "f"}}}})
	if _, err := s.Resolve(context.Background(), "e"); err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(s.List())
	noValue(t, "List", string(j))
	if !strings.Contains(string(j), `"alias":"e","kind":"env","ref":"RIGOUT_TEST_CRED","hosts":["local"],"tools":["execute_command"]`) {
		t.Fatalf("List = %s", j)
	}
}
