package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/validate"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rigout.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfig(t *testing.T) {
	digest := auth.DigestOf("s3cret")
	p := writeConfig(t, `{
		"tokens": [
			{"name": "ci", "sha256": "`+digest.String()+`", "scopes": {"tools": ["execute_command"], "hosts": ["local"]}},
			{"name": "dev", "env": "TEST_RIGOUT_DEV", "scopes": {"tools": ["*"], "bypass": true}}
		],
		"oauth": {"consent": true, "access_ttl": "30m", "clients": [{"id": "c1", "redirect_uris": ["http://localhost/cb"], "secret_env": "TEST_RIGOUT_CLIENT"}]},
		"policy": {"mode": "allow", "allow": ["git"], "rules": {"power-state": "off", "sudo": "confirm"}},
		"audit": {"store_args": true}
	}`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TEST_RIGOUT_DEV": "dev-token", "TEST_RIGOUT_CLIENT": "client-secret"}
	toks, err := c.AuthTokens(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 2 || toks[0].Digest != digest || toks[1].Secret.Reveal() != "dev-token" || !toks[1].Scopes.Bypass || toks[0].Scopes.AllowTool("get_server_activity") {
		t.Errorf("tokens = %+v", toks)
	}
	o, err := c.OAuthConfig(func(k string) string { return env[k] })
	if err != nil || !o.Consent || o.AccessTTL.Minutes() != 30 || len(o.Clients) != 1 || o.Clients[0].Secret.Reveal() != "client-secret" {
		t.Errorf("oauth = %+v, %v", o, err)
	}
	pol, err := c.CommandPolicy()
	if err != nil || pol.Mode != validate.ModeAllow || pol.Rules["power-state"] != validate.Off || pol.Rules["sudo"] != validate.Confirm {
		t.Errorf("policy = %+v, %v", pol, err)
	}
	if !c.Audit.StoreArgs {
		t.Error("audit.store_args lost")
	}
}

func TestLoadConfigRefusesMistakes(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"unknown field", `{"tokenz": []}`, `unknown field "tokenz"`},
		{"not json", `{`, "unexpected EOF"},
		{"token without value", `{"tokens": [{"name": "x"}]}`, "needs sha256"},
		{"token with both", `{"tokens": [{"name": "x", "sha256": "ab", "env": "Y"}]}`, "not both"},
		{"empty env", `{"tokens": [{"name": "x", "env": "TEST_RIGOUT_UNSET_VAR"}]}`, "is empty"},
		{"bad digest", `{"tokens": [{"name": "x", "sha256": "zz"}]}`, "token 0"},
		{"unknown rule", `{"policy": {"rules": {"nope": "off"}}}`, "unknown rule"},
		{"bad mode", `{"policy": {"mode": "maybe"}}`, "unknown mode"},
		{"bad duration", `{"oauth": {"access_ttl": 5}}`, "duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, tt.body))
			if err == nil {
				_, err = c.AuthTokens(func(string) string { return "" })
			}
			if err == nil {
				_, err = c.CommandPolicy()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if _, err := Load("/no/such/file.json"); err == nil {
		t.Error("missing file accepted")
	}
}

func TestWriteFileReadsBack(t *testing.T) {
	in := &File{
		Tokens:    []Token{{Name: "ci", Env: "CI_TOKEN", Scopes: auth.Scopes{Tools: []string{"execute_command"}}}},
		OAuth:     &OAuth{AccessTTL: Duration(90 * time.Second)},
		Hosts:     []Host{{Name: "web1", Address: "10.0.0.5", Port: 2222, Helper: "off"}},
		RateLimit: RateLimit{PerHost: "5/m"},
		Families:  Families{Docker: true, PipOptions: []string{"--no-index"}},
		Downstream: map[string]Downstream{"gh": {URL: "https://example.test/mcp", TokenEnv: "GH_TOKEN",
			Timeout: Duration(time.Minute)}},
	}
	p := filepath.Join(t.TempDir(), "rigout.json")
	if err := in.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want owner-only", st.Mode().Perm())
	}
	out, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("read back\n%+v\nwant\n%+v", out, in)
	}
}

func TestUnmarshal(t *testing.T) {
	type doc struct {
		Name string `json:"name"`
		Port int    `json:"port"`
	}
	tests := []struct {
		name, body string
		v          any
		want       string // "" for no error
		line, col  int    // of a PositionError
	}{
		{"ok", `{"name": "a", "port": 2}`, &doc{}, "", 0, 0},
		{"unknown key", "{\n \"nam\": \"a\"}", &doc{}, `unknown field "nam" (did you mean "name"?)`, 2, 2},
		{"case matters", `{"Name": "a"}`, &doc{}, `did you mean "name"?`, 1, 2},
		{"wrong type", `{"port": "two"}`, &doc{}, "port is string, want int", 1, 15},
		{"trailing data", `{} {}`, &doc{}, "unexpected data after", 1, 5},
		{"not a pointer", `{}`, doc{}, "want a pointer", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Unmarshal("f.json", []byte(tt.body), tt.v)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			var pe *PositionError
			if tt.line > 0 && (!errors.As(err, &pe) || pe.Line != tt.line || pe.Col != tt.col) {
				t.Errorf("err = %#v, want a PositionError at %d:%d", err, tt.line, tt.col)
			}
		})
	}
}

func TestSecretEnvNamesEveryVariable(t *testing.T) {
	f, err := Parse("f.json", []byte(`{
		"tokens": [{"name": "a", "env": "T1"}, {"name": "b", "env": "T1"}],
		"oauth": {"clients": [{"id": "c", "secret_env": "C1"}]},
		"audit": {"password_env": "PG", "key_env": "KEY"},
		"credentials": {"gh": {"env": "CRED", "tools": ["execute_command"]}},
		"downstream": {"d": {"url": "https://x.test/mcp", "token_env": "DT"}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	got := f.SecretEnv()
	slices.Sort(got)
	if want := []string{"C1", "CRED", "DT", "KEY", "PG", "T1"}; !slices.Equal(got, want) {
		t.Errorf("SecretEnv = %v, want %v", got, want)
	}
}
