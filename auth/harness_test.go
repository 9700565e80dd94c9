package auth_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rigout/rigout/auth"
)

// leaks collects, for the whole test binary, every credential value the
// suite issues and every text that must never contain one: all log output
// of every Front built by the tests, every event, every error text and
// every error response. TestMain scans them after the run.
var leaks = &leakSink{}

type leakSink struct {
	mu      sync.Mutex
	secrets map[string]bool
	texts   bytes.Buffer
}

// secret registers a credential value issued in the suite.
func (l *leakSink) secret(v string) {
	if v == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.secrets == nil {
		l.secrets = map[string]bool{}
	}
	l.secrets[v] = true
}

// text registers text that must not hold a credential.
func (l *leakSink) text(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.texts.WriteString(s)
	l.texts.WriteByte('\n')
}

func (l *leakSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.texts.Write(p)
}

// scan reports every registered secret found in the collected texts.
func (l *leakSink) scan() (found []string, nSecrets, nBytes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	all := l.texts.String()
	for s := range l.secrets {
		if i := strings.Index(all, s); i >= 0 {
			// Report where, with the value itself masked.
			lo, hi := max(0, i-80), min(len(all), i+len(s)+40)
			found = append(found, strings.ReplaceAll(all[lo:hi], s, "<SECRET>"))
		}
	}
	return found, len(l.secrets), len(all)
}

// TestMain runs the suite, then checks that no credential issued in it
// reached a log line, an event, an error text or an error response.
func TestMain(m *testing.M) {
	code := m.Run()
	found, n, size := leaks.scan()
	switch {
	case len(found) > 0:
		fmt.Fprintf(os.Stderr, "FAIL: %d credential value(s) issued by the suite appear in logs, events or error texts\n", len(found))
		for _, f := range found {
			fmt.Fprintf(os.Stderr, "  …%s…\n", f)
		}
		code = 1
	case code == 0 && n > 0:
		fmt.Fprintf(os.Stderr, "leak scan: %d credentials checked against %d bytes of logs and error texts: none found\n", n, size)
	}
	os.Exit(code)
}

// testLogger writes all levels into the leak sink.
func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(leaks, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// recordErr registers an error text for the scan.
func recordErr(err error) {
	if err != nil {
		leaks.text(err.Error())
	}
}

// newToken mints a credential and registers it.
func newToken(t testing.TB) string {
	t.Helper()
	v, err := auth.GenerateToken(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaks.secret(v)
	return v
}

// clock is an injected clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness is a Front on a real loopback listener with a stand-in MCP
// handler behind RequireBearer.
type harness struct {
	t      *testing.T
	front  *auth.Front
	srv    *httptest.Server
	base   string // http://127.0.0.1:PORT
	addr   string // 127.0.0.1:PORT
	clock  *clock
	token  string // the full-scope "default" token
	client *http.Client

	calls      atomic.Int32
	principal  atomic.Pointer[auth.Principal]
	sawAuthHdr atomic.Bool

	evMu   sync.Mutex
	events []auth.Event
}

// newHarness starts a server; mutate adjusts the Config before New.
func newHarness(t *testing.T, mutate func(h *harness, c *auth.Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: newClock()}
	h.srv = httptest.NewUnstartedServer(nil)
	h.addr = h.srv.Listener.Addr().String()
	h.base = "http://" + h.addr
	h.token = newToken(t)
	cfg := auth.Config{
		Tokens:      []auth.Token{{Name: "default", Secret: auth.NewSecret(h.token), Scopes: auth.FullScopes()}},
		Listener:    h.addr,
		ResourceURL: h.base + "/mcp",
		Logger:      testLogger(),
		Now:         h.clock.Now,
		OnEvent: func(_ context.Context, e auth.Event) {
			leaks.text(fmt.Sprintf("%+v", e))
			h.evMu.Lock()
			h.events = append(h.events, e)
			h.evMu.Unlock()
		},
		ConnectionData: func() any {
			return map[string]any{"mcp": map[string]any{"url": h.base + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + h.token}}}
		},
	}
	if mutate != nil {
		mutate(h, &cfg)
	}
	f, err := auth.New(cfg)
	if err != nil {
		recordErr(err)
		t.Fatalf("New: %v", err)
	}
	h.front = f
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		if r.Header.Get("Authorization") != "" {
			h.sawAuthHdr.Store(true)
		}
		p, ok := auth.FromContext(r.Context())
		if !ok {
			http.Error(w, "no principal", http.StatusInternalServerError)
			return
		}
		h.principal.Store(&p)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "principal": p.Name})
	})
	h.srv.Config.Handler = f.Handler(mcp)
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	h.client = &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
	t.Cleanup(h.client.CloseIdleConnections)
	return h
}

// response is a read response.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON (%d): %q", r.status, r.body)
	}
	return m
}

// do sends a request and reads the whole response. Error responses are
// registered for the leak scan.
func (h *harness) do(req *http.Request) response {
	h.t.Helper()
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	// Error responses must not echo a credential. (The consent page that
	// asks again after a wrong operator token is a 403 carrying a fresh
	// form token by design; it is HTML, not an error text.)
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		leaks.text(string(b))
		for k, v := range resp.Header {
			leaks.text(k + ": " + strings.Join(v, ", "))
		}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// get is a GET with optional headers (name, value pairs).
func (h *harness) get(path string, hdr ...string) response {
	h.t.Helper()
	return h.do(h.newRequest(http.MethodGet, path, nil, hdr...))
}

func (h *harness) newRequest(method, path string, body io.Reader, hdr ...string) *http.Request {
	h.t.Helper()
	req, err := http.NewRequest(method, h.base+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Host") {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Add(hdr[i], hdr[i+1])
	}
	return req
}

// postForm posts a form with optional headers.
func (h *harness) postForm(path string, form url.Values, hdr ...string) response {
	h.t.Helper()
	req := h.newRequest(http.MethodPost, path, strings.NewReader(form.Encode()), hdr...)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return h.do(req)
}

// eventTypes returns the types of events seen so far.
func (h *harness) eventTypes() []auth.EventType {
	h.evMu.Lock()
	defer h.evMu.Unlock()
	var ts []auth.EventType
	for _, e := range h.events {
		ts = append(ts, e.Type)
	}
	return ts
}
