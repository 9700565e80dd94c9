package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	c, err := loadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TEST_RIGOUT_DEV": "dev-token", "TEST_RIGOUT_CLIENT": "client-secret"}
	toks, err := c.authTokens(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 2 || toks[0].Digest != digest || toks[1].Secret.Reveal() != "dev-token" || !toks[1].Scopes.Bypass || toks[0].Scopes.AllowTool("get_server_activity") {
		t.Errorf("tokens = %+v", toks)
	}
	o, err := c.oauthConfig(func(k string) string { return env[k] })
	if err != nil || !o.Consent || o.AccessTTL.Minutes() != 30 || len(o.Clients) != 1 || o.Clients[0].Secret.Reveal() != "client-secret" {
		t.Errorf("oauth = %+v, %v", o, err)
	}
	pol, err := c.policy()
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
			c, err := loadConfig(writeConfig(t, tt.body))
			if err == nil {
				_, err = c.authTokens(func(string) string { return "" })
			}
			if err == nil {
				_, err = c.policy()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if _, err := loadConfig("/no/such/file.json"); err == nil {
		t.Error("missing file accepted")
	}
}
