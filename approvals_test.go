package rigout_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
)

// TestApprovalsHandler drives the approvals API behind a real auth.Front
// on loopback: a call of the "agent" token waits in the queue; only the
// operator's token, with the approve scope, decides it, with the digest it
// was shown, once.
func TestApprovalsHandler(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "ran")
	held := rigout.Tool{
		Name: "held", Description: "Waits for an operator, then writes a sentinel.", Risk: rigout.Exec,
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			if _, err := call.AwaitApproval(ctx, rigout.ApprovalRequest{Host: "local", Command: "touch " + sentinel, Rule: "test", Reason: "held for the test"}); err != nil {
				return nil, err
			}
			return rigout.TextResult("ran"), os.WriteFile(sentinel, []byte("x"), 0o600)
		},
	}
	agent := auth.Principal{Name: "agent", Transport: "in-process", Scopes: auth.Scopes{Tools: []string{"*"}, Approve: true}}
	gw := newGateway(t, rigout.Config{Tools: []rigout.Tool{held}, Principal: &agent, Approvals: &rigout.ApprovalConfig{Wait: 10 * time.Second}})

	const opTok, agentTok, viewTok = "operator-token-0123456789abcdef", "agent-token-0123456789abcdef01", "viewer-token-0123456789abcdef0"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	front, err := auth.New(auth.Config{Listener: ln.Addr().String(), ResourceURL: base + "/mcp", Tokens: []auth.Token{
		{Name: "operator", Secret: auth.NewSecret(opTok), Scopes: auth.Scopes{Approve: true}},
		{Name: "agent", Secret: auth.NewSecret(agentTok), Scopes: agent.Scopes},
		{Name: "viewer", Secret: auth.NewSecret(viewTok), Scopes: auth.Scopes{Tools: []string{"*"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(front.Guard(front.RequireBearer(gw.ApprovalsHandler())))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	do := func(method, token, body string) (int, string) {
		req, _ := http.NewRequest(method, base+"/approvals", strings.NewReader(body))
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

	c := connect(t, gw)
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- callTool(t, c, "held", nil) }()
	var pa rigout.PendingApproval
	for range 500 {
		code, body := do(http.MethodGet, opTok, "")
		var list struct{ Approvals []rigout.PendingApproval }
		if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil {
			t.Fatalf("GET: %d %s", code, body)
		}
		if len(list.Approvals) == 1 {
			pa = list.Approvals[0]
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pa.ID == "" {
		t.Fatal("no pending approval")
	}
	decide := func(id, digest, decision string) string {
		b, _ := json.Marshal(map[string]string{"id": id, "digest": digest, "decision": decision})
		return string(b)
	}
	tests := []struct {
		name   string
		method string
		token  string
		body   string
		want   int
	}{
		{"no token", http.MethodGet, "", "", http.StatusUnauthorized},
		{"list without approve scope", http.MethodGet, viewTok, "", http.StatusForbidden},
		{"decide without approve scope", http.MethodPost, viewTok, decide(pa.ID, pa.Digest, "approve"), http.StatusForbidden},
		{"own call", http.MethodPost, agentTok, decide(pa.ID, pa.Digest, "approve"), http.StatusForbidden},
		{"other digest", http.MethodPost, opTok, decide(pa.ID, strings.Repeat("ab", 16), "approve"), http.StatusConflict},
		{"unknown id", http.MethodPost, opTok, decide("0000000000000000", pa.Digest, "approve"), http.StatusNotFound},
		{"bad decision", http.MethodPost, opTok, decide(pa.ID, pa.Digest, "maybe"), http.StatusBadRequest},
		{"unknown field", http.MethodPost, opTok, `{"id":"` + pa.ID + `","digest":"` + pa.Digest + `","decision":"approve","also":1}`, http.StatusBadRequest},
		{"method", http.MethodDelete, opTok, "", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, body := do(tt.method, tt.token, tt.body); code != tt.want {
				t.Errorf("%d %s, want %d", code, body, tt.want)
			}
			if _, err := os.Stat(sentinel); err == nil {
				t.Fatal("the held call ran before an operator approved it")
			}
		})
	}
	if code, body := do(http.MethodPost, opTok, decide(pa.ID, pa.Digest, "approve")); code != http.StatusOK {
		t.Fatalf("approve: %d %s", code, body)
	}
	if res := <-done; res.IsError {
		t.Fatalf("approved call: %v", res.Content)
	}
	if _, err := os.Stat(sentinel); err != nil {
		t.Error("the approved call did not run")
	}
	if code, _ := do(http.MethodPost, opTok, decide(pa.ID, pa.Digest, "approve")); code != http.StatusNotFound {
		t.Errorf("second approval: %d, want 404", code)
	}
}
