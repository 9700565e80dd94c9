package main

//lint:file-ignore SA1019 mcp-go marks what protocol 2026-07-28 removed (the GET stream, ping, logging, sampling) deprecated; rigout still serves and tests 2025-11-25 clients, which use them.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/exec/remote/sshtest"
	"github.com/rigout/rigout/internal/proctest"
)

// binary is the rigout binary built once for the end-to-end tests.
var binary struct {
	once sync.Once
	path string
	err  error
}

// rigoutBinary builds cmd/rigout into a temporary directory.
func rigoutBinary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "rigout-e2e-")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "rigout")
		out, err := osexec.Command("go", "build", "-o", binary.path, ".").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// markers marks the processes these tests start; none may outlive them.
var markers = proctest.NewMarkers()

func TestMain(m *testing.M) {
	// The gateways these tests start run commands in views whose /tmp is
	// private; the tests' own temporary directories are work areas.
	// (exec's suite checks the private /tmp itself.)
	os.Setenv("RIGOUT_WORK_AREAS", os.TempDir())
	// The chain key the PostgreSQL tests' configurations name in
	// audit.key_env; the rigout processes they start inherit it.
	os.Setenv(testChainKeyEnv, strings.Repeat("5a", 32))
	code := markers.Main(m, 5*time.Second).Run()
	if binary.path != "" {
		os.RemoveAll(filepath.Dir(binary.path))
	}
	if static.path != "" {
		os.RemoveAll(filepath.Dir(static.path))
	}
	os.Exit(code)
}

// server is a running rigout process driven by an MCP client.
type server struct {
	client *client.Client
	pid    int
	url    string // HTTP only
	token  string // HTTP only
	init   *mcp.InitializeResult
}

// startStdio runs `rigout stdio` as the client's subprocess and
// initializes it with the latest protocol version.
func startStdio(t testing.TB, args ...string) *server {
	return startStdioVersion(t, mcp.LATEST_PROTOCOL_VERSION, args...)
}

// startStdioVersion is startStdio negotiating the given protocol version.
func startStdioVersion(t testing.TB, version string, args ...string) *server {
	t.Helper()
	bin := rigoutBinary(t)
	stateDir := t.TempDir()
	var cmd *osexec.Cmd
	tr := mcptransport.NewStdioWithOptions(bin, nil, append([]string{"stdio"}, args...),
		mcptransport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*osexec.Cmd, error) {
			cmd = osexec.CommandContext(ctx, command, args...)
			cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+stateDir)
			return cmd, nil
		}))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	t.Cleanup(func() { c.Close() })
	init := initialize(t, c, version)
	return &server{client: c, pid: cmd.Process.Pid, init: init}
}

var listenRE = regexp.MustCompile(`listening on (http://\S+)`)

// startHTTP runs `rigout serve` on a free loopback port and connects a
// streamable HTTP client to it with the latest protocol version.
func startHTTP(t testing.TB, args ...string) *server {
	return startHTTPVersion(t, mcp.LATEST_PROTOCOL_VERSION, args...)
}

// startHTTPVersion is startHTTP negotiating the given protocol version.
func startHTTPVersion(t testing.TB, version string, args ...string) *server {
	t.Helper()
	cmd, url, token := startServe(t, args...)
	c := httpClient(t, url, token, version)
	return &server{client: c, pid: cmd.Process.Pid, url: url, token: token}
}

// startServe starts `rigout serve --addr 127.0.0.1:0` with a fresh state
// directory and returns the process, its MCP URL and the bearer token it
// generated (read from the connection file). The process is stopped, by its
// PID, when the test ends.
func startServe(t testing.TB, args ...string) (*osexec.Cmd, string, string) {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

// startServeEnv is startServe with extra environment variables.
func startServeEnv(t testing.TB, env []string, args ...string) (*osexec.Cmd, string, string) {
	t.Helper()
	bin := rigoutBinary(t)
	stateDir := t.TempDir()
	for _, kv := range env { // a state directory given in env wins
		if d, ok := strings.CutPrefix(kv, "RIGOUT_STATE_DIR="); ok {
			stateDir = d
		}
	}
	cmd := osexec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), "RIGOUT_STATE_DIR="+stateDir), env...)
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
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	var mu sync.Mutex
	var logged strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			mu.Lock()
			logged.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				urls <- m[1]
				sent = true
			}
		}
		if !sent {
			close(urls)
		}
	}()
	select {
	case url, ok := <-urls:
		if !ok {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("rigout serve exited before listening:\n%s", logged.String())
		}
		return cmd, url, connectionToken(t, filepath.Join(stateDir, "connection.json"))
	case <-time.After(15 * time.Second):
		t.Fatal("rigout serve did not start listening")
	}
	return nil, "", ""
}

