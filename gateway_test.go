package rigout_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/shell"
)

func connect(t testing.TB, gw *rigout.Gateway) *client.Client { return rigouttest.Connect(t, gw) }

func newGateway(t *testing.T, cfg rigout.Config) *rigout.Gateway { return rigouttest.New(t, cfg) }

func serveHTTP(t *testing.T, gw *rigout.Gateway) string { return rigouttest.ServeHTTP(t, gw) }

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return rigouttest.Call(t, c, name, args)
}

func text(res *mcp.CallToolResult) string { return rigouttest.Text(res) }

// withShell adds the shell family (execute_command), built from sc, in
// front of cfg's tools.
func withShell(t testing.TB, cfg rigout.Config, sc shell.Config) rigout.Config {
	t.Helper()
	if sc.Local == nil && sc.Hosts == nil {
		sc.Local = &exec.Local{UnsafeNoSandbox: true}
	}
	f, err := shell.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools = append(f.Tools(), cfg.Tools...)
	return cfg
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
	dirA := t.TempDir()
	a := newGateway(t, withShell(t, rigout.Config{Name: "alpha", Tools: []rigout.Tool{echoTool("only_in_a", nil)}}, shell.Config{WorkDir: dirA}))
	b := newGateway(t, rigout.Config{Name: "beta", Tools: []rigout.Tool{echoTool("only_in_b", nil)}})
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
	if got := names(la); got != "execute_command,only_in_a" {
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
	gw := newGateway(t, rigout.Config{})
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
	if _, err := rigout.New(withShell(t, rigout.Config{Tools: []rigout.Tool{{Name: "execute_command", Description: "x", Risk: rigout.Exec, Handler: good.Handler}}}, shell.Config{})); !errors.Is(err, rigout.ErrDuplicateTool) {
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
	gw := newGateway(t, rigout.Config{Tools: []rigout.Tool{echoTool("echo", &calls)}})
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
	gw := newGateway(t, rigout.Config{Middleware: []rigout.Middleware{mw}, Tools: []rigout.Tool{boom, failing, echoTool("echo", nil)}})
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
	c := connect(t, newGateway(t, withShell(t, rigout.Config{}, shell.Config{})))
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

// TestAnnotationsFollowRisk: readOnlyHint always says the tool's class; a
// read-only tool is also idempotent; hints equal to the specification's
// defaults (destructive, not idempotent, open world) are left out.
func TestAnnotationsFollowRisk(t *testing.T) {
	handler := func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
		return rigout.TextResult("ok"), nil
	}
	var tools []rigout.Tool
	for name, risk := range map[string]rigout.Risk{"look": rigout.ReadOnly, "change": rigout.Mutating, "run": rigout.Exec} {
		tools = append(tools, rigout.Tool{Name: name, Description: name, Risk: risk, Handler: handler})
	}
	c := connect(t, newGateway(t, rigout.Config{Tools: tools}))
	l, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"look":   `{"readOnlyHint":true,"idempotentHint":true}`,
		"change": `{"readOnlyHint":false}`,
		"run":    `{"readOnlyHint":false}`,
	}
	for _, tool := range l.Tools {
		b, err := json.Marshal(tool.Annotations)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want[tool.Name] {
			t.Errorf("%s: annotations %s, want %s", tool.Name, b, want[tool.Name])
		}
	}
}

// TestNewReportsTheFirstRefusal checks that New, which compiles its tools
// concurrently, refuses with the error registering them one at a time
// meets first, and composes middleware only for the tools before it, in
// order.
func TestNewReportsTheFirstRefusal(t *testing.T) {
	var tools []rigout.Tool
	for i := range 12 {
		tools = append(tools, echoTool("t"+strconv.Itoa(i), nil))
	}
	tools[9].InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)
	tools[7].Name = "t2" // a duplicate, before the invalid schema
	var wrapped []string
	cfg := rigout.Config{Tools: tools, Middleware: []rigout.Middleware{func(next rigout.Handler) rigout.Handler {
		wrapped = append(wrapped, "x")
		return next
	}}}
	if _, err := rigout.New(cfg); !errors.Is(err, rigout.ErrDuplicateTool) || !strings.Contains(err.Error(), "t2") {
		t.Errorf("New = %v, want the duplicate t2", err)
	}
	if len(wrapped) > 9 {
		t.Errorf("middleware composed for %d tools, want at most the 9 before the invalid one", len(wrapped))
	}
	tools[7].Name = "t7"
	if _, err := rigout.New(rigout.Config{Tools: tools}); err == nil || !strings.Contains(err.Error(), "t9") {
		t.Errorf("New = %v, want t9's schema refused", err)
	}
	tools[9] = echoTool("t9", nil)
	gw, err := rigout.New(rigout.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	var names []string
	for _, tool := range gw.Tools() {
		names = append(names, tool.Name)
	}
	want := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "t11"}
	if !slices.Equal(names, want) {
		t.Errorf("Tools() = %v, want the configuration's order %v", names, want)
	}
}

func TestIsHostArg(t *testing.T) {
	tests := map[string]bool{
		"host": true, "hosts": true, "target_host": true, "backup_hosts": true,
		"ghost": false, "hostname": false, "_host": false, "path": false, "": false,
	}
	for name, want := range tests {
		if got := rigout.IsHostArg(name); got != want {
			t.Errorf("IsHostArg(%q) = %v, want %v", name, got, want)
		}
	}
}
