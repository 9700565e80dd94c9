package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/metrics"
)

// workload is a gateway on a real SQLite ledger, wrapped by the metrics,
// with tools that succeed, fail, are refused by a policy rule or block.
type workload struct {
	gw      *rigout.Gateway
	ledger  *sqlite.Ledger
	m       *metrics.Metrics
	c       *client.Client
	release chan struct{}
	entered chan struct{}
}

func newWorkload(t *testing.T, principal *auth.Principal) *workload {
	t.Helper()
	ctx := context.Background()
	l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	w := &workload{ledger: l, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	tools := []rigout.Tool{
		{Name: "echo", Description: "ok", Risk: rigout.ReadOnly, Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		}},
		{Name: "fail", Description: "fails", Risk: rigout.Mutating, Handler: func(_ context.Context, c *rigout.Call) (*mcp.CallToolResult, error) {
			c.Outcome.Route = "ssh(web1 → 10.0.0.5:22)"
			return nil, errors.New("it broke")
		}},
		{Name: "policy", Description: "refused by a rule", Risk: rigout.Exec, Handler: func(_ context.Context, c *rigout.Call) (*mcp.CallToolResult, error) {
			c.Outcome.Status, c.Outcome.Decision, c.Outcome.Rule = audit.StatusDenied, audit.DecisionDeny, "no-rm-rf"
			return rigout.ErrorResult("refused by rule no-rm-rf"), nil
		}},
		{Name: "block", Description: "blocks", Risk: rigout.ReadOnly, Handler: func(ctx context.Context, _ *rigout.Call) (*mcp.CallToolResult, error) {
			w.entered <- struct{}{}
			<-w.release
			return mcp.NewToolResultText("done"), nil
		}},
		{Name: "secret", Description: "out of scope", Risk: rigout.ReadOnly, Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("never"), nil
		}},
	}
	var gw *rigout.Gateway
	w.m = metrics.New(metrics.Config{Tools: func() []string {
		var names []string
		for _, t := range gw.Tools() {
			names = append(names, t.Name)
		}
		return names
	}})
	gw, err = rigout.New(rigout.Config{Tools: tools, Audit: w.m.Ledger(l), Middleware: []rigout.Middleware{w.m.Middleware()}, Principal: principal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	w.gw = gw
	c, err := client.NewInProcessClient(gw.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	w.c = c
	return w
}

func (w *workload) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := w.c.CallTool(context.Background(), req)
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			return nil
		}
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// scrape fetches /metrics over a real HTTP listener and parses it with the
// Prometheus text parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fams
}

