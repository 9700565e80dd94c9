package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ECredentials runs rigout serve with a credentials section: an env
// alias (its variable is moved off the environment and reaches no
// command) and a file alias. execute_command uses them by reference: the
// command gets the value (compared by digest) and prints only ***; the
// credentials tool lists them without values and refuses get to a
// full-scope token, which has no reveal_secrets; the ledger file holds no
// value.
func TestE2ECredentials(t *testing.T) {
	const full = "full-token-for-the-credentials-test-012345"
	const envValue = "env-credential-value-5f4e3d2c1b"
	const fileValue = "file-credential-value-a9b8c7d6e5"
	dir := t.TempDir()
	credFile := filepath.Join(dir, "cred")
	if err := os.WriteFile(credFile, []byte(fileValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	cfgPath := writeConfig(t, fmt.Sprintf(`{"credentials": {
  "ci": {"env": "TEAM_CI_CREDENTIAL"},
  "deploy": {"file": %q, "tools": ["execute_command", "credentials", "create_terminal_session"]}}}`, credFile))
	cmd, url, _ := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + full, "TEAM_CI_CREDENTIAL=" + envValue, "RIGOUT_STATE_DIR=" + state},
		"--config", cfgPath, "--no-ssh")
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), envValue) {
		t.Fatal("the env credential is still in the gateway's environment")
	}
	c := httpClient(t, url, full, "2025-11-25")

	digest := func(v string) string { h := sha256.Sum256([]byte(v)); return hex.EncodeToString(h[:]) }
	res := call(t, c, "execute_command", map[string]any{
		"command": `env | grep -v '^[AB]=' | base64 -w0; echo; [ "$(printf %s "$A" | sha256sum | cut -c1-64)" = ` + digest(envValue) + ` ] && echo A-OK; ` +
			`[ "$(printf %s "$B" | sha256sum | cut -c1-64)" = ` + digest(fileValue) + ` ] && echo B-OK; echo "$A $B"`,
		"secrets": map[string]any{"A": "ci", "B": "deploy"}})
	text := resultText(res)
	if res.IsError || !strings.Contains(text, "A-OK") || !strings.Contains(text, "B-OK") || !strings.Contains(text, "*** ***") {
		t.Fatalf("secrets: %s", text)
	}
	i := strings.Index(text, "stdout:\n")
	env, _ := base64.StdEncoding.DecodeString(strings.SplitN(text[i+len("stdout:\n"):], "\n", 2)[0])
	if strings.Contains(string(env), "TEAM_CI_CREDENTIAL") || !strings.Contains(string(env), "PATH=") {
		t.Fatalf("the command's environment: %q", env)
	}

	// A terminal session uses one too: its shell has the value, its
	// output shows ***; an alias whose tools leave the tool out is refused.
	res = call(t, c, "create_terminal_session", map[string]any{"secrets": map[string]any{"B": "deploy"}})
	if res.IsError {
		t.Fatalf("create_terminal_session with secrets: %s", resultText(res))
	}
	sid := res.StructuredContent.(map[string]any)["session_id"].(string)
	res = call(t, c, "execute_in_terminal", map[string]any{"session_id": sid,
		"command": `[ "$(printf %s "$B" | sha256sum | cut -c1-64)" = ` + digest(fileValue) + ` ] && echo B-OK; echo "<$B>"; env | grep ^B=`})
	if text := resultText(res); res.IsError || !strings.Contains(text, "B-OK") || !strings.Contains(text, "<***>") || !strings.Contains(text, "B=***") || strings.Contains(text, fileValue) {
		t.Fatalf("terminal with secrets: %s", text)
	}
	res = call(t, c, "create_terminal_session", map[string]any{"secrets": map[string]any{"A": "ci"}})
	if text := resultText(res); !res.IsError || !strings.Contains(text, `credential alias "ci" may not be used by create_terminal_session`) {
		t.Fatalf("an alias not allowed in terminals: %s", text)
	}

	res = call(t, c, "credentials", map[string]any{"action": "list"})
	if text := resultText(res); res.IsError || !strings.Contains(text, `"deploy"`) || strings.Contains(text, fileValue) || strings.Contains(text, envValue) {
		t.Fatalf("list: %s", text)
	}
	res = call(t, c, "credentials", map[string]any{"action": "get", "alias": "deploy", "reason": "test"})
	if text := resultText(res); !res.IsError || !strings.Contains(text, "reveal_secrets") || strings.Contains(text, fileValue) {
		t.Fatalf("get with a full-scope token: %s", text)
	}

	time.Sleep(200 * time.Millisecond) // the done rows' group commit
	files, _ := filepath.Glob(filepath.Join(state, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, v := range []string{envValue, fileValue, base64.StdEncoding.EncodeToString([]byte(fileValue))} {
			if strings.Contains(string(b), v) {
				t.Fatalf("%s holds a credential", f)
			}
		}
	}
	if len(files) == 0 {
		t.Fatal("no state files to scan")
	}
}
