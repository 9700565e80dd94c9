package rigout_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rigout/rigout/internal/proctest"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/transport"
)

// connect returns an initialized in-process MCP client for gw.
func connect(t testing.TB, gw *rigout.Gateway) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(gw.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

func newGateway(t *testing.T, cfg rigout.Config) *rigout.Gateway {
	t.Helper()
	gw, err := rigout.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

// serveHTTP serves gw over streamable HTTP without authentication on a
// loopback port until the test ends, and returns the MCP URL.
func serveHTTP(t *testing.T, gw *rigout.Gateway) string {
	t.Helper()
	h, err := transport.NewHTTP(gw.MCPServer(), transport.HTTPConfig{InsecureNoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		h.Close()
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}

// structured decodes a result's structuredContent.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func echoTool(name string, calls *atomic.Int64) rigout.Tool {
	return rigout.Tool{
		Name:        name,
		Description: "Echo the message.",
		Risk:        rigout.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"msg":{"type":"string"},"n":{"type":"integer","minimum":1}},"required":["msg"],"additionalProperties":false}`),
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			if calls != nil {
				calls.Add(1)
			}
			var a struct {
				Msg string `json:"msg"`
			}
			if err := call.Bind(&a); err != nil {
				return nil, err
			}
			return rigout.TextResult(a.Msg), nil
		},
	}
}

func TestTwoGatewaysInOneProcess(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	a := newGateway(t, rigout.Config{Name: "alpha", WorkDir: dirA, Tools: []rigout.Tool{echoTool("only_in_a", nil)}})
	b := newGateway(t, rigout.Config{Name: "beta", WorkDir: dirB, NoBuiltinTools: true, Tools: []rigout.Tool{echoTool("only_in_b", nil)}})
	ca, cb := connect(t, a), connect(t, b)

	la, err := ca.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := cb.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := func(l *mcp.ListToolsResult) string {
		var n []string
		for _, t := range l.Tools {
			n = append(n, t.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(la); got != "execute_command,get_server_activity,only_in_a" {
		t.Errorf("gateway a tools = %s", got)
	}
	if got := names(lb); got != "only_in_b" {
		t.Errorf("gateway b tools = %s", got)
	}
	// Each runs commands in its own working directory.
	res := callTool(t, ca, "execute_command", map[string]any{"command": "pwd"})
	if !strings.Contains(text(res), dirA) {
		t.Errorf("gateway a ran in the wrong directory: %s", text(res))
	}
	res = callTool(t, cb, "only_in_b", map[string]any{"msg": "from b"})
	if text(res) != "from b" {
		t.Errorf("gateway b: %s", text(res))
	}
	if a.Config().Name == b.Config().Name {
		t.Error("configs leaked between gateways")
	}
}

func TestRegistryRefusesBadTools(t *testing.T) {
	gw := newGateway(t, rigout.Config{NoBuiltinTools: true})
	good := echoTool("echo", nil)
	if err := gw.Register(good); err != nil {
		t.Fatal(err)
	}
	if err := gw.Register(good); !errors.Is(err, rigout.ErrDuplicateTool) {
		t.Errorf("duplicate: err = %v", err)
	}
	if _, err := rigout.New(rigout.Config{Tools: []rigout.Tool{good, good}}); !errors.Is(err, rigout.ErrDuplicateTool) {
		t.Errorf("duplicate in Config.Tools: err = %v", err)
	}
	if _, err := rigout.New(rigout.Config{Tools: []rigout.Tool{{Name: "execute_command", Description: "x", Risk: rigout.Exec, Handler: good.Handler}}}); !errors.Is(err, rigout.ErrDuplicateTool) {
		t.Errorf("shadowing a built-in: err = %v", err)
	}
	bad := map[string]func(*rigout.Tool){
		"empty name":     func(t *rigout.Tool) { t.Name = "" },
		"name with /":    func(t *rigout.Tool) { t.Name = "a/b" },
		"long name":      func(t *rigout.Tool) { t.Name = strings.Repeat("x", 65) },
		"no handler":     func(t *rigout.Tool) { t.Handler = nil },
		"no risk":        func(t *rigout.Tool) { t.Risk = 0 },
		"no description": func(t *rigout.Tool) { t.Description = "" },
		"schema not json": func(t *rigout.Tool) {
			t.InputSchema = json.RawMessage(`{`)
		},
		"schema not object": func(t *rigout.Tool) {
			t.InputSchema = json.RawMessage(`{"type":"string"}`)
		},
		"schema invalid": func(t *rigout.Tool) {
			t.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)
		},
		"output schema invalid": func(t *rigout.Tool) {
			t.OutputSchema = json.RawMessage(`[]`)
		},
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			tool := echoTool("fresh_"+strconv.Itoa(len(name)), nil)
			mutate(&tool)
			if err := gw.Register(tool); err == nil {
				t.Errorf("Register accepted a tool with %s", name)
			}
		})
	}
	if n := len(gw.Tools()); n != 1 {
		t.Errorf("registry holds %d tools after refusals, want 1", n)
	}
}

func TestSchemaViolationsNeverReachTheHandler(t *testing.T) {
	var calls atomic.Int64
	gw := newGateway(t, rigout.Config{NoBuiltinTools: true, Tools: []rigout.Tool{echoTool("echo", &calls)}})
	c := connect(t, gw)
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing", map[string]any{}, "missing property 'msg'"},
		{"wrong type", map[string]any{"msg": 5}, "msg: got number, want string"},
		{"below minimum", map[string]any{"msg": "x", "n": 0}, "n: "},
		{"float for integer", map[string]any{"msg": "x", "n": 1.5}, "n: got number, want integer"},
		{"unexpected field", map[string]any{"msg": "x", "extra": true}, "'extra'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, c, "echo", tt.args)
			if !res.IsError || !strings.Contains(text(res), tt.want) || !strings.Contains(text(res), "invalid arguments for echo") {
				t.Errorf("result = %v %q, want error naming %q", res.IsError, text(res), tt.want)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("handler ran %d times on invalid arguments", n)
	}
	if res := callTool(t, c, "echo", map[string]any{"msg": "ok", "n": 2}); res.IsError || text(res) != "ok" || calls.Load() != 1 {
		t.Errorf("valid call: %v %q", res.IsError, text(res))
	}
}

func TestUnknownToolNamesTheTool(t *testing.T) {
	c := connect(t, newGateway(t, rigout.Config{}))
	var req mcp.CallToolRequest
	req.Params.Name = "no_such_tool"
	_, err := c.CallTool(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("err = %v, want an error naming the tool", err)
	}
}

func TestMiddlewareWrapsEveryCallAndRecoversPanics(t *testing.T) {
	var seen []string
	mw := func(next rigout.Handler) rigout.Handler {
		return func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			seen = append(seen, call.Tool.Name)
			return next(ctx, call)
		}
	}
	boom := rigout.Tool{
		Name: "boom", Description: "Panics.", Risk: rigout.ReadOnly,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) { panic("kaboom") },
	}
	failing := rigout.Tool{
		Name: "failing", Description: "Fails.", Risk: rigout.ReadOnly,
		Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return nil, errors.New("disk on fire, password=hunter2")
		},
	}
	gw := newGateway(t, rigout.Config{NoBuiltinTools: true, Middleware: []rigout.Middleware{mw}, Tools: []rigout.Tool{boom, failing, echoTool("echo", nil)}})
	c := connect(t, gw)
	res := callTool(t, c, "boom", nil)
	if !res.IsError || !strings.Contains(text(res), "internal error in boom") || strings.Contains(text(res), "kaboom") {
		t.Errorf("panic result = %q", text(res))
	}
	res = callTool(t, c, "failing", nil)
	if !res.IsError || !strings.Contains(text(res), "disk on fire") || strings.Contains(text(res), "hunter2") {
		t.Errorf("error result = %q (want the error, redacted)", text(res))
	}
	callTool(t, c, "echo", map[string]any{"msg": "x"})
	callTool(t, c, "echo", map[string]any{}) // invalid: refused before the embedder's middleware
	if got := strings.Join(seen, ","); got != "boom,failing,echo" {
		t.Errorf("middleware saw %s", got)
	}
	// The server still serves after a panic.
	if res := callTool(t, c, "echo", map[string]any{"msg": "alive"}); text(res) != "alive" {
		t.Errorf("after panic: %q", text(res))
	}
}

// TestToolListStaysSmall bounds what every conversation pays for tools/list.
func TestToolListStaysSmall(t *testing.T) {
	c := connect(t, newGateway(t, rigout.Config{}))
	l, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 10<<10 {
		t.Errorf("tools/list is %d bytes, budget 10 KiB", len(b))
	}
	for _, tool := range l.Tools {
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
	t.Logf("tools/list: %d tools, %d bytes", len(l.Tools), len(b))
}

func TestExecuteCommand(t *testing.T) {
	dir := t.TempDir()
	c := connect(t, newGateway(t, rigout.Config{WorkDir: dir}))
	tests := []struct {
		name      string
		args      map[string]any
		isError   bool
		wantText  []string
		wantExit  float64
		notInText []string
	}{
		{"echo", map[string]any{"command": "echo hi"}, false, []string{"$ echo hi", "host: local (via local)", "exit code: 0", "stdout:\nhi\n"}, 0, []string{"stderr:"}},
		{"non-zero exit", map[string]any{"command": "echo bad >&2; exit 3"}, true, []string{"exit code: 3", "stderr:\nbad"}, 3, nil},
		{"argv without shell", map[string]any{"argv": []any{"printf", "%s", "$(id)"}}, false, []string{"$ printf %s '$(id)'", "stdout:\n$(id)"}, 0, nil},
		{"stdin", map[string]any{"argv": []any{"cat"}, "stdin": "piped"}, false, []string{"stdout:\npiped"}, 0, nil},
		{"env", map[string]any{"command": "echo $FOO", "environment": map[string]any{"FOO": "bar"}}, false, []string{"stdout:\nbar"}, 0, nil},
		{"default dir", map[string]any{"command": "pwd"}, false, []string{dir}, 0, nil},
		{"relative dir", map[string]any{"command": "pwd", "working_directory": "."}, false, []string{dir}, 0, nil},
		{"no output", map[string]any{"command": "true"}, false, []string{"(no output)"}, 0, nil},
		{"secrets redacted", map[string]any{"command": "echo password=hunter2 monkey=banana"}, false, []string{"password=***", "monkey=banana"}, 0, []string{"hunter2"}},
		{"escapes cleaned", map[string]any{"command": `printf 'a\033[31mred\033[0m\rb\n'`}, false, []string{"ared\nb"}, 0, []string{"\x1b", "\r"}},
		{"self", map[string]any{"command": "true", "host": "self"}, false, []string{"host: self (via local)"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, c, "execute_command", tt.args)
			got := text(res)
			if res.IsError != tt.isError {
				t.Errorf("isError = %v, want %v: %s", res.IsError, tt.isError, got)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notInText {
				if strings.Contains(got, w) {
					t.Errorf("text holds %q:\n%s", w, got)
				}
			}
			sc := structured(t, res)
			if sc["exit_code"] != tt.wantExit || sc["route"] != "local" {
				t.Errorf("structuredContent = %v", sc)
			}
		})
	}
}

func TestExecuteCommandRefusals(t *testing.T) {
	c := connect(t, newGateway(t, rigout.Config{MaxTimeout: time.Minute}))
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"neither", map[string]any{}, "needs `command`"},
		{"both", map[string]any{"command": "true", "argv": []any{"true"}}, "not both"},
		{"empty argv", map[string]any{"argv": []any{}}, "argv"},
		{"unknown host", map[string]any{"command": "true", "host": "web1"}, `unknown host "web1"`},
		{"missing dir", map[string]any{"command": "true", "working_directory": "/no/such"}, `"/no/such" does not exist`},
		{"timeout over max", map[string]any{"command": "true", "timeout": 61}, "exceeds this gateway's maximum of 60s"},
		{"timeout type", map[string]any{"command": "true", "timeout": "10"}, "timeout: got string, want integer"},
		{"bad env name", map[string]any{"command": "true", "environment": map[string]any{"A B": "x"}}, "invalid environment variable name"},
		{"missing program", map[string]any{"argv": []any{"no-such-program-rigout"}}, "executable file not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, c, "execute_command", tt.args)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("result = %v %q, want error containing %q", res.IsError, text(res), tt.want)
			}
		})
	}
}

func TestExecuteCommandTimeoutKillsEverything(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := connect(t, newGateway(t, rigout.Config{}))
	start := time.Now()
	res := callTool(t, c, "execute_command", map[string]any{
		"command": "echo $$ > " + pidFile + "; sh -c 'sleep 100 & sleep 100'",
		"timeout": 1,
	})
	if !res.IsError || !strings.Contains(text(res), "timed out after") {
		t.Fatalf("result = %q", text(res))
	}
	if sc := structured(t, res); sc["timed_out"] != true {
		t.Errorf("structuredContent = %v", sc)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("timeout took %v", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	proctest.WaitGroupGone(t, pgid, 5*time.Second)
}

func TestExecuteCommandCapsOutput(t *testing.T) {
	c := connect(t, newGateway(t, rigout.Config{MaxOutput: 1000}))
	res := callTool(t, c, "execute_command", map[string]any{"command": "seq 1 100000"})
	got := text(res)
	if !strings.Contains(got, "stdout:\n1\n2\n3\n") || !strings.Contains(got, "99999\n100000\n") {
		t.Errorf("head or tail missing:\n%s", got)
	}
	if !strings.Contains(got, "bytes dropped") {
		t.Errorf("no truncation marker:\n%s", got)
	}
	sc := structured(t, res)
	if sc["stdout_bytes"] != float64(588895) || sc["stdout_dropped"] != float64(588895-1000) {
		t.Errorf("counts = %v / %v", sc["stdout_bytes"], sc["stdout_dropped"])
	}
}
