package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
)

// TestE2EOperatorApprovesThroughCLI: a command a confirm rule holds back
// waits in the running gateway until the operator runs `rigout approve`
// with a token of their own that holds the approve scope; the approved
// command runs exactly once. `rigout deny` runs nothing, and the agent's
// token, which lacks the approve scope, cannot decide.
func TestE2EOperatorApprovesThroughCLI(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	agentTok, opTok := strings.Repeat("a1", 20), strings.Repeat("0b", 20)
	cfg := map[string]any{
		"tokens": []any{
			map[string]any{"name": "agent", "env": "T_AGENT", "scopes": map[string]any{"tools": []string{"*"}, "hosts": []string{"*"}}},
			map[string]any{"name": "operator", "env": "T_OPERATOR", "scopes": map[string]any{"approve": true}},
		},
		"policy": map[string]any{"rules": map[string]string{"sudo": "confirm"}},
	}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "rigout.json")
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, url, _ := startServeEnv(t, []string{"RIGOUT_STATE_DIR=" + stateDir, "RIGOUT_CONFIG=" + cfgPath,
		"T_AGENT=" + agentTok, "T_OPERATOR=" + opTok}, "--approval-wait", "30s")

	c := httpClient(t, url, agentTok, mcp.LATEST_PROTOCOL_VERSION)

	cli := func(token string, args ...string) (string, error) {
		cmd := osexec.Command(rigoutBinary(t), append(args, "--state-dir", stateDir)...)
		cmd.Env = append(os.Environ(), "RIGOUT_APPROVER_TOKEN="+token)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	pending := func() rigout.PendingApproval {
		t.Helper()
		for range 200 {
			out, err := cli(opTok, "approvals", "--json")
			if err != nil {
				t.Fatalf("rigout approvals: %v\n%s", err, out)
			}
			var list []rigout.PendingApproval
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("rigout approvals --json: %v\n%s", err, out)
			}
			if len(list) == 1 {
				return list[0]
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("no pending approval appeared")
		return rigout.PendingApproval{}
	}
	run := func(sentinel string) chan *mcp.CallToolResult {
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			done <- call(t, c, "execute_command", map[string]any{"command": "sudo -V >/dev/null 2>&1; echo ran >> " + sentinel})
		}()
		return done
	}

	approved := filepath.Join(dir, "approved")
	done := run(approved)
	pa := pending()
	if pa.Principal != "agent" || !strings.Contains(pa.Command, approved) {
		t.Fatalf("pending %+v", pa)
	}
	// The agent's own token lacks the approve scope (and it is its call).
	if out, err := cli(agentTok, "approve", pa.ID); err == nil || !strings.Contains(out, "approve scope") {
		t.Errorf("the agent's token approved: %v\n%s", err, out)
	}
	if out, err := cli(opTok, "approve", pa.ID); err != nil || !strings.Contains(out, "approved "+pa.ID) {
		t.Fatalf("rigout approve: %v\n%s", err, out)
	}
	if res := <-done; res.IsError {
		t.Fatalf("approved call: %s", resultText(res))
	}
	if got, err := os.ReadFile(approved); err != nil || string(got) != "ran\n" {
		t.Errorf("the approved command ran %q (%v), want exactly once", got, err)
	}
	// Single use: the same ID cannot be approved again.
	if out, err := cli(opTok, "approve", pa.ID); err == nil {
		t.Errorf("a decided approval was approved again:\n%s", out)
	}

	denied := filepath.Join(dir, "denied")
	done = run(denied)
	pa = pending()
	if out, err := cli(opTok, "deny", pa.ID); err != nil || !strings.Contains(out, "denied "+pa.ID) {
		t.Fatalf("rigout deny: %v\n%s", err, out)
	}
	if res := <-done; !res.IsError || !strings.Contains(resultText(res), "denied") {
		t.Errorf("denied call: %s", resultText(res))
	}
	if _, err := os.Stat(denied); err == nil {
		t.Error("a denied command ran")
	}

	// Through the activity page, signed in with the operator's token.
	base := strings.TrimSuffix(url, "/mcp")
	page := func(method, path, cookie, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Origin", base)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	signIn := func(token string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/ui/login", nil)
		req.Header.Set("Origin", base)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, ck := range resp.Cookies() {
			return ck.Name + "=" + ck.Value
		}
		t.Fatalf("sign-in: %s", resp.Status)
		return ""
	}
	viaPage := filepath.Join(dir, "page")
	done = run(viaPage)
	pa = pending()
	agentCookie := signIn(agentTok)
	if code, body := page(http.MethodPost, "/ui/api/approvals", agentCookie,
		`{"id":"`+pa.ID+`","digest":"`+pa.Digest+`","decision":"approve"}`); code != http.StatusForbidden {
		t.Errorf("the agent approved through the page: %d %s", code, body)
	}
	opCookie := signIn(opTok)
	if code, body := page(http.MethodGet, "/ui/api/approvals", opCookie, ""); code != http.StatusOK || !strings.Contains(body, pa.Digest) {
		t.Fatalf("page lists: %d %s", code, body)
	}
	if code, body := page(http.MethodPost, "/ui/api/approvals", opCookie,
		`{"id":"`+pa.ID+`","digest":"`+pa.Digest+`","decision":"approve"}`); code != http.StatusOK {
		t.Fatalf("page approves: %d %s", code, body)
	}
	if res := <-done; res.IsError {
		t.Fatalf("call approved through the page: %s", resultText(res))
	}
	if got, err := os.ReadFile(viaPage); err != nil || string(got) != "ran\n" {
		t.Errorf("the command approved through the page ran %q (%v), want exactly once", got, err)
	}
}

// TestApprovalNotifyCommand: --approval-notify runs its command with the
// pending approval as JSON on stdin.
func TestApprovalNotifyCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "notified.json")
	notify := notifyCommand("cat > "+out, slog.New(slog.DiscardHandler))
	want := rigout.PendingApproval{ID: "0123456789abcdef", Principal: "agent", Command: "sudo reboot", Digest: strings.Repeat("ab", 16)}
	notify(context.Background(), want)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got rigout.PendingApproval
	if err := json.Unmarshal(b, &got); err != nil || got.ID != want.ID || got.Command != want.Command || got.Digest != want.Digest {
		t.Errorf("notified %s (%v), want %+v", b, err, want)
	}
}

// TestCanApprove: the queue is on only when someone holds the approve
// scope.
func TestCanApprove(t *testing.T) {
	approver := auth.Scopes{Approve: true}
	tests := []struct {
		name   string
		tokens []auth.Token
		oauth  *auth.OAuthConfig
		want   bool
	}{
		{"none", nil, nil, false},
		{"full-scope default token", []auth.Token{{Name: "default", Scopes: auth.FullScopes()}}, nil, false},
		{"operator token", []auth.Token{{Name: "default", Scopes: auth.FullScopes()}, {Name: "op", Scopes: approver}}, nil, true},
		{"oauth client", nil, &auth.OAuthConfig{Clients: []auth.Client{{ID: "c", Scopes: approver}}}, true},
		{"registration scopes", nil, &auth.OAuthConfig{RegistrationScopes: approver}, true},
		{"oauth without", nil, &auth.OAuthConfig{Clients: []auth.Client{{ID: "c", Scopes: auth.FullScopes()}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := canApprove(tt.tokens, tt.oauth); got != tt.want {
				t.Errorf("canApprove = %v, want %v", got, tt.want)
			}
		})
	}
}
