// Package gosdk tests the real rigout binary with the official Go MCP SDK
// client (github.com/modelcontextprotocol/go-sdk) over streamable HTTP. It
// is its own module so that rigout's go.mod does not depend on the SDK.
//
//	RIGOUT_BIN=/path/to/rigout go test -count=1 .
//
// Without RIGOUT_BIN the test builds ../../../cmd/rigout itself.
package gosdk

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rigoutBin returns the binary under test, building it when RIGOUT_BIN is
// not set.
func rigoutBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("RIGOUT_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "rigout")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rigout")
	cmd.Dir = filepath.Join("..", "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building rigout: %v\n%s", err, out)
	}
	return bin
}

// serve starts `rigout serve` on a free loopback port with a fresh token
// and returns its MCP URL and the token. The process is stopped by its PID
// when the test ends.
func serve(t *testing.T, bin string) (url, token string) {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	token = hex.EncodeToString(b)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "RIGOUT_AUTH_TOKEN="+token, "RIGOUT_STATE_DIR="+t.TempDir(), "RIGOUT_CONFIG=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	found := make(chan string, 1)
	var log strings.Builder
	var logMu sync.Mutex
	go func() {
		listening := regexp.MustCompile(`listening on (http://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case url = <-found:
		return url, token
	case <-time.After(15 * time.Second):
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("rigout serve did not say where it listens within 15s:\n%s", log.String())
		return "", ""
	}
}

// wire is an http.RoundTripper that adds a bearer token and records the
// JSON-RPC methods the client sent.
type wire struct {
	token string

	mu      sync.Mutex
	methods []string
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if w.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.token)
	}
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			w.mu.Lock()
			w.methods = append(w.methods, msg.Method)
			w.mu.Unlock()
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (w *wire) sent() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.methods)
}

// connect connects the SDK client to url at version with token.
func connect(ctx context.Context, url, version string, w *wire) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "rigout-gosdk-interop", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: w},
		MaxRetries: -1,
	}
	return client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
}

// TestGoSDKClient: at each protocol version the SDK client negotiates that
// version with the real binary (2026-07-28 without initialize: the
// stateless server/discover), lists the tools, runs a command and reads
// its output, and a non-zero exit comes back as an error result.
func TestGoSDKClient(t *testing.T) {
	bin := rigoutBin(t)
	url, token := serve(t, bin)
	tests := []struct {
		version     string
		handshake   string // the first method the client must send
		noHandshake string // a method the client must not send
	}{
		{version: "2026-07-28", handshake: "server/discover", noHandshake: "initialize"},
		{version: "2025-11-25", handshake: "initialize", noHandshake: "server/discover"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			w := &wire{token: token}
			cs, err := connect(ctx, url, tt.version, w)
			if err != nil {
				t.Fatalf("connect at %s: %v", tt.version, err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != tt.version {
				t.Errorf("negotiated protocol %q, want %q", got, tt.version)
			}
			sent := w.sent()
			if len(sent) == 0 || sent[0] != tt.handshake {
				t.Errorf("first method sent = %v, want %s", sent, tt.handshake)
			}
			if slices.Contains(sent, tt.noHandshake) {
				t.Errorf("the client sent %s at %s: %v", tt.noHandshake, tt.version, sent)
			}

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			i := slices.IndexFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "execute_command" })
			if i < 0 {
				t.Fatalf("tools/list has no execute_command among %d tools", len(tools.Tools))
			}
			if tools.Tools[i].InputSchema == nil {
				t.Error("execute_command has no input schema")
			}

			marker := "gosdk-" + tt.version
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "echo " + marker}})
			if err != nil {
				t.Fatalf("execute_command: %v", err)
			}
			if res.IsError {
				t.Fatalf("execute_command failed: %s", text(res))
			}
			sc, _ := json.Marshal(res.StructuredContent)
			var out struct {
				Stdout   string `json:"stdout"`
				ExitCode *int   `json:"exit_code"`
			}
			if err := json.Unmarshal(sc, &out); err != nil {
				t.Fatalf("structuredContent %s: %v", sc, err)
			}
			if out.Stdout != marker+"\n" || out.ExitCode == nil || *out.ExitCode != 0 {
				t.Errorf("structuredContent = %s, want stdout %q and exit_code 0", sc, marker+"\n")
			}
			if !strings.Contains(text(res), marker) {
				t.Errorf("text content %q does not show the output %q", text(res), marker)
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_command", Arguments: map[string]any{"command": "exit 3"}})
			if err != nil {
				t.Fatalf("execute_command exit 3: %v", err)
			}
			if !res.IsError {
				t.Errorf("exit 3 is not an error result: %s", text(res))
			}
		})
	}
}

// TestGoSDKClientRefusedWithoutToken: a wrong token is refused with 401
// at both versions.
func TestGoSDKClientRefusedWithoutToken(t *testing.T) {
	bin := rigoutBin(t)
	url, _ := serve(t, bin)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := connect(ctx, url, version, &wire{token: "not-the-token"})
			if err == nil {
				cs.Close()
				t.Fatal("connected with a wrong token")
			}
			if !strings.Contains(err.Error(), "Unauthorized") {
				t.Errorf("refused with %v, want the HTTP 401 (Unauthorized)", err)
			}
		})
	}
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
