package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

const chromiumPath = "/usr/bin/chromium"

// The tokens of the three principals, as cmd/rigout's observed tests name
// them: the full default one, one limited to execute_command, and one with
// the metrics scope only.
const (
	fullToken    = "full-token-0123456789abcdef0123"
	narrowToken  = "narrow-token-0123456789abcdef01"
	metricsToken = "metrics-token-0123456789abcdef0"
)

const xss = `<img src=x onerror=alert(1)>`

var listenRE = regexp.MustCompile(`listening on (http://\S+)`)

// requireChromium returns the browser's path, or skips loudly (fails under
// RIGOUT_REQUIRE_CHROMIUM=1, which CI sets).
func requireChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("RIGOUT_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("RIGOUT_REQUIRE_CHROMIUM=1 but %s is missing (apt-get install chromium): %v", chromiumPath, err)
		}
		t.Skipf("SKIP: %s is missing (apt-get install chromium); the activity page is untested in a browser", chromiumPath)
	}
	return chromiumPath
}

// buildRigout builds cmd/rigout from the repository root, two levels up
// from this directory, into the test's temporary directory.
func buildRigout(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/rigout/rigout\n") {
		t.Fatalf("%s is not rigout's repository root (go.mod: %v)", root, err)
	}
	bin := filepath.Join(t.TempDir(), "rigout")
	cmd := osexec.Command("go", "build", "-o", bin, "./cmd/rigout")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/rigout in %s: %v\n%s", root, err, out)
	}
	return bin
}

// startObserved runs `rigout serve` on a free loopback port with three
// tokens (full default, narrow, metrics) and stored arguments, as
// cmd/rigout's startObserved does, and returns its /mcp URL. The server is
// stopped by its PID when the test ends: SIGTERM, then SIGKILL after 15 s.
func startObserved(t *testing.T) string {
	t.Helper()
	bin := buildRigout(t)
	stateDir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"tokens": [
		{"name": "narrow", "env": "T_NARROW", "scopes": {"tools": ["execute_command"], "hosts": ["*"]}},
		{"name": "prom", "env": "T_PROM", "scopes": {"metrics": true}}
	], "audit": {"store_args": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(),
		// The calls run in views whose /tmp is private; the test's own
		// temporary directories are work areas (cmd/rigout's TestMain).
		"RIGOUT_WORK_AREAS="+os.TempDir(),
		"RIGOUT_STATE_DIR="+stateDir, "RIGOUT_AUTH_TOKEN="+fullToken,
		"T_NARROW="+narrowToken, "T_PROM="+metricsToken, "RIGOUT_CONFIG="+cfg)
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
			t.Errorf("rigout serve (pid %d) ignored SIGTERM for 15 s; killing it", cmd.Process.Pid)
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
		return url
	case <-time.After(15 * time.Second):
		t.Fatal("rigout serve did not start listening")
	}
	return ""
}

