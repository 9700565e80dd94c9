package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/ui"
)

const (
	fullTok   = "full-token-0123456789abcdef0123"
	narrowTok = "narrow-token-0123456789abcdef01"
)

// clock is a settable time source, to expire sessions without waiting.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	url    string
	ledger *sqlite.Ledger
	clock  *clock
	crowd  []string // tokens of eight more principals, crowd0…crowd7
}

// newFixture serves the page behind a real auth.Front (Guard and bearer
// tokens) on a loopback listener, over a real SQLite ledger holding a
// call of each principal.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db"), StoreArgs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for _, e := range []audit.Event{
		{Type: audit.TypeToolCall, CallID: "call-full", Principal: "full", Tool: "execute_command", Status: audit.StatusOK, Args: `{"command":"echo full"}`},
		{Type: audit.TypeToolCall, CallID: "call-narrow", Principal: "narrow", Tool: "execute_command", Status: audit.StatusOK},
		{Type: audit.TypeToolDenied, CallID: "call-denied", Principal: "narrow", Tool: "execute_command", Status: audit.StatusDenied, Rule: "rm-root"},
	} {
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	tokens := []auth.Token{
		{Name: "full", Secret: auth.NewSecret(fullTok), Scopes: auth.FullScopes()},
		{Name: "narrow", Secret: auth.NewSecret(narrowTok), Scopes: auth.Scopes{Tools: []string{"execute_command"}, Hosts: []string{"*"}}},
	}
	var crowd []string
	for i := range 8 {
		tok := fmt.Sprintf("crowd-token-%d-0123456789abcdef0123456789", i)
		crowd = append(crowd, tok)
		tokens = append(tokens, auth.Token{Name: fmt.Sprintf("crowd%d", i), Secret: auth.NewSecret(tok), Scopes: auth.Scopes{Tools: []string{"*"}}})
	}
	front, err := auth.New(auth.Config{
		Listener:    ln.Addr().String(),
		ResourceURL: base + "/mcp",
		Tokens:      tokens,
	})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	page, err := ui.New(ui.Config{Ledger: l, Authenticate: front.RequireBearer, Now: clk.Now, Poll: 10 * time.Millisecond,
		SessionTTL: time.Hour, Verify: func(ctx context.Context) (any, error) { return l.Verify(ctx) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(front.Guard(page))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &fixture{url: base, ledger: l, clock: clk, crowd: crowd}
}

func (f *fixture) do(t *testing.T, method, path string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, f.url+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// login signs in with token and returns the session cookie.
func (f *fixture) login(t *testing.T, token string) string {
	t.Helper()
	resp, body := f.do(t, "POST", "/ui/login", map[string]string{"Authorization": "Bearer " + token, "Origin": f.url})
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == ui.CookieName {
			return ui.CookieName + "=" + c.Value
		}
	}
	t.Fatal("no session cookie")
	return ""
}

func TestCookieAttributes(t *testing.T) {
	f := newFixture(t)
	resp, _ := f.do(t, "POST", "/ui/login", map[string]string{"Authorization": "Bearer " + fullTok, "Origin": f.url})
	sc := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/ui/", "Max-Age=3600", "Expires="} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
	if strings.Contains(sc, "Secure") {
		t.Errorf("Set-Cookie %q is Secure over plain HTTP on loopback", sc)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
}

func TestSignInRefusals(t *testing.T) {
	f := newFixture(t)
	cookie := f.login(t, narrowTok)
	for _, tt := range []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"events without a cookie", "GET", "/ui/api/events", nil, 401},
		{"stream without a cookie", "GET", "/ui/api/stream", map[string]string{"Sec-Fetch-Site": "same-origin"}, 401},
		{"events with a made-up cookie", "GET", "/ui/api/events", map[string]string{"Cookie": ui.CookieName + "=forged"}, 401},
		{"login with a wrong token", "POST", "/ui/login", map[string]string{"Authorization": "Bearer wrong-0123456789abcdef0123456", "Origin": f.url}, 401},
		{"login without Origin", "POST", "/ui/login", map[string]string{"Authorization": "Bearer " + fullTok}, 403},
		{"login from a forged Origin", "POST", "/ui/login", map[string]string{"Authorization": "Bearer " + fullTok, "Origin": "http://evil.example"}, 403},
		{"stream from a forged Origin", "GET", "/ui/api/stream", map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}, 403},
		{"stream from another site", "GET", "/ui/api/stream", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "cross-site"}, 403},
		{"stream with neither", "GET", "/ui/api/stream", map[string]string{"Cookie": cookie}, 403},
		{"logout from a forged Origin", "POST", "/ui/logout", map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}, 403},
		{"another principal's call", "GET", "/ui/api/call?id=call-full", map[string]string{"Cookie": cookie}, 404},
		{"own call", "GET", "/ui/api/call?id=call-narrow", map[string]string{"Cookie": cookie}, 200},
	} {
		resp, body := f.do(t, tt.method, tt.path, tt.hdr)
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d: %s", tt.name, resp.StatusCode, tt.want, body)
		}
		if tt.want == 403 && strings.Contains(body, "call-") {
			t.Errorf("%s: refusal leaks events: %s", tt.name, body)
		}
	}
}

