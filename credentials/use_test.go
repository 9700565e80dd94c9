package credentials_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/credentials"
)

func useStore(t *testing.T, value string) *credentials.Store {
	t.Helper()
	f := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(f, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{
		"api":   {File: f, Hosts: []string{"local", "web*"}, Tools: []string{"execute_command", "create_terminal_session"}},
		"local": {File: f},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUse: every refusal has its kind and names the variable and the
// alias; a use resolves values that no rendering of it shows.
func TestUse(t *testing.T) {
	const value = "use-test-value-0123"
	s := useStore(t, value)
	ctx := context.Background()
	for _, c := range []struct {
		r    credentials.UseRequest
		kind credentials.UseErrorKind
		want string
	}{
		{credentials.UseRequest{Refs: map[string]string{"1X": "api"}, Tool: "execute_command"}, credentials.UseInvalid, `"1X" is not a valid`},
		{credentials.UseRequest{Refs: map[string]string{"K": "api"}, Env: map[string]string{"K": "x"}, Tool: "execute_command"}, credentials.UseInvalid, "environment may not set it"},
		{credentials.UseRequest{Refs: map[string]string{"K": "nope"}, Hosts: []string{"local"}, Tool: "execute_command"}, credentials.UseInvalid, "unknown credential alias"},
		{credentials.UseRequest{Refs: map[string]string{"K": "api"}, Hosts: []string{"local", "db1"}, Tool: "execute_command"}, credentials.UseDenied, `may not be used on host "db1"`},
		{credentials.UseRequest{Refs: map[string]string{"K": "api"}, Hosts: []string{"web@127.0.0.2:1"}, Tool: "execute_command"}, credentials.UseDenied, `may not be used on host "web@127.0.0.2:1"`},
		{credentials.UseRequest{Refs: map[string]string{"K": "api"}, Hosts: []string{"web1:22"}, Tool: "execute_command"}, credentials.UseDenied, `may not be used on host "web1:22"`},
		{credentials.UseRequest{Refs: map[string]string{"K": "api"}, Hosts: []string{"web1"}, Tool: "file_operations"}, credentials.UseDenied, "may not be used by file_operations"},
		{credentials.UseRequest{Refs: map[string]string{"K": "local"}, Hosts: []string{"local"}, Tool: "create_terminal_session"}, credentials.UseDenied, "may not be used by create_terminal_session"},
	} {
		_, err := s.Use(ctx, c.r)
		var ue *credentials.UseError
		if !errors.As(err, &ue) || ue.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v (%#v), want kind %d with %q", c.r.Refs, err, ue, c.kind, c.want)
		}
	}
	u, err := s.Use(ctx, credentials.UseRequest{Refs: map[string]string{"B_KEY": "api", "A_KEY": "local"}, Hosts: []string{"local"}, Tool: "execute_command"})
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Aliases(); got != "local as A_KEY, api as B_KEY" {
		t.Fatalf("Aliases = %q", got)
	}
	if env := u.Env(); env["A_KEY"] != value || env["B_KEY"] != value || len(env) != 2 {
		t.Fatal("Env does not hold the values")
	}
	if pe := u.PolicyEnv(map[string]string{"X": "1"}); pe["A_KEY"] != credentials.Placeholder || pe["X"] != "1" {
		t.Fatalf("PolicyEnv = %v", pe)
	}
	m, err := u.Mask()
	if err != nil || m.Redact("a "+value+" b") != "a *** b" {
		t.Fatalf("Mask: %v", err)
	}
	j, _ := u.MarshalJSON()
	for _, shown := range []string{u.String(), fmt.Sprintf("%v %+v %#v %s", u, u, u, u), string(j)} {
		if strings.Contains(shown, value) {
			t.Fatalf("a rendering shows the value: %s", shown)
		}
	}
	short := useStore(t, "short")
	if _, err := short.Use(ctx, credentials.UseRequest{Refs: map[string]string{"K": "api"}, Hosts: []string{"local"}, Tool: "execute_command"}); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Fatalf("a short value: %v", err)
	}
	if u, err := s.Use(ctx, credentials.UseRequest{}); u != nil || err != nil {
		t.Fatalf("no refs: %v, %v", u, err)
	}
}

// A tool resolves its call's `secrets` argument with Use, and hands the
// child Env.
func ExampleStore_Use() {
	dir, _ := os.MkdirTemp("", "cred")
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "token")
	os.WriteFile(f, []byte("ghp-example-value\n"), 0o600)
	store, _ := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{"github": {File: f, Hosts: []string{"build-*"}}}})

	u, err := store.Use(context.Background(), credentials.UseRequest{
		Refs: map[string]string{"GITHUB_TOKEN": "github"}, Hosts: []string{"build-1"}, Tool: "execute_command"})
	fmt.Println(err, u, len(u.Env()["GITHUB_TOKEN"]))
	_, err = store.Use(context.Background(), credentials.UseRequest{
		Refs: map[string]string{"GITHUB_TOKEN": "github"}, Hosts: []string{"db-1"}, Tool: "execute_command"})
	fmt.Println(err)
	// Output:
	// <nil> credentials.Use(github as GITHUB_TOKEN) 17
	// secrets GITHUB_TOKEN: credential alias "github" may not be used on host "db-1" (see its "hosts")
}

// TestAllowAddresses: host globs match host names only; an address is
// allowed by an entry naming it exactly, or "*".
func TestAllowAddresses(t *testing.T) {
	s, err := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{
		"glob":  {Env: "X", Hosts: []string{"web*"}},
		"exact": {Env: "X", Hosts: []string{"Web@127.0.0.2:1"}},
		"any":   {Env: "X", Hosts: []string{"*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		alias, host string
		want        bool
	}{
		{"glob", "web1", true},
		{"glob", "web@127.0.0.2:1", false},
		{"glob", "web1:22", false},
		{"exact", "web@127.0.0.2:1", true},
		{"exact", "web@127.0.0.2:2", false},
		{"any", "web@127.0.0.2:1", true},
	}
	for _, tt := range tests {
		if err := s.Allow(tt.alias, tt.host, "execute_command"); (err == nil) != tt.want {
			t.Errorf("Allow(%s, %s) = %v, want allowed %v", tt.alias, tt.host, err, tt.want)
		}
	}
}