// value sums the samples of family name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
	sum := 0.0
	for _, m := range f.Metric {
		match := true
		for k, v := range want {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// TestScrapeMatchesLedger: after a workload, the scrape shows per tool the
// calls, denials and errors the ledger's own Stats show for the same calls.
func TestScrapeMatchesLedger(t *testing.T) {
	p := auth.Principal{Name: "narrow", Transport: "in-process", Scopes: auth.Scopes{Tools: []string{"echo", "fail", "policy", "block"}, Hosts: []string{"*"}}}
	w := newWorkload(t, &p)
	for range 5 {
		w.call(t, "echo", nil)
	}
	for range 3 {
		w.call(t, "fail", nil)
	}
	for range 2 {
		w.call(t, "policy", nil)
	}
	w.call(t, "secret", nil)                  // denied by scope
	w.call(t, "no_such_tool_<img>", nil)      // unknown
	w.call(t, "echo", map[string]any{"x": 1}) // invalid: echo takes no arguments

	fams := scrape(t, w.m.Handler())
	stats, err := w.ledger.Stats(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) < 4 {
		t.Fatalf("ledger stats: %+v", stats)
	}
	total := 0.0
	for _, s := range stats {
		tool := s.Tool
		if tool == "no_such_tool_<img>" {
			tool = "unknown"
		}
		if got := value(fams, "rigout_tool_calls_total", map[string]string{"tool": tool}); got != float64(s.Calls) {
			t.Errorf("%s: rigout_tool_calls_total %v, the ledger has %d calls", s.Tool, got, s.Calls)
		}
		if got := value(fams, "rigout_tool_denials_total", map[string]string{"tool": tool}); max(got, 0) != float64(s.Denials) {
			t.Errorf("%s: rigout_tool_denials_total %v, the ledger has %d denials", s.Tool, got, s.Denials)
		}
		total += float64(s.Calls)
	}
	if got := value(fams, "rigout_tool_calls_total", nil); got != total || total != 13 {
		t.Errorf("calls: scrape %v, ledger %v, want 13", got, total)
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"rigout_tool_calls_total", map[string]string{"tool": "echo", "status": "ok", "route": "none"}, 5},
		{"rigout_tool_calls_total", map[string]string{"tool": "echo", "status": "invalid"}, 1},
		{"rigout_tool_calls_total", map[string]string{"tool": "fail", "status": "error", "route": "ssh"}, 3},
		{"rigout_tool_errors_total", map[string]string{"tool": "fail"}, 3},
		{"rigout_tool_denials_total", map[string]string{"tool": "policy", "rule": "no-rm-rf"}, 2},
		{"rigout_tool_denials_total", map[string]string{"tool": "secret", "rule": ""}, 1},
		{"rigout_tool_calls_total", map[string]string{"tool": "unknown", "status": "unknown"}, 1},
		{"rigout_tool_call_duration_seconds", map[string]string{"tool": "fail", "route": "ssh"}, 3},
		// Every call that reaches its handler has an intent row: echo's 5,
		// fail's and policy's.
		{"rigout_ledger_commit_duration_seconds", map[string]string{"phase": "intent"}, 10},
		{"rigout_ledger_healthy", nil, 1},
		{"rigout_ledger_commit_failures_total", nil, 0},
		{"rigout_tool_calls_in_flight", nil, 0},
	}
	for _, c := range checks {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// No label carries the unknown tool's text or a route's address.
	for _, f := range fams {
		for _, m := range f.Metric {
			for _, lp := range m.Label {
				if strings.Contains(lp.GetValue(), "<img>") || strings.Contains(lp.GetValue(), "10.0.0.5") {
					t.Errorf("%s has label %s=%q", f.GetName(), lp.GetName(), lp.GetValue())
				}
			}
		}
	}
}

// TestInFlight: a call whose handler runs shows in the gauge until it ends.
func TestInFlight(t *testing.T) {
	w := newWorkload(t, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var req mcp.CallToolRequest
		req.Params.Name = "block"
		_, _ = w.c.CallTool(context.Background(), req)
	}()
	<-w.entered
	if got := value(scrape(t, w.m.Handler()), "rigout_tool_calls_in_flight", nil); got != 1 {
		t.Errorf("in flight while blocked: %v, want 1", got)
	}
	close(w.release)
	<-done
	if got := value(scrape(t, w.m.Handler()), "rigout_tool_calls_in_flight", nil); got != 0 {
		t.Errorf("in flight after: %v, want 0", got)
	}
}

// TestLedgerFailure: a ledger that cannot commit shows as unhealthy, and
// its failures are counted.
func TestLedgerFailure(t *testing.T) {
	w := newWorkload(t, nil)
	w.call(t, "echo", nil)
	if err := w.ledger.Close(); err != nil {
		t.Fatal(err)
	}
	w.call(t, "fail", nil)
	fams := scrape(t, w.m.Handler())
	if got := value(fams, "rigout_ledger_healthy", nil); got != 0 {
		t.Errorf("rigout_ledger_healthy %v after the ledger closed, want 0", got)
	}
	if got := value(fams, "rigout_ledger_commit_failures_total", nil); got < 1 {
		t.Errorf("rigout_ledger_commit_failures_total %v, want ≥ 1", got)
	}
}

// TestAuthFailures: refusals are counted by type and reason, approvals
// are not, and the hook passes every event on.
func TestAuthFailures(t *testing.T) {
	m := metrics.New(metrics.Config{})
	var passed int
	hook := m.OnAuthEvent(func(context.Context, auth.Event) { passed++ })
	ctx := context.Background()
	hook(ctx, auth.Event{Type: auth.EventDenied, Reason: "unknown token"})
	hook(ctx, auth.Event{Type: auth.EventDenied, Reason: "unknown token"})
	hook(ctx, auth.Event{Type: auth.EventRejected, Reason: "origin not allowed"})
	hook(ctx, auth.Event{Type: auth.EventGrant})
	for i := range metrics.MaxLabelValues + 10 {
		hook(ctx, auth.Event{Type: auth.EventThrottled, Reason: strings.Repeat("x", i+1)})
	}
	fams := scrape(t, m.Handler())
	if passed != 4+metrics.MaxLabelValues+10 {
		t.Errorf("next saw %d events", passed)
	}
	if got := value(fams, "rigout_auth_failures_total", map[string]string{"type": "auth.deny", "reason": "unknown token"}); got != 2 {
		t.Errorf("auth.deny: %v, want 2", got)
	}
	if got := value(fams, "rigout_auth_failures_total", map[string]string{"type": "http.rejected"}); got != 1 {
		t.Errorf("http.rejected: %v, want 1", got)
	}
	if got := value(fams, "rigout_auth_failures_total", nil); got != float64(3+metrics.MaxLabelValues+10) {
		t.Errorf("total: %v", got)
	}
	if n := len(fams["rigout_auth_failures_total"].Metric); n > metrics.MaxLabelValues+2 {
		t.Errorf("%d series: the reason label is not capped", n)
	}
}

// TestRootDoesNotLinkPrometheus: the gateway package stays free of
// client_golang; only this package links it.
func TestRootDoesNotLinkPrometheus(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("SKIP: the go tool is not on PATH; the dependency rule is unchecked")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/rigout/rigout", "github.com/rigout/rigout/auth", "github.com/rigout/rigout/audit/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("implausible: %s", out)
	}
	if strings.Contains(string(out), "github.com/prometheus/") {
		t.Error("the root, auth or audit packages link github.com/prometheus")
	}
}

// TestLedgerKeepsTheDigest: the wrapper digests arguments when, and only
// when, the ledger it wraps does, so the gateway keeps the ledger's keyed
// digest and digests itself for a plain Recorder.
func TestLedgerKeepsTheDigest(t *testing.T) {
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tests := []struct {
		name string
		rec  audit.Recorder
		want bool
	}{
		{"sqlite", l, true},
		{"plain recorder", &audittest.Recorder{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := metrics.New(metrics.Config{}).Ledger(tt.rec)
			d, ok := w.(audit.ArgsDigester)
			if ok != tt.want {
				t.Fatalf("wrapper digests = %v, want %v", ok, tt.want)
			}
			if ok && d.DigestArgs([]byte("x")) != l.DigestArgs([]byte("x")) {
				t.Error("the wrapper's digest is not the ledger's")
			}
		})
	}
}
