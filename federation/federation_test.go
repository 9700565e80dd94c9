package federation_test

//lint:file-ignore SA1019 mcp-go marks what protocol 2026-07-28 removed (the GET stream, ping, logging, sampling) deprecated; rigout still serves and tests 2025-11-25 clients, which use them.

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/federation"
	"github.com/rigout/rigout/rigouttest"
)

// stdioServer is a downstream served by a re-executed test binary.
func stdioServer(name, dir string) federation.Server {
	return federation.Server{
		Name:    name,
		Command: []string{os.Args[0], "-test.run=^$"},
		Env:     map[string]string{"FEDTEST_DOWNSTREAM": "stdio", "FEDTEST_DIR": dir},
		Timeout: 5 * time.Second,
	}
}

// start builds a gateway with cfg and starts a federation of servers on it.
func start(t *testing.T, cfg rigout.Config, servers ...federation.Server) (*rigout.Gateway, *federation.Federation) {
	t.Helper()
	gw := rigouttest.New(t, cfg)
	fed, err := federation.New(federation.Config{
		Servers:         servers,
		UnsafeNoSandbox: true,
		Ping:            300 * time.Millisecond,
		MinBackoff:      100 * time.Millisecond,
		Credentials:     federation.EnvCredentials(func(n string) string { return map[string]string{"DOWN_TOKEN": "s3cret-down-token"}[n] }),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fed.Close() })
	for _, s := range fed.Status() {
		if s.State != federation.Ready {
			t.Fatalf("downstream %s: %+v", s.Name, s)
		}
		t.Logf("downstream %s: %s, protocol %s", s.Name, s.Transport, s.Protocol)
	}
	return gw, fed
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	l, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range l.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func has(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// eventually polls cond for up to 10s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNamespacedListingAndCallsOverStdioAndHTTP(t *testing.T) {
	ro := stdioServer("a", t.TempDir())
	ro.ReadOnlyTools = []string{"echo"}
	ro.Deny = []string{"crash"}
	web := federation.Server{Name: "web", URL: serveHTTPDownstream(t, "s3cret-down-token"), Token: "DOWN_TOKEN", Allow: []string{"echo", "progress"}}
	gw, _ := start(t, rigout.Config{}, ro, web)
	c := rigouttest.Connect(t, gw)
	names := toolNames(t, c)
	for _, want := range []string{"a__echo", "a__pid", "a__progress", "web__echo", "web__progress", federation.StatusTool} {
		if !has(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, not := range []string{"a__crash", "web__pid", "echo"} {
		if has(names, not) {
			t.Errorf("tools/list has %s: %v", not, names)
		}
	}
	risks := map[string]rigout.Risk{}
	for _, tl := range gw.Tools() {
		risks[tl.Name] = tl.Risk
		if tl.Name == "a__echo" && tl.Description != "Echo msg." {
			t.Errorf("description not kept: %q", tl.Description)
		}
	}
	// The annotations the risk class does not decide are the downstream's;
	// readOnlyHint follows the risk class, not the downstream's claim.
	l, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range l.Tools {
		if tl.Name != "a__pid" {
			continue
		}
		a := tl.Annotations
		if tl.Title != "Process ID" || *a.ReadOnlyHint || a.DestructiveHint != nil || !*a.IdempotentHint || *a.OpenWorldHint { // destructive: the spec default, left out
			t.Errorf("a__pid: title %q, annotations %+v", tl.Title, a)
		}
	}
	// echo is listed read-only by the config; pid only claims it.
	if risks["a__echo"] != rigout.ReadOnly || risks["a__pid"] != rigout.Exec || risks["web__echo"] != rigout.Exec {
		t.Errorf("risks = %v", risks)
	}
	for _, name := range []string{"a__echo", "web__echo"} {
		res := rigouttest.Call(t, c, name, map[string]any{"msg": "hi"})
		if res.IsError || rigouttest.Text(res) != "echo:hi" {
			t.Errorf("%s: %q", name, rigouttest.Text(res))
		}
	}
	// The schema is kept and enforced by the gateway: msg is required.
	if res := rigouttest.Call(t, c, "a__echo", map[string]any{}); !res.IsError || !strings.Contains(rigouttest.Text(res), "msg") {
		t.Errorf("missing msg: %q", rigouttest.Text(res))
	}
}

func TestProgressPassesThrough(t *testing.T) {
	web := federation.Server{Name: "web", URL: serveHTTPDownstream(t, "s3cret-down-token"), Token: "DOWN_TOKEN"}
	gw, _ := start(t, rigout.Config{}, stdioServer("a", t.TempDir()), web)
	c := rigouttest.Connect(t, gw)
	var mu sync.Mutex
	got := map[string][]string{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			mu.Lock()
			tok, _ := n.Params.AdditionalFields["progressToken"].(string)
			msg, _ := n.Params.AdditionalFields["message"].(string)
			got[tok] = append(got[tok], msg)
			mu.Unlock()
		}
	})
	for _, name := range []string{"a__progress", "web__progress"} {
		var req mcp.CallToolRequest
		req.Params.Name = name
		req.Params.Arguments = map[string]any{"steps": 3}
		req.Params.Meta = &mcp.Meta{ProgressToken: "tok-" + name}
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %q", name, err, rigouttest.Text(res))
		}
		eventually(t, "progress of "+name, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got["tok-"+name]) == 3
		})
		mu.Lock()
		if strings.Join(got["tok-"+name], ",") != "step 1,step 2,step 3" {
			t.Errorf("%s progress = %v", name, got["tok-"+name])
		}
		mu.Unlock()
	}
}

