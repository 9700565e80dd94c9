package main

import (
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

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

const chromiumPath = "/usr/bin/chromium"

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

const xss = `<img src=x onerror=alert(1)>`

// TestE2EBrowserActivityPage drives the real binary's /ui/ in headless
// Chromium: sign in with a token, run a command through /mcp, see it
// appear live, open its detail, and prove the XSS payload in its
// arguments is text: no dialog, no injected element. A screenshot is kept.
// Then, over HTTP: no cookie, another principal's cookie and a forged
// Origin are refused.
func TestE2EBrowserActivityPage(t *testing.T) {
	chromium := requireChromium(t)
	mcpURL, _ := startObserved(t)
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
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	var mu sync.Mutex
	var dialogs []string
	dialogEvents := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
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
	res := call(t, c, "execute_command", map[string]any{"command": "echo '" + xss + "'"})
	if !strings.Contains(resultText(res), xss) {
		t.Fatalf("the command did not run: %s", resultText(res))
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

// TestE2EActivityPageExpiry: a sign-in stops working when it expires.
func TestE2EActivityPageExpiry(t *testing.T) {
	mcpURL, _ := startObserved(t, "--ui-session-ttl", "1s")
	base := strings.TrimSuffix(mcpURL, "/mcp")
	cookie := uiLogin(t, base, fullToken)
	if code, body := uiGet(t, base, "/ui/api/me", map[string]string{"Cookie": cookie}); code != 200 {
		t.Fatalf("me: %d %s", code, body)
	}
	time.Sleep(1200 * time.Millisecond)
	if code, body := uiGet(t, base, "/ui/api/me", map[string]string{"Cookie": cookie}); code != 401 {
		t.Errorf("me after expiry: %d %s", code, body)
	}
}
