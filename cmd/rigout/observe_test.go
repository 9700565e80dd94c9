package main

import (
	"io"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const (
	fullToken    = "full-token-0123456789abcdef0123"
	narrowToken  = "narrow-token-0123456789abcdef01"
	metricsToken = "metrics-token-0123456789abcdef0"
)

// startObserved runs `rigout serve` with three tokens: the full default
// one, a narrow one for execute_command alone and one that may only read
// metrics.
func startObserved(t *testing.T, args ...string) (mcpURL, stateDir string) {
	t.Helper()
	stateDir = t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"tokens": [
		{"name": "narrow", "env": "T_NARROW", "scopes": {"tools": ["execute_command"], "hosts": ["*"]}},
		{"name": "prom", "env": "T_PROM", "scopes": {"metrics": true}}
	], "audit": {"store_args": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url, _ := startServeEnv(t, []string{"RIGOUT_STATE_DIR=" + stateDir, "RIGOUT_AUTH_TOKEN=" + fullToken,
		"T_NARROW=" + narrowToken, "T_PROM=" + metricsToken, "RIGOUT_CONFIG=" + cfg}, args...)
	return url, stateDir
}

func getWith(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestE2EMetrics: /metrics needs a token with the metrics scope, and after
// a workload its counts are the ledger's (rigout audit stats).
func TestE2EMetrics(t *testing.T) {
	url, stateDir := startObserved(t)
	base := strings.TrimSuffix(url, "/mcp")
	c := httpClient(t, url, narrowToken, mcp.LATEST_PROTOCOL_VERSION)
	for range 3 {
		call(t, c, "execute_command", map[string]any{"command": "echo hi"})
	}
	call(t, c, "get_server_activity", nil) // out of the narrow token's scope

	for _, tt := range []struct {
		name, token string
		want        int
	}{{"no token", "", 401}, {"narrow token", narrowToken, 403}, {"wrong token", "nope-0123456789abcdef0123456789", 401}} {
		if code, body := getWith(t, base+"/metrics", tt.token); code != tt.want || strings.Contains(body, "rigout_tool_calls_total") {
			t.Errorf("%s: /metrics %d, want %d: %.200s", tt.name, code, tt.want, body)
		}
	}
	code, body := getWith(t, base+"/metrics", metricsToken)
	if code != 200 {
		t.Fatalf("metrics token: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	count := func(name, tool, status string) float64 {
		sum := 0.0
		for _, m := range fams[name].GetMetric() {
			var gotTool, gotStatus string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "tool":
					gotTool = l.GetValue()
				case "status":
					gotStatus = l.GetValue()
				}
			}
			if gotTool == tool && (status == "" || gotStatus == status) {
				sum += m.GetCounter().GetValue()
			}
		}
		return sum
	}
	// The ledger's view of the same calls.
	out, err := osexec.Command(rigoutBinary(t), "audit", "query", "--state-dir", stateDir, "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("audit query: %v\n%s", err, out)
	}
	ledgerOK := strings.Count(string(out), `"tool":"execute_command"`) - strings.Count(string(out), `"phase":"intent"`)
	if got := count("rigout_tool_calls_total", "execute_command", "ok"); got != 3 || float64(ledgerOK) != got {
		t.Errorf("execute_command ok: scrape %v, ledger %d, want 3\n%s", got, ledgerOK, out)
	}
	if got := count("rigout_tool_denials_total", "get_server_activity", ""); got != 1 {
		t.Errorf("get_server_activity denials: %v, want 1", got)
	}
	if got := count("rigout_auth_failures_total", "", ""); got != 1 {
		t.Errorf("auth failures: %v, want 1 (the wrong token; a request with none is a challenge, not a failure)", got)
	}
	for _, name := range []string{"rigout_background_processes", "rigout_terminal_sessions", "rigout_ledger_healthy", "rigout_tool_calls_in_flight"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s in the scrape", name)
		}
	}
	if strings.Contains(body, "echo hi") {
		t.Error("a command's text is in the metrics")
	}
}

// TestE2EMetricsAddrLoopbackOnly: the tokenless metrics listener binds
// loopback only.
func TestE2EMetricsAddrLoopbackOnly(t *testing.T) {
	cmd := osexec.Command(rigoutBinary(t), "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "0.0.0.0:9464")
	cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var ee *osexec.ExitError
	if !asExit(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "loopback addresses only") {
		t.Errorf("--metrics-addr 0.0.0.0:9464: %v\n%s", err, out)
	}
}

// TestE2EMetricsAddr: --metrics-addr serves /metrics without a token on
// its own loopback listener, and nothing else there.
func TestE2EMetricsAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url, _ := startObserved(t, "--metrics-addr", addr)
	c := httpClient(t, url, fullToken, mcp.LATEST_PROTOCOL_VERSION)
	call(t, c, "execute_command", map[string]any{"command": "true"})
	var code int
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(b)
			break
		}
	}
	if code != 200 || !strings.Contains(body, `rigout_tool_calls_total{route="local",status="ok",tool="execute_command"} 1`) {
		t.Errorf("GET /metrics on %s: %d\n%.2000s", addr, code, body)
	}
	if code, _ := getWith(t, "http://"+addr+"/ui/", ""); code != 404 {
		t.Errorf("the metrics listener serves /ui/: %d", code)
	}
}
