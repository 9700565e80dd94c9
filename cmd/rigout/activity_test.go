package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The activity page's browser test (headless Chromium, through chromedp) is
// test/browser, a module of its own: its dependency stays out of rigout's
// module graph, and a panic in the browser driver cannot end this suite.

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

// TestE2EActivityPageExpiry: a sign-in stops working when it expires.
func TestE2EActivityPageExpiry(t *testing.T) {
	mcpURL, _ := startObserved(t, "--ui-session-ttl", "1s")
	base := strings.TrimSuffix(mcpURL, "/mcp")
	cookie := uiLogin(t, base, fullToken)
	if code, body := uiGet(t, base, "/ui/api/me", map[string]string{"Cookie": cookie}); code != 200 {
		t.Fatalf("me: %d %s", code, body)
	}
	// The page's "verify chain" reaches the ledger under the gateway's
	// wrappers.
	if code, body := uiGet(t, base, "/ui/api/verify", map[string]string{"Cookie": cookie}); code != 200 || !strings.Contains(body, `"ok":true`) {
		t.Errorf("verify: %d %s", code, body)
	}
	time.Sleep(1200 * time.Millisecond)
	if code, body := uiGet(t, base, "/ui/api/me", map[string]string{"Cookie": cookie}); code != 401 {
		t.Errorf("me after expiry: %d %s", code, body)
	}
}
