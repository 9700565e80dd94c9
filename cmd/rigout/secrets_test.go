package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec"
)

// TestE2ESecretsOutOfReach gives rigout serve its token and a second
// token's value through the environment, then looks for both where a
// command or a process of the same machine could find them: the serving
// process's /proc/PID/environ, and the environment a command gets (read as
// base64, so the redactor cannot hide a leak).
func TestE2ESecretsOutOfReach(t *testing.T) {
	const full = "full-token-for-the-secrets-test-0123456789"
	const narrow = "narrow-token-for-the-secrets-test-9876543210"
	cfgPath := writeConfig(t, `{"tokens": [{"name": "narrow", "env": "TEAM_NARROW_TOKEN", "scopes": {"tools": ["execute_command"], "hosts": ["local"]}}]}`)
	cmd, url, _ := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + full, "TEAM_NARROW_TOKEN=" + narrow, "SSH_AUTH_SOCK=/tmp/agent.sock"},
		"--config", cfgPath, "--no-ssh")

	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{full, narrow} {
		if strings.Contains(string(environ), secret) {
			t.Errorf("/proc/%d/environ holds a token", cmd.Process.Pid)
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// The same pid still serves: the secrets were moved by re-executing in place.
	if !strings.Contains(string(status), "rigout") {
		t.Errorf("pid %d is not rigout any more:\n%s", cmd.Process.Pid, status)
	}

	c := httpClient(t, url, narrow, "2025-11-25")
	res := call(t, c, "execute_command", map[string]any{"command": "env | base64 -w0"})
	if res.IsError {
		t.Fatalf("env: %s", resultText(res))
	}
	text := resultText(res)
	i := strings.Index(text, "stdout:\n")
	if i < 0 {
		t.Fatalf("no stdout: %s", text)
	}
	env, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text[i+len("stdout:\n"):]))
	if err != nil {
		t.Fatalf("decoding the command's environment: %v\n%s", err, text)
	}
	for _, leak := range []string{full, narrow, "RIGOUT_", "SSH_AUTH_SOCK"} {
		if strings.Contains(string(env), leak) {
			t.Errorf("a command's environment holds %q", leak)
		}
	}
	if !strings.Contains(string(env), "PATH=") {
		t.Errorf("implausible environment: %q", env)
	}
}

// TestE2EKnownSecretsAreMasked prints the full token, which a command
// found somewhere, plain and encoded: every form is masked.
func TestE2EKnownSecretsAreMasked(t *testing.T) {
	const full = "full-token-to-be-masked-0123456789abcdef"
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "found")
	if err := os.WriteFile(tokenFile, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	_, url, _ := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + full}, "--no-ssh")
	c := httpClient(t, url, full, "2025-11-25")
	res := call(t, c, "execute_command", map[string]any{"command": "cat " + tokenFile + "; echo; base64 -w0 " + tokenFile + "; echo; xxd -p " + tokenFile + " | tr -d '\\n'"})
	text := resultText(res)
	enc := base64.StdEncoding.EncodeToString([]byte(full))
	if strings.Contains(text, full) || strings.Contains(text, enc) || strings.Contains(text, fmt.Sprintf("%x", full)) {
		t.Errorf("the token is shown:\n%s", text)
	}
	if strings.Count(text, "***") < 2 {
		t.Errorf("nothing masked:\n%s", text)
	}
}

// TestE2EStateDirectoryHidden: with the state directory where the kernel
// sandbox can hide it (outside home and the work areas, as root's default
// /var/lib/rigout is), a narrow token's command can read neither the
// connection file nor the ledger's key, so it cannot obtain the full token.
func TestE2EStateDirectoryHidden(t *testing.T) {
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	st := sb.Status()
	sb.Close()
	if !st.Enforced {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("the kernel sandbox is required here: %s", st)
		}
		t.Skipf("SKIP: no Landlock on this kernel (%s)", st)
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to make a state directory under /var/lib")
	}
	state, err := os.MkdirTemp("/var/lib", "rigout-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	const narrow = "narrow-token-for-the-state-test-0123456789"
	dir := t.TempDir()
	cfgPath := writeConfig(t, `{"tokens": [{"name": "narrow", "env": "TEAM_NARROW_TOKEN", "scopes": {"tools": ["execute_command"], "hosts": ["local"]}}]}`)
	const full = "full-token-for-the-state-test-9876543210"
	_, url, inFile := startServeEnv(t, []string{"RIGOUT_STATE_DIR=" + state, "RIGOUT_AUTH_TOKEN=" + full, "TEAM_NARROW_TOKEN=" + narrow}, "--config", cfgPath, "--no-ssh")
	if inFile != full {
		t.Fatalf("the connection file holds %q, want the full token", inFile)
	}
	c := httpClient(t, url, narrow, "2025-11-25")
	res := call(t, c, "execute_command", map[string]any{"command": "ls " + state + "; for f in " + state + "/*; do base64 -w0 \"$f\"; echo; done; cp " + state + "/connection.json " + dir + "/stolen"})
	text := resultText(res)
	if !strings.Contains(text, "connection.json") {
		t.Errorf("the state directory's names should stay listable:\n%s", text)
	}
	if !strings.Contains(text, "Permission denied") {
		t.Errorf("reading the state directory was not refused:\n%s", text)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "stolen")); err == nil && strings.Contains(string(b), full) {
		t.Fatal("a narrow token's command copied the connection file out")
	}
	for _, line := range strings.Split(text, "\n") {
		if d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(line)); err == nil && strings.Contains(string(d), full) {
			t.Fatal("a narrow token's command read the full token")
		}
	}
}
