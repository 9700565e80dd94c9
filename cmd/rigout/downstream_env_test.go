package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestDownstreamEnvCredentials: a stdio downstream (a second rigout) gets
// a variable from a credential alias that allows "downstream"
// (env_credentials), so the value is in no configuration file; what the
// downstream prints of it reaches the caller masked. An alias that does
// not allow "downstream" keeps the downstream down, with a reason naming
// the alias. With credentials configured, file_operations offers secrets.
func TestDownstreamEnvCredentials(t *testing.T) {
	const value = "envcred-4f1d2c3b-harbor-77"
	sum := sha256.Sum256([]byte(value))
	keyFile := filepath.Join(t.TempDir(), "dkey")
	if err := os.WriteFile(keyFile, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		tools []string
		ok    bool
	}{
		{"allowed", []string{"downstream"}, true},
		{"not allowed", []string{"execute_command"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := json.Marshal(map[string]any{
				"credentials": map[string]any{"dkey": map[string]any{"file": keyFile, "tools": tt.tools}},
				"downstream": map[string]any{"inner": map[string]any{
					"command":          []string{rigoutBinary(t), "stdio"},
					"env":              map[string]string{"RIGOUT_STATE_DIR": t.TempDir()},
					"env_credentials":  map[string]string{"INNER_KEY": "dkey"},
					"max_result_bytes": 4096,
				}},
			})
			if strings.Contains(string(cfg), value) {
				t.Fatal("the configuration holds the value")
			}
			s := startStdio(t, "--config", writeConfig(t, string(cfg)))
			call := func(name string, args map[string]any) string {
				t.Helper()
				var req mcp.CallToolRequest
				req.Params.Name, req.Params.Arguments = name, args
				res, err := s.client.CallTool(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				return resultText(res)
			}
			if !tt.ok {
				st := call("downstream_status", nil)
				if !strings.Contains(st, "dkey") || !strings.Contains(st, "INNER_KEY") || strings.Contains(st, value) {
					t.Fatalf("downstream_status = %s", st)
				}
				return
			}
			var names []string
			for range 200 { // the downstream connects in the background
				if names, _ = toolNames(t, s); slices.Contains(names, "inner__execute_command") {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if !slices.Contains(names, "inner__execute_command") {
				t.Fatalf("no inner__execute_command in %v", names)
			}
			out := call("inner__execute_command", map[string]any{"command": `printf %s "$INNER_KEY" | sha256sum; echo "key is $INNER_KEY"; seq 1 5000`})
			if !strings.Contains(out, hex.EncodeToString(sum[:])) {
				t.Fatalf("the downstream did not get the value:\n%s", out)
			}
			if strings.Contains(out, value) || !strings.Contains(out, "key is ***") {
				t.Fatalf("the value is not masked:\n%s", out)
			}
			if !strings.Contains(out, "[result cut at 4096 bytes") {
				t.Fatalf("max_result_bytes did not cut the result (%d bytes)", len(out))
			}
			var fo string
			l, err := s.client.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range l.Tools {
				if tl.Name == "file_operations" {
					b, _ := json.Marshal(tl.InputSchema)
					fo = string(b) + string(tl.RawInputSchema)
				}
			}
			if !strings.Contains(fo, `"secrets"`) {
				t.Errorf("file_operations does not offer secrets with credentials configured: %s", fo)
			}
		})
	}
}

// TestConfigCheckWarnsOfSecretEnv: a downstream env value that looks like
// a secret is warned about, and the effective configuration printed does
// not show it.
func TestConfigCheckWarnsOfSecretEnv(t *testing.T) {
	const v = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	cfg, _ := json.Marshal(map[string]any{"downstream": map[string]any{"gh": map[string]any{
		"command": []string{"/bin/true"},
		"env":     map[string]string{"GITHUB_TOKEN": v, "LOG_LEVEL": "debug"},
	}}})
	var stdout, stderr bytes.Buffer
	if code := runConfig([]string{"check", writeConfig(t, string(cfg))}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "warning: downstream gh: env GITHUB_TOKEN looks like a secret") || strings.Contains(stderr.String(), "LOG_LEVEL") {
		t.Errorf("stderr = %s", stderr.String())
	}
	if strings.Contains(stdout.String(), v) || !strings.Contains(stdout.String(), "debug") {
		t.Errorf("effective configuration = %s", stdout.String())
	}
}