// mcpClient connects a streamable HTTP client with the token and the
// latest protocol version.
func mcpClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, mcptransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "rigout-browser-test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// call calls a tool and returns the text of its result.
func call(t *testing.T, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var sb strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// artifactDir is where the screenshot is kept: $RIGOUT_ARTIFACT_DIR, else
// a fresh directory under the system's temp dir that outlives the test.
func artifactDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("RIGOUT_ARTIFACT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d, err := os.MkdirTemp("", "rigout-ui-artifacts-")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// uiLogin signs in over HTTP and returns the cookie header value.
func uiLogin(t *testing.T, base, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/ui/login", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Origin", base)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "rigout_ui" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("login with %.6s…: %s, no cookie", token, resp.Status)
	return ""
}

func uiGet(t *testing.T, base, path string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	// A stream wrongly let in never ends; the timeout cuts it.
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestE2EBrowserActivityPage drives the real binary's /ui/ in headless
// Chromium: sign in with a token, run a command through /mcp, see it
// appear live, open its detail, and prove the XSS payload in its
// arguments is text: no dialog, no injected element. A screenshot is kept.
// Then, over HTTP: no cookie, another principal's cookie and a forged
// Origin are refused.
func TestE2EBrowserActivityPage(t *testing.T) {
	chromium := requireChromium(t)
	mcpURL := startObserved(t)
	base := strings.TrimSuffix(mcpURL, "/mcp")

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	// Start the browser and open its tab on the browser's own context, so
	// that the browser lives as long as bctx. (Started from the timeout
	// context below, its end would race the browser context's teardown.)
	if err := chromedp.Do(bctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start %s: %v", chromium, err)
	}
	ctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)

	var mu sync.Mutex
	var dialogs []string
	dialogEvents := chromedp.Events(ctx, page.JavascriptDialogOpening)
	dialogsDone := make(chan struct{})
	go func() {
		defer close(dialogsDone)
		for ev, err := range dialogEvents {
			if err != nil {
				return
			}
			mu.Lock()
			dialogs = append(dialogs, ev.Message)
			mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	// Inner first: the timeout context (it ends the dialog subscription and
	// any action), then, once no call is in flight, the tab and browser,
	// then the allocator.
	defer func() {
		cancelTimeout()
		<-dialogsDone
		cancelBrowser()
		cancelAlloc()
	}()
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second))
	}

	// Sign in by pasting the full token.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), fullToken),
		chromedp.Click(chromedp.CSS(`#signin-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("app")),
		poll(`document.getElementById("live").textContent === "live"`),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	if who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who"))); err != nil || !strings.Contains(who, "default") {
		t.Fatalf("signed in as %q (%v), want default", who, err)
	}

	// A command through the MCP endpoint, while the page is open.
	c := mcpClient(t, mcpURL, fullToken)
	if out := call(t, c, "execute_command", map[string]any{"command": "echo '" + xss + "'"}); !strings.Contains(out, xss) {
		t.Fatalf("the command did not run: %s", out)
	}
	narrow := mcpClient(t, mcpURL, narrowToken)
	call(t, narrow, "get_server_activity", nil) // refused: out of the narrow token's scope

	// It appears live: the stream brings its row, and the refusal's.
	if err := chromedp.Do(ctx,
		poll(`[...document.querySelectorAll("#rows tr")].some(tr => tr.dataset.tool === "execute_command" && tr.dataset.status === "ok")`),
		poll(`[...document.querySelectorAll("#rows tr.refused")].some(tr => tr.dataset.tool === "get_server_activity")`),
	); err != nil {
		t.Fatalf("the call did not appear live: %v", err)
	}
	// Its row shows the command that ran, as text, and its status in words.
	ranJS := `(() => { const tr = document.querySelector('#rows tr.call[data-tool="execute_command"]');
		const td = tr && tr.querySelector("td.ran"); return td ? td.textContent : ""; })()`
	if err := chromedp.Do(ctx, poll(ranJS+`.includes("echo")`)); err != nil {
		t.Fatalf("the row does not show the command: %v", err)
	}
	if ran, err := chromedp.Run(ctx, chromedp.Evaluate[string](ranJS)); err != nil || !strings.Contains(ran, xss) {
		t.Errorf("the row's command is %q (%v), want the command as text", ran, err)
	}
	// Its detail opens in place, under the row, as labelled fields (not
	// JSON), with the stored, redacted arguments as text.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#rows tr.call[data-tool="execute_command"]`)),
		chromedp.WaitVisible(chromedp.ID("detail")),
		// The arguments arrived: as text, or (the failure) as markup.
		poll(`document.getElementById("detail-body").textContent.includes("echo") || document.querySelector("#detail img") !== null`),
	); err != nil {
		t.Fatalf("detail: %v", err)
	}
	detail, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("detail-body")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(detail, xss) {
		t.Errorf("the detail does not show the command as text:\n%s", detail)
	}
	if strings.Contains(detail, `{"`) || strings.Contains(detail, `\"`) {
		t.Errorf("the detail is escaped JSON, not fields:\n%s", detail)
	}
	inPlace, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const tr = document.querySelector('#rows tr.call[data-tool="execute_command"]');
		const d = document.getElementById("detail");
		if (!tr.nextElementSibling || !tr.nextElementSibling.contains(d)) return "not the next row";
		const gap = d.getBoundingClientRect().top - tr.getBoundingClientRect().bottom;
		if (gap < 0 || gap > 60) return "opens " + gap + " px from its row";
		return document.querySelectorAll("#detail dt").length > 3 ? "ok" : "no labelled fields";
	})()`))
	if err != nil || inPlace != "ok" {
		t.Errorf("the detail does not open in place: %s (%v)", inPlace, err)
	}
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("img, [onerror]").length`))
	if err != nil || injected != 0 {
		t.Errorf("the payload became markup: %d elements (%v)", injected, err)
	}
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(artifactDir(t), "activity-page.png")
	if err := os.WriteFile(shot, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the activity page: %s (%d bytes)", shot, len(buf))
	// An alert would have opened a dialog by now; make sure the page is
	// still answering (a dialog blocks it) and none was seen.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		t.Errorf("the page stopped answering: %v", err)
	}
	mu.Lock()
	if len(dialogs) != 0 {
		t.Errorf("a JavaScript dialog opened: %q", dialogs)
	}
	mu.Unlock()

	// Without a cookie, with another principal's, from a forged Origin.
	if code, body := uiGet(t, base, "/ui/api/events", nil); code != 401 {
		t.Errorf("events without a cookie: %d %s", code, body)
	}
	full := uiLogin(t, base, fullToken)
	_, body := uiGet(t, base, "/ui/api/events", map[string]string{"Cookie": full})
	var all []map[string]any
	if err := json.Unmarshal([]byte(body), &all); err != nil {
		t.Fatalf("events: %v %s", err, body)
	}
	fullCall := ""
	for _, r := range all {
		if r["principal"] == "default" && r["tool"] == "execute_command" {
			fullCall, _ = r["call_id"].(string)
		}
	}
	if fullCall == "" {
		t.Fatalf("no execute_command call of default in %s", body)
	}
	nc := uiLogin(t, base, narrowToken)
	if code, body := uiGet(t, base, "/ui/api/call?id="+fullCall, map[string]string{"Cookie": nc}); code != 404 || strings.Contains(body, "onerror") {
		t.Errorf("the narrow principal's cookie reads default's call: %d %s", code, body)
	}
	if _, body := uiGet(t, base, "/ui/api/events", map[string]string{"Cookie": nc}); strings.Contains(body, `"principal":"default"`) || !strings.Contains(body, `"principal":"narrow"`) {
		t.Errorf("the narrow principal's events: %s", body)
	}
	if code, body := uiGet(t, base, "/ui/api/stream", map[string]string{"Cookie": full, "Origin": "http://evil.example"}); code != 403 {
		t.Errorf("stream from a forged Origin: %d %.200s", code, body)
	}
	if code, body := uiGet(t, base, "/ui/api/stream", map[string]string{"Cookie": full, "Origin": "http://localhost.evil.example:1"}); code != 403 {
		t.Errorf("stream from a look-alike Origin: %d %.200s", code, body)
	}
}