func rows(t *testing.T, body string) []ui.Row {
	t.Helper()
	var rs []ui.Row
	if err := json.Unmarshal([]byte(body), &rs); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return rs
}

// TestNarrowSeesOwnCalls: a narrow principal's events are its own; the
// full one sees every call, with arguments in the detail.
func TestNarrowSeesOwnCalls(t *testing.T) {
	f := newFixture(t)
	_, body := f.do(t, "GET", "/ui/api/events", map[string]string{"Cookie": f.login(t, narrowTok)})
	got := rows(t, body)
	if len(got) != 2 {
		t.Fatalf("narrow sees %d events, want its 2: %s", len(got), body)
	}
	for _, r := range got {
		if r.Principal != "narrow" {
			t.Errorf("narrow sees %+v", r)
		}
	}
	if !got[1].Refused || got[1].Rule != "rm-root" {
		t.Errorf("the denial is not marked refused with its rule: %+v", got[1])
	}
	full := f.login(t, fullTok)
	_, body = f.do(t, "GET", "/ui/api/events", map[string]string{"Cookie": full})
	if n := len(rows(t, body)); n != 3 {
		t.Errorf("full sees %d events, want 3", n)
	}
	_, body = f.do(t, "GET", "/ui/api/call?id=call-full", map[string]string{"Cookie": full})
	if !strings.Contains(body, `echo full`) {
		t.Errorf("detail lacks the stored arguments: %s", body)
	}
	resp, body := f.do(t, "GET", "/ui/api/verify", map[string]string{"Cookie": full})
	if resp.StatusCode != 200 || !strings.Contains(body, `"ok":true`) || !strings.Contains(body, `"rows":3`) {
		t.Errorf("verify: %d %s", resp.StatusCode, body)
	}
}

// TestExpiry: a session stops working when it expires, on every endpoint,
// and an open stream ends.
func TestExpiry(t *testing.T) {
	f := newFixture(t)
	cookie := f.login(t, fullTok)
	if resp, _ := f.do(t, "GET", "/ui/api/me", map[string]string{"Cookie": cookie}); resp.StatusCode != 200 {
		t.Fatalf("me: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", f.url+"/ui/api/stream", nil)
	req.Header.Set("Cookie", cookie)
	req.Header.Set("Origin", f.url)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before the backlog: %v", err)
		}
		if line == "id: 3\n" {
			break
		}
	}
	f.clock.Add(time.Hour + time.Second)
	b, err := io.ReadAll(br) // the stream must end by itself
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "event: expired") {
		t.Errorf("stream after expiry: %s", b)
	}
	for _, p := range []string{"/ui/api/me", "/ui/api/events", "/ui/api/state", "/ui/api/call?id=call-full"} {
		if resp, body := f.do(t, "GET", p, map[string]string{"Cookie": cookie}); resp.StatusCode != 401 {
			t.Errorf("%s after expiry: %d %s", p, resp.StatusCode, body)
		}
	}
}