func TestCancellationReachesTheDownstream(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		dir := t.TempDir()
		gw, _ := start(t, rigout.Config{}, stdioServer("a", dir))
		testCancellation(t, gw, "a__wait", dir)
	})
	t.Run("http", func(t *testing.T) {
		dir := t.TempDir()
		web := federation.Server{Name: "web", URL: serveHTTP(t, newDownstreamServer(dir), "s3cret-down-token"), Token: "DOWN_TOKEN"}
		gw, _ := start(t, rigout.Config{}, web)
		testCancellation(t, gw, "web__wait", dir)
	})
}

func testCancellation(t *testing.T, gw *rigout.Gateway, tool, dir string) {
	c := rigouttest.Connect(t, gw)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var req mcp.CallToolRequest
		req.Params.Name = tool
		_, _ = c.CallTool(ctx, req)
	}()
	eventually(t, "the downstream's tool waiting", func() bool {
		_, err := os.Stat(filepath.Join(dir, "waiting"))
		return err == nil
	})
	if _, err := os.Stat(filepath.Join(dir, "cancelled")); err == nil {
		t.Fatal("the downstream saw a cancellation before the caller cancelled")
	}
	cancel()
	<-done
	eventually(t, "the downstream's cancellation marker", func() bool {
		_, err := os.Stat(filepath.Join(dir, "cancelled"))
		return err == nil
	})
}

func TestHangingDownstreamTimesOutAndOthersProceed(t *testing.T) {
	dir := t.TempDir()
	s := stdioServer("a", dir)
	s.Timeout = 2 * time.Second
	gw, _ := start(t, rigout.Config{}, s)
	c := rigouttest.Connect(t, gw)
	hung := make(chan *mcp.CallToolResult, 1)
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "a__hang"
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			res = rigout.ErrorResult("protocol error: %v", err)
		}
		hung <- res
	}()
	eventually(t, "the downstream's hang under way", func() bool {
		_, err := os.Stat(filepath.Join(dir, "hanging"))
		return err == nil
	})
	// While hang is stuck, other calls of the same downstream answer.
	for i := range 3 {
		res := rigouttest.Call(t, c, "a__echo", map[string]any{"msg": "still here"})
		if res.IsError || rigouttest.Text(res) != "echo:still here" {
			t.Fatalf("echo %d during the hang: %q", i, rigouttest.Text(res))
		}
		select {
		case r := <-hung:
			t.Fatalf("hang answered before the echo calls finished: %q", rigouttest.Text(r))
		default:
		}
	}
	res := <-hung
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "timed out: downstream a did not answer within 2s") {
		t.Errorf("hang = %q", rigouttest.Text(res))
	}
}

func TestCrashMidCallRestarts(t *testing.T) {
	gw, fed := start(t, rigout.Config{}, stdioServer("a", t.TempDir()))
	c := rigouttest.Connect(t, gw)
	pid1 := rigouttest.Text(rigouttest.Call(t, c, "a__pid", nil))
	res := rigouttest.Call(t, c, "a__crash", nil)
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "the connection to downstream a closed during the call") {
		t.Fatalf("crash = %q", rigouttest.Text(res))
	}
	var pid2 string
	eventually(t, "the restarted downstream", func() bool {
		r := rigouttest.Call(t, c, "a__pid", nil)
		pid2 = rigouttest.Text(r)
		return !r.IsError
	})
	if pid2 == pid1 {
		t.Errorf("the same process answered after the crash: %s", pid1)
	}
	st := fed.Status()[0]
	if st.Restarts < 1 || st.State != federation.Ready {
		t.Errorf("status after restart = %+v", st)
	}
}