// connectionToken reads the bearer token from a connection file, if there
// is one, and checks the file is owner-only.
func connectionToken(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("connection file mode = %v (err %v), want 0600", fi.Mode().Perm(), err)
	}
	var cf struct {
		MCP struct {
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(cf.MCP.Headers["Authorization"], "Bearer ")
}

// dialHTTP returns an MCP client over streamable HTTP with a bearer token,
// started and initialized at version; the caller closes it. For goroutines,
// which cannot fail a test: httpClient is the same for a test.
func dialHTTP(ctx context.Context, url, token, version string) (*client.Client, error) {
	c, err := client.NewStreamableHttpClient(url, mcptransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		return nil, err
	}
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "rigout-e2e", Version: "1"}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

// httpClient is dialHTTP for a test: it fails the test if the client
// cannot connect and closes the client when the test ends.
func httpClient(t testing.TB, url, token, version string) *client.Client {
	t.Helper()
	c, err := dialHTTP(context.Background(), url, token, version)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func initialize(t testing.TB, c *client.Client, version string) *mcp.InitializeResult {
	t.Helper()
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "rigout-e2e", Version: "1"}
	res, err := c.Initialize(context.Background(), req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

func call(t testing.TB, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}

// transports runs f against the real binary over stdio and over HTTP.
func transports(t *testing.T, f func(t *testing.T, s *server)) {
	t.Run("stdio", func(t *testing.T) { f(t, startStdio(t)) })
	t.Run("http", func(t *testing.T) { f(t, startHTTP(t)) })
}

// versions runs f over both transports with both protocol eras: 2025-11-25
// (initialize handshake; HTTP sessions) and the latest (stateless).
func versions(t *testing.T, f func(t *testing.T, s *server)) {
	for _, v := range []string{"2025-11-25", mcp.LATEST_PROTOCOL_VERSION} {
		t.Run("stdio-"+v, func(t *testing.T) { f(t, startStdioVersion(t, v)) })
		t.Run("http-"+v, func(t *testing.T) { f(t, startHTTPVersion(t, v)) })
	}
}

// alive checks that the server still answers a real request.
func alive(t *testing.T, s *server) {
	t.Helper()
	if _, err := s.client.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Errorf("server no longer answers: %v", err)
	}
}

func TestE2EBasics(t *testing.T) {
	versions(t, func(t *testing.T, s *server) {
		ctx := context.Background()
		if err := s.client.Ping(ctx); err != nil {
			t.Fatalf("ping: %v", err)
		}
		tools, err := s.client.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tool := range tools.Tools {
			found = found || tool.Name == "execute_command"
		}
		if !found {
			t.Fatalf("execute_command missing from %v", tools.Tools)
		}

		res := call(t, s.client, "execute_command", map[string]any{"command": "echo hi"})
		if res.IsError || !strings.Contains(resultText(res), "stdout:\nhi\n") || !strings.Contains(resultText(res), "exit code: 0") {
			t.Errorf("echo hi: %v %q", res.IsError, resultText(res))
		}

		res = call(t, s.client, "execute_command", map[string]any{"command": "echo nope >&2; exit 7"})
		if !res.IsError || !strings.Contains(resultText(res), "exit code: 7") || !strings.Contains(resultText(res), "nope") {
			t.Errorf("non-zero exit: %v %q", res.IsError, resultText(res))
		}

		// Missing and ill-typed arguments are refused, naming the field.
		res = call(t, s.client, "execute_command", map[string]any{})
		if !res.IsError || !strings.Contains(resultText(res), "`command`") {
			t.Errorf("missing arguments: %q", resultText(res))
		}
		res = call(t, s.client, "execute_command", map[string]any{"command": 42})
		if !res.IsError || !strings.Contains(resultText(res), "command: got number, want string") {
			t.Errorf("ill-typed argument: %q", resultText(res))
		}

		// An unknown tool is an error naming it, and the server keeps serving.
		var req mcp.CallToolRequest
		req.Params.Name = "no_such_tool"
		if _, err := s.client.CallTool(ctx, req); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
			t.Errorf("unknown tool: err = %v", err)
		}
		alive(t, s)
	})
}

func TestE2ETimeoutLeavesNoProcess(t *testing.T) {
	transports(t, func(t *testing.T, s *server) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		start := time.Now()
		res := call(t, s.client, "execute_command", map[string]any{
			"command": "echo $$ > " + pidFile + "; exec sh -c 'sleep 100 & sleep 100'",
			"timeout": 1,
		})
		if !res.IsError || !strings.Contains(resultText(res), "timed out") {
			t.Fatalf("result: %q", resultText(res))
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		proctest.WaitGroupGone(t, pgid, 5*time.Second)
	})
}

// vmHWM returns the peak resident set size of a process, in bytes.
func vmHWM(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func TestE2EHugeOutputIsCappedWithBoundedMemory(t *testing.T) {
	transports(t, func(t *testing.T, s *server) {
		before := vmHWM(t, s.pid)
		res := call(t, s.client, "execute_command", map[string]any{
			"command": "head -c 209715200 /dev/zero | tr '\\0' x; echo; echo THE-END",
			"timeout": 120,
		})
		var sc struct {
			StdoutBytes   int64  `json:"stdout_bytes"`
			StdoutDropped int64  `json:"stdout_dropped"`
			Stdout        string `json:"stdout"`
			Next          struct {
				Tool      string         `json:"tool"`
				Arguments map[string]any `json:"arguments"`
			} `json:"next"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &sc); err != nil {
			t.Fatal(err)
		}
		// The result is bounded (head and tail of the output shown), and
		// the output is kept to page on from where the head ends.
		const total = int64(209715200 + 1 + len("THE-END\n"))
		if sc.StdoutBytes != total || sc.StdoutDropped >= total || sc.StdoutDropped < total-int64(len(sc.Stdout)) {
			t.Errorf("bytes %d not shown %d, shown %d", sc.StdoutBytes, sc.StdoutDropped, len(sc.Stdout))
		}
		if len(sc.Stdout) > 32<<10 || !strings.HasSuffix(sc.Stdout, "THE-END\n") || !strings.Contains(resultText(res), "bytes not shown") {
			t.Errorf("not a bounded head and tail with the marker: %d bytes", len(sc.Stdout))
		}
		if sc.Next.Tool != "process" || sc.Next.Arguments["offset"] == nil {
			t.Errorf("next %+v: want a process read by offset (the first line is 200 MB long)", sc.Next)
		}
		after := vmHWM(t, s.pid)
		t.Logf("peak RSS %d MiB → %d MiB", before>>20, after>>20)
		if after-before > 64<<20 {
			t.Errorf("peak RSS grew by %d MiB for a 200 MiB output", (after-before)>>20)
		}
	})
}

// rawStdio runs `rigout stdio` with raw pipes, for input no client sends.
func rawStdio(t *testing.T, input string) []map[string]any {
	t.Helper()
	cmd := osexec.Command(rigoutBinary(t), "stdio")
	// Never the real state directory: its ledger belongs to whoever runs
	// rigout on this machine (and may be newer than this build).
	cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+t.TempDir())
	cmd.Stdin = strings.NewReader(input)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var out []map[string]any
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("stdout line is not JSON-RPC: %q", sc.Text())
			continue
		}
		out = append(out, m)
	}
	return out
}

func TestE2EStdioMalformedInput(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}`
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{not json`,
		`{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`,
		big,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") + "\n"
	out := rawStdio(t, input)
	byID := map[string]map[string]any{}
	var parseErrors int
	for _, m := range out {
		if e, ok := m["error"].(map[string]any); ok && e["code"] == float64(-32700) {
			parseErrors++
		}
		byID[fmt.Sprint(m["id"])] = m
	}
	if parseErrors != 2 {
		t.Errorf("parse errors = %d, want 2 (bad JSON, oversized frame): %v", parseErrors, out)
	}
	if e, ok := byID["2"]["error"].(map[string]any); !ok || e["code"] != float64(-32601) {
		t.Errorf("unknown method: %v", byID["2"])
	}
	if byID["3"]["result"] == nil {
		t.Errorf("ping after bad input: %v", byID["3"])
	}
}

func TestE2EHTTPMalformedInput(t *testing.T) {
	_, url, token := startServe(t, "--max-body", "65536")
	post := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(`{"jsonrpc":`); !strings.Contains(body, "-32700") {
		t.Errorf("malformed JSON: %d %s", code, body)
	}
	if code, body := post(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"` + strings.Repeat("x", 70000) + `"}}`); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d %s", code, body)
	}
	if code, body := post(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`); code != http.StatusBadRequest || !strings.Contains(body, "-32600") {
		t.Errorf("batch: %d %s", code, body)
	}
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || h["ok"] != true || h["name"] != "rigout" || h["version"] == nil || h["ts"] == nil {
		t.Errorf("health after bad input: %v %v", h, err)
	}
}

func TestE2EServeShutsDownOnSIGTERM(t *testing.T) {
	cmd, url, token := startServe(t)
	c := httpClient(t, url, token, "2025-11-25")
	results := make(chan *mcp.CallToolResult, 1)
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "execute_command"
		req.Params.Arguments = map[string]any{"command": "sleep 1; echo drained"}
		res, _ := c.CallTool(context.Background(), req)
		results <- res
	}()
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-results:
		if res == nil || !strings.Contains(resultText(res), "drained") {
			t.Errorf("in-flight call was not drained: %v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight call never answered")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("rigout serve exited with %v after SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rigout serve did not exit after SIGTERM")
	}
}

func TestE2EServeRefusesNonLoopbackWithoutAuth(t *testing.T) {
	cmd := osexec.Command(rigoutBinary(t), "serve", "--addr", "0.0.0.0:0", "--no-auth")
	cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exitErr *osexec.ExitError
	if err == nil || !asExit(err, &exitErr) || exitErr.ExitCode() != 2 || !strings.Contains(string(out), "refusing --no-auth on 0.0.0.0:0") {
		t.Errorf("serve on 0.0.0.0: err %v, output %s", err, out)
	}
}

func asExit(err error, target **osexec.ExitError) bool {
	e, ok := err.(*osexec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

func TestE2EVersionAndUsage(t *testing.T) {
	out, err := osexec.Command(rigoutBinary(t), "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "rigout ") {
		t.Errorf("version: %q %v", out, err)
	}
	out, err = osexec.Command(rigoutBinary(t), "frobnicate").CombinedOutput()
	var exitErr *osexec.ExitError
	if !asExit(err, &exitErr) || exitErr.ExitCode() != 2 || !strings.Contains(string(out), `unknown command "frobnicate". Expected one of: `+strings.Join(commands, ", ")) || !strings.Contains(string(out), "start") {
		t.Errorf("unknown command: %q %v", out, err)
	}
}

func TestE2EHTTPNeedsAToken(t *testing.T) {
	_, url, token := startServe(t)
	if len(token) < 40 {
		t.Fatalf("generated token %q is too short", token)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	tests := []struct {
		name   string
		header string
		query  string
		want   int
	}{
		{"no header", "", "", 401},
		{"wrong token", "Bearer wrong", "", 401},
		{"lower-case scheme (RFC 9110 §11.1)", "bearer " + token, "", 200},
		{"token in the query", "", "?access_token=" + token, 401},
		{"right token", "Bearer " + token, "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url+tt.query, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.want, b)
			}
			if tt.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", resp.Header.Get("WWW-Authenticate"))
			}
			if strings.Contains(string(b), token) {
				t.Error("the response echoes the token")
			}
		})
	}
	// A token given in the environment is used instead; the connection file carries it.
	_, url2, tok2 := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=env-token-0123456789abcdef"})
	if tok2 != "env-token-0123456789abcdef" || url2 == "" {
		t.Errorf("connection file token = %q, want the one from RIGOUT_AUTH_TOKEN", tok2)
	}
}

// TestE2ESSHHostFromConfig runs the binary with a host declared in its
// configuration file and a known_hosts file, against an in-process SSH
// server, and checks the route, the policy and the host-key refusal.
func TestE2ESSHHostFromConfig(t *testing.T) {
	dir := t.TempDir()
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "id_ed25519")
	if err := key.Write(keyPath, ""); err != nil {
		t.Fatal(err)
	}
	srv, err := sshtest.NewServer(sshtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	stranger, err := sshtest.NewServer(sshtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"hosts": [
		{"name": "box", "address": %q, "port": %d, "user": "agent", "key": %q, "labels": ["lab"]},
		{"name": "stranger", "address": %q, "port": %d, "user": "agent", "key": %q}
	]}`, srv.Host(), srv.Port(), keyPath, stranger.Host(), stranger.Port(), keyPath)
	cfgPath := filepath.Join(dir, "rigout.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startStdio(t, "--config", cfgPath, "--known-hosts", known, "--ssh-config", filepath.Join(dir, "no-ssh-config"))

	res := call(t, s.client, "execute_command", map[string]any{"host": "box", "command": "echo from-box"})
	if res.IsError || !strings.Contains(resultText(res), "stdout:\nfrom-box") || !strings.Contains(resultText(res), "via ssh(box") {
		t.Errorf("ssh call: %q", resultText(res))
	}
	res = call(t, s.client, "execute_command", map[string]any{"hosts": "lab", "command": "uname -s"})
	if res.IsError || !strings.Contains(resultText(res), "1 of 1 hosts succeeded") {
		t.Errorf("fan-out by label: %q", resultText(res))
	}
	res = call(t, s.client, "execute_command", map[string]any{"host": "stranger", "command": "true"})
	if !res.IsError || !strings.Contains(resultText(res), "rigout hosts trust") || stranger.AuthAttempts() != 0 {
		t.Errorf("unknown host key: %q (auth attempts %d)", resultText(res), stranger.AuthAttempts())
	}
}

func TestE2ESetupToken(t *testing.T) {
	bin := rigoutBinary(t)
	cmd := osexec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--setup-token")
	cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	var setupCmd string
	re := regexp.MustCompile(`X-Setup-Token: (\S+)" (\S+)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			setupCmd = m[1] + " " + m[2]
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	f := strings.Fields(setupCmd)
	if len(f) != 2 {
		t.Fatalf("no setup command printed")
	}
	get := func(tok string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, f[1], nil)
		req.Header.Set("X-Setup-Token", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("wrong"); code != 401 {
		t.Errorf("wrong setup token: %d %s", code, body)
	}
	code, body := get(f[0])
	if code != 200 || !strings.Contains(body, `"Authorization":"Bearer `) {
		t.Errorf("setup token: %d %s", code, body)
	}
	if code, _ := get(f[0]); code != 401 {
		t.Errorf("setup token worked twice: %d", code)
	}
}

// TestE2EConnectionFileWithCustomPath serves the MCP endpoint at another
// path and follows the connection file's URLs.
func TestE2EConnectionFileWithCustomPath(t *testing.T) {
	stateDir := t.TempDir()
	_, url, token := startServeEnv(t, []string{"RIGOUT_STATE_DIR=" + stateDir}, "--path", "/rpc")
	if !strings.HasSuffix(url, "/rpc") || token == "" {
		t.Fatalf("url %q token %q", url, token)
	}
	b, err := os.ReadFile(filepath.Join(stateDir, "connection.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cf struct {
		MCP struct {
			URL       string `json:"url"`
			HealthURL string `json:"health_url"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		t.Fatal(err)
	}
	if cf.MCP.URL != url {
		t.Errorf("connection file url = %q, want %q", cf.MCP.URL, url)
	}
	resp, err := http.Get(cf.MCP.HealthURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health_url %s answered %d", cf.MCP.HealthURL, resp.StatusCode)
	}
}