// TestLogout: a signed-out cookie no longer works.
func TestLogout(t *testing.T) {
	f := newFixture(t)
	cookie := f.login(t, fullTok)
	if resp, _ := f.do(t, "POST", "/ui/logout", map[string]string{"Cookie": cookie, "Origin": f.url}); resp.StatusCode != 204 {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if resp, _ := f.do(t, "GET", "/ui/api/me", map[string]string{"Cookie": cookie}); resp.StatusCode != 401 {
		t.Errorf("me after logout: %d", resp.StatusCode)
	}
}

// TestStaticHasNoInlineScript: the page's HTML carries no inline script
// or handler, and the script never assigns HTML.
func TestStaticHasNoInlineScript(t *testing.T) {
	f := newFixture(t)
	_, html := f.do(t, "GET", "/ui/", nil)
	if !strings.Contains(html, `<script src="app.js" defer></script>`) {
		t.Fatalf("page: %.300s", html)
	}
	for _, bad := range []string{"onclick", "onload", "onerror", "javascript:", "<script>", "style="} {
		if strings.Contains(html, bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	_, js := f.do(t, "GET", "/ui/app.js", nil)
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(js, bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
}

// TestStreamCap: past MaxStreamsPerPrincipal open streams, a principal's
// next is refused with 429 while another principal still gets one; past
// MaxStreams in all, another is refused with 503, and one closing lets the
// next in.
func TestStreamCap(t *testing.T) {
	f := newFixture(t)
	open := func(cookie string) *http.Response {
		req, _ := http.NewRequest("GET", f.url+"/ui/api/stream", nil)
		req.Header.Set("Cookie", cookie)
		req.Header.Set("Origin", f.url)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var streams []*http.Response
	defer func() {
		for _, r := range streams {
			r.Body.Close()
		}
	}()
	full := f.login(t, fullTok)
	for range ui.MaxStreamsPerPrincipal {
		r := open(full)
		if r.StatusCode != 200 {
			t.Fatalf("stream %d: %d", len(streams), r.StatusCode)
		}
		streams = append(streams, r)
	}
	r := open(full)
	r.Body.Close()
	if r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a principal's stream past its cap: %d, want 429", r.StatusCode)
	}
	cookies := []string{f.login(t, narrowTok)}
	for _, tok := range f.crowd {
		cookies = append(cookies, f.login(t, tok))
	}
	spare := cookies[len(cookies)-1] // the crowd is large enough that this one opens none
	for _, c := range cookies[:len(cookies)-1] {
		for range ui.MaxStreamsPerPrincipal {
			if len(streams) == ui.MaxStreams {
				break
			}
			r := open(c)
			if r.StatusCode != 200 {
				t.Fatalf("stream %d of another principal: %d", len(streams), r.StatusCode)
			}
			streams = append(streams, r)
		}
	}
	if len(streams) != ui.MaxStreams {
		t.Fatalf("%d streams open, want %d", len(streams), ui.MaxStreams)
	}
	r = open(spare)
	r.Body.Close()
	if r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("stream past the cap: %d, want 503", r.StatusCode)
	}
	streams[len(streams)-1].Body.Close()
	streams = streams[:len(streams)-1]
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := open(spare)
		if r.StatusCode == 200 {
			streams = append(streams, r)
			break
		}
		r.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream never freed its slot: %d", r.StatusCode)
		}
	}
}

// TestSignInsCappedPerPrincipal signs one principal in 40 times: its
// oldest sign-ins lapse, while another principal's stays valid.
func TestSignInsCappedPerPrincipal(t *testing.T) {
	f := newFixture(t)
	events := func(cookie string) int {
		resp, _ := f.do(t, "GET", "/ui/api/events", map[string]string{"Cookie": cookie, "Origin": f.url})
		return resp.StatusCode
	}
	narrow := f.login(t, narrowTok)
	var flood []string
	for range 40 {
		flood = append(flood, f.login(t, fullTok))
	}
	if s := events(narrow); s != 200 {
		t.Errorf("another principal's sign-in after 40 of full's: %d, want 200", s)
	}
	if s := events(flood[0]); s != 401 {
		t.Errorf("full's oldest sign-in: %d, want 401 (dropped by its own cap)", s)
	}
	if s := events(flood[39]); s != 200 {
		t.Errorf("full's newest sign-in: %d", s)
	}
}

// TestPageShowsControlCharactersEscaped: every text the script shows goes
// through visible(), and visible() (run in node, where it is installed)
// turns control characters and bidirectional overrides into escapes.
func TestPageShowsControlCharactersEscaped(t *testing.T) {
	f := newFixture(t)
	_, js := f.do(t, "GET", "/ui/app.js", nil)
	literal := regexp.MustCompile(`textContent = "[^"]*";`)
	for i, line := range strings.Split(js, "\n") {
		if strings.Contains(line, "textContent =") && !strings.Contains(line, "visible(") && !literal.MatchString(line) {
			t.Errorf("app.js:%d shows text without visible(): %s", i+1, strings.TrimSpace(line))
		}
	}
	node, err := osexec.LookPath("node")
	if err != nil {
		t.Skip("SKIP: node is not installed; visible() itself is unchecked")
	}
	start := strings.Index(js, "function visible(")
	end := strings.Index(js[start:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("app.js has no visible() function")
	}
	script := js[start:start+end+3] + `
const cases = [["a\u001b[2Jb", false], ["x\ny", false], ["x\ny", true], ["c1\u009bz", false], ["\u202eexe", false], ["tool_name", false]];
console.log(JSON.stringify(cases.map(([s, k]) => visible(s, k))));`
	out, err := osexec.Command(node, "-e", script).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q", out)
	}
	want := []string{`a\x1b[2Jb`, `x\x0ay`, "x\ny", `c1\x9bz`, `\u202eexe`, "tool_name"}
	if !slices.Equal(got, want) {
		t.Errorf("visible() = %q, want %q", got, want)
	}
}