func TestToolListChangeReachesClients(t *testing.T) {
	web := federation.Server{Name: "web", URL: serveHTTPDownstream(t, "s3cret-down-token"), Token: "DOWN_TOKEN"}
	gw, _ := start(t, rigout.Config{}, stdioServer("a", t.TempDir()), web)
	// A real HTTP client of the gateway, listening for notifications.
	getOpen := make(chan struct{})
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
			once.Do(func() { close(getOpen) })
		}
		return resp, err
	})}
	c, err := client.NewStreamableHttpClient(rigouttest.ServeHTTP(t, gw), transport.WithContinuousListening(), transport.WithHTTPBasicClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed <- struct{}{}
		}
	})
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	if has(toolNames(t, c), "a__extra") {
		t.Fatal("a__extra listed before grow")
	}
	<-getOpen // the GET stream is open
	for len(changed) > 0 {
		<-changed
	}
	if res := rigouttest.Call(t, c, "a__grow", nil); res.IsError {
		t.Fatal(rigouttest.Text(res))
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed reached the client")
	}
	eventually(t, "a__extra in tools/list", func() bool { return has(toolNames(t, c), "a__extra") })
	if res := rigouttest.Call(t, c, "a__extra", nil); res.IsError || rigouttest.Text(res) != "extra" {
		t.Errorf("a__extra = %q", rigouttest.Text(res))
	}
	// Over HTTP the downstream's notification arrives on its GET stream
	// (the timer refresh is 5 minutes, beyond this test).
	if has(toolNames(t, c), "web__extra") {
		t.Fatal("web__extra listed before grow")
	}
	if res := rigouttest.Call(t, c, "web__grow", nil); res.IsError {
		t.Fatal(rigouttest.Text(res))
	}
	eventually(t, "web__extra in tools/list", func() bool { return has(toolNames(t, c), "web__extra") })
}

func TestScopedTokenReachesOnlyItsTool(t *testing.T) {
	l := rigouttest.OpenLedger(t)
	p := auth.Principal{Name: "narrow", Scopes: auth.Scopes{Tools: []string{"a__echo"}, Hosts: []string{"*"}}}
	gw, _ := start(t, rigout.Config{Audit: l, Principal: &p}, stdioServer("a", t.TempDir()))
	c := rigouttest.Connect(t, gw)
	if res := rigouttest.Call(t, c, "a__echo", map[string]any{"msg": "x"}); res.IsError {
		t.Fatalf("a__echo: %q", rigouttest.Text(res))
	}
	res := rigouttest.Call(t, c, "a__pid", nil)
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "missing scope") {
		t.Errorf("a__pid with a token scoped to a__echo: %q", rigouttest.Text(res))
	}
	rows := rigouttest.Events(t, l, audit.Filter{Tool: "a__echo"})
	phases := map[audit.Phase]bool{}
	for _, r := range rows {
		phases[r.Phase] = true
	}
	if !phases[audit.PhaseIntent] || !phases[audit.PhaseDone] {
		t.Errorf("a__echo rows = %+v", rows)
	}
	if denied := rigouttest.Events(t, l, audit.Filter{Type: audit.TypeToolDenied}); len(denied) != 1 || denied[0].Tool != "a__pid" {
		t.Errorf("denied rows = %+v", denied)
	}
}

func TestLyingDownstreamIsReportedNotFatal(t *testing.T) {
	liar := federation.Server{Name: "liar", Command: []string{os.Args[0], "-test.run=^$"}, Env: map[string]string{"FEDTEST_DOWNSTREAM": "liar"}}
	gw := rigouttest.New(t, rigout.Config{})
	fed, err := federation.New(federation.Config{Servers: []federation.Server{liar, stdioServer("a", t.TempDir())}, MaxTools: 50, UnsafeNoSandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fed.Close() })
	st := fed.Status()[0]
	if st.State != federation.Ready || st.Tools != 48 {
		t.Errorf("liar status = %+v", st)
	}
	joined := strings.Join(st.Problems, "\n")
	for _, want := range []string{`"ok" is listed twice`, "tools over the limit of 50", `liar__str`, `liar__bad name!`} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
	c := rigouttest.Connect(t, gw)
	names := toolNames(t, c)
	if !has(names, "liar__ok") || !has(names, "a__echo") || has(names, "liar__str") {
		t.Errorf("tools/list = %v", names)
	}
	res := rigouttest.Call(t, c, federation.StatusTool, nil)
	if res.IsError || !strings.Contains(rigouttest.Text(res), "listed twice") {
		t.Errorf("%s = %q", federation.StatusTool, rigouttest.Text(res))
	}
	for _, tl := range gw.Tools() {
		if tl.Name == federation.StatusTool && !strings.Contains(tl.Description, "liar: ready, 48 tools, ") {
			t.Errorf("status description = %q", tl.Description)
		}
	}
}

// answerer is a person at the client who answers every question with a
// word, and counts the questions.
type answerer struct {
	mu   sync.Mutex
	msgs []string
}

