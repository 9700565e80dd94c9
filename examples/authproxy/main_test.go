package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the program on an ephemeral loopback port.
func start(t *testing.T, env map[string]string, args ...string) (base string, stdout, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-max-body", "1024"}, args...),
			func(k string) string { return env[k] }, stdout, stderr, ready)
	}()
	select {
	case base = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("run: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return base, stdout, stderr
}

func call(t *testing.T, method, url string, body io.Reader, hdr ...string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &m)
	return resp, m
}

func TestAuthProxy(t *testing.T) {
	const token = "dGVzdC10b2tlbi1mb3ItdGhlLWF1dGhwcm94eS1leGFtcGxl"
	base, stdout, stderr := start(t, map[string]string{"AUTHPROXY_TOKEN": token})
	mcp := base + "/mcp"
	bearer := []string{"Authorization", "Bearer " + token}

	tests := []struct {
		name   string
		method string
		url    string
		body   string
		hdr    []string
		want   int
	}{
		{"no token", "POST", mcp, "{}", nil, 401},
		{"wrong token", "POST", mcp, "{}", []string{"Authorization", "Bearer nope"}, 401},
		{"token in query", "POST", mcp + "?access_token=" + token, "{}", nil, 401},
		{"right token", "POST", mcp, "{}", bearer, 200},
		{"evil origin", "POST", mcp, "{}", append([]string{"Origin", "https://evil.example"}, bearer...), 403},
		{"rebinding host", "POST", mcp, "{}", append([]string{"Host", "attacker.example"}, bearer...), 403},
		{"body at the cap", "POST", mcp, strings.Repeat("x", 1024), bearer, 200},
		{"body cap+1", "POST", mcp, strings.Repeat("x", 1025), bearer, 413},
		{"body cap+1 without token", "POST", mcp, strings.Repeat("x", 1025), nil, 413},
		{"metadata", "GET", base + "/.well-known/oauth-protected-resource/mcp", "", nil, 200},
		{"connection with token", "GET", base + "/connection.json", "", bearer, 200},
		{"connection without token", "GET", base + "/connection.json", "", nil, 401},
		{"unknown path", "GET", base + "/nope", "", bearer, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			resp, m := call(t, tt.method, tt.url, body, tt.hdr...)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d (%v)", resp.StatusCode, tt.want, m)
			}
			if tt.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
			}
			if tt.name == "right token" && (m["principal"] != "default" || m["may_run_shell"] != true) {
				t.Errorf("body %v", m)
			}
		})
	}
	// A chunked body (no Content-Length) over the cap is refused too.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(strings.Repeat("y", 2000)))
		pw.Close()
	}()
	if resp, _ := call(t, "POST", mcp, pr, bearer...); resp.StatusCode != 413 {
		t.Errorf("chunked body over the cap: %d", resp.StatusCode)
	}
	if strings.Contains(stdout.String(), token) || strings.Contains(stderr.String(), token) {
		t.Error("the configured token was printed or logged")
	}
}

func TestAuthProxyGeneratedToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "connection.json")
	base, stdout, stderr := start(t, nil, "-connection-file", file)
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("connection file mode %v", fi.Mode().Perm())
	}
	var conn struct {
		MCP struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	b, _ := os.ReadFile(file)
	if err := json.Unmarshal(b, &conn); err != nil {
		t.Fatal(err)
	}
	if conn.MCP.URL != base+"/mcp" || !strings.HasPrefix(conn.MCP.Headers["Authorization"], "Bearer ") {
		t.Fatalf("connection file %s", b)
	}
	tok := strings.TrimPrefix(conn.MCP.Headers["Authorization"], "Bearer ")
	if resp, m := call(t, "POST", conn.MCP.URL, strings.NewReader("{}"), "Authorization", "Bearer "+tok); resp.StatusCode != 200 || m["principal"] != "default" {
		t.Fatalf("generated token: %d %v", resp.StatusCode, m)
	}
	if strings.Contains(stdout.String(), tok) || strings.Contains(stderr.String(), tok) {
		t.Error("token printed although it went to the connection file")
	}
}