func (a *answerer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	a.msgs = append(a.msgs, req.Params.Message)
	a.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"word": "plum"}}}, nil
}

func TestElicitationPassesThrough(t *testing.T) {
	web := federation.Server{Name: "web", URL: serveHTTPDownstream(t, "s3cret-down-token"), Token: "DOWN_TOKEN"}
	gw, _ := start(t, rigout.Config{}, stdioServer("a", t.TempDir()), web)
	for _, era := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		for _, tool := range []string{"a__ask", "web__ask"} {
			t.Run(era+"/"+tool, func(t *testing.T) {
				person := &answerer{}
				c, err := client.NewInProcessClientWithOptions(gw.MCPServer(), client.WithElicitationHandler(person))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				ctx := context.Background()
				if err := c.Start(ctx); err != nil {
					t.Fatal(err)
				}
				var init mcp.InitializeRequest
				init.Params.ProtocolVersion = era
				init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
				init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{}
				if _, err := c.Initialize(ctx, init); err != nil {
					t.Fatal(err)
				}
				res := rigouttest.Call(t, c, tool, nil)
				if res.IsError || rigouttest.Text(res) != "accept:plum" {
					t.Errorf("%s = %q", tool, rigouttest.Text(res))
				}
				person.mu.Lock()
				defer person.mu.Unlock()
				if len(person.msgs) != 1 || person.msgs[0] != "Which word?" {
					t.Errorf("questions = %q", person.msgs)
				}
			})
		}
	}
}

func TestTimerRefreshFindsSilentChanges(t *testing.T) {
	// A downstream that changes its tools and says nothing.
	quiet := server.NewMCPServer("quiet", "1", server.WithToolCapabilities(false))
	quiet.AddTool(mcp.NewTool("first", mcp.WithDescription("First.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("1"), nil
		})
	gw := rigouttest.New(t, rigout.Config{})
	fed, err := federation.New(federation.Config{
		Servers:     []federation.Server{{Name: "q", URL: serveHTTP(t, quiet, "tok-quiet-12345"), Token: "T"}},
		Credentials: federation.EnvCredentials(func(string) string { return "tok-quiet-12345" }),
		Refresh:     200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fed.Close() })
	c := rigouttest.Connect(t, gw)
	if names := toolNames(t, c); !has(names, "q__first") || has(names, "q__late") {
		t.Fatalf("tools/list = %v", names)
	}
	quiet.AddTool(mcp.NewTool("late", mcp.WithDescription("Late.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("2"), nil
		})
	quiet.DeleteTools("first")
	eventually(t, "the timer refresh", func() bool {
		names := toolNames(t, c)
		return has(names, "q__late") && !has(names, "q__first")
	})
}

func TestWrongDownstreamTokenIsReported(t *testing.T) {
	gw := rigouttest.New(t, rigout.Config{})
	fed, err := federation.New(federation.Config{
		Servers:        []federation.Server{{Name: "web", URL: serveHTTPDownstream(t, "the-right-token"), Token: "T"}},
		Credentials:    federation.EnvCredentials(func(string) string { return "a-wrong-token" }),
		ConnectTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fed.Close() })
	st := fed.Status()[0]
	if st.State == federation.Ready || st.LastError == "" || strings.Contains(st.LastError, "a-wrong-token") {
		t.Errorf("status = %+v", st)
	}
	if h := fed.Health(); h["ok"] != false {
		t.Errorf("health = %v", h)
	}
	// The gateway serves on: its status tool answers.
	c := rigouttest.Connect(t, gw)
	if res := rigouttest.Call(t, c, federation.StatusTool, nil); res.IsError || !strings.Contains(rigouttest.Text(res), `"state": "down"`) {
		t.Errorf("%s = %q", federation.StatusTool, rigouttest.Text(res))
	}
}

func TestFrozenDownstreamIsRestarted(t *testing.T) {
	gw, fed := start(t, rigout.Config{}, stdioServer("a", t.TempDir()))
	c := rigouttest.Connect(t, gw)
	pid1 := rigouttest.Text(rigouttest.Call(t, c, "a__pid", nil))
	// The downstream stops itself (SIGSTOP) mid-call: it answers nothing,
	// pings included, until the gateway kills and restarts it.
	res := rigouttest.Call(t, c, "a__freeze", nil)
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "closed during the call") {
		t.Fatalf("freeze = %q", rigouttest.Text(res))
	}
	eventually(t, "the restarted downstream", func() bool {
		r := rigouttest.Call(t, c, "a__pid", nil)
		return !r.IsError && rigouttest.Text(r) != pid1
	})
	if st := fed.Status()[0]; st.Restarts < 1 || !strings.Contains(st.LastError, "ping") {
		t.Errorf("status = %+v", st)
	}
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
