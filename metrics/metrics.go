package metrics

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/sessions"
)

// Namespace prefixes every metric name.
const Namespace = "rigout"

// Other is the label value of anything past a label's cap or outside its
// known set.
const Other = "other"

// MaxLabelValues caps the distinct values of the rule and auth-reason
// labels.
const MaxLabelValues = 64

// Sessions is what the metrics read of a process manager: satisfied by
// *sessions.Manager.
type Sessions interface {
	Stats() sessions.Stats
}

// Pool is what the metrics read of an SSH router: satisfied by
// *remote.Router.
type Pool interface {
	Connections() map[string]int
}

// Config says where the scrape-time gauges come from. Every field is
// optional: a nil one leaves its metrics out.
type Config struct {
	// Tools returns the registered tool names: a tool label is one of them
	// or "unknown". If nil, any tool name the ledger records is a label,
	// capped at MaxLabelValues.
	Tools func() []string
	// Sessions reports background processes and terminal sessions.
	Sessions Sessions
	// Pool reports pooled SSH connections per host.
	Pool Pool
	// Process adds the Go runtime and process collectors.
	Process bool
}

// Metrics holds rigout's collectors in a registry of its own. Build it with
// New; it is safe for concurrent use.
type Metrics struct {
	cfg Config
	reg *prometheus.Registry

	calls     *prometheus.CounterVec
	denials   *prometheus.CounterVec
	errs      *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	inFlight  prometheus.Gauge
	commit    *prometheus.HistogramVec
	commitErr prometheus.Counter
	healthy   prometheus.Gauge
	authFail  *prometheus.CounterVec

	known struct {
		sync.Mutex
		set map[string]bool
	}
	rules   *capped
	reasons *capped
	tools   *capped
	routes  *capped
}

// New builds the collectors and registers them.
func New(cfg Config) *Metrics {
	m := &Metrics{
		cfg: cfg,
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "tool_calls_total",
			Help: "Tool calls that ended, by tool, status and route kind (one per done or single ledger row)."},
			[]string{"tool", "status", "route"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "tool_denials_total",
			Help: "Tool calls refused by scope or policy (or naming no such tool), by tool and rule (empty rule: not a policy rule)."},
			[]string{"tool", "rule"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "tool_errors_total",
			Help: "Tool calls that ran and failed (status error), by tool."},
			[]string{"tool"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "tool_call_duration_seconds",
			Help:    "Wall time of tool calls, by tool and route kind.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}},
			[]string{"tool", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "tool_calls_in_flight",
			Help: "Tool calls whose handler is running."}),
		commit: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "ledger_commit_duration_seconds",
			Help:    "Time to commit one audit ledger row, by phase (intent, done, single).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5}},
			[]string{"phase"}),
		commitErr: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "ledger_commit_failures_total",
			Help: "Audit ledger rows that could not be committed."}),
		healthy: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "ledger_healthy",
			Help: "1 when the last ledger commit succeeded and the ledger reports itself healthy, else 0."}),
		authFail: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "auth_failures_total",
			Help: "Refused HTTP requests: bad or missing credentials, throttling, Host or Origin checks, by type and reason."},
			[]string{"type", "reason"}),
		rules:   newCapped(MaxLabelValues),
		reasons: newCapped(MaxLabelValues),
		tools:   newCapped(MaxLabelValues),
		routes:  newCapped(16),
	}
	m.healthy.Set(1)
	m.reg.MustRegister(m.calls, m.denials, m.errs, m.latency, m.inFlight, m.commit, m.commitErr, m.healthy, m.authFail)
	if cfg.Sessions != nil {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "background_processes",
				Help: "Background processes still running."},
				func() float64 { return float64(cfg.Sessions.Stats().Running) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "terminal_sessions",
				Help: "Open terminal sessions."},
				func() float64 { return float64(cfg.Sessions.Stats().Terminals) }))
	}
	if cfg.Pool != nil {
		m.reg.MustRegister(poolCollector{pool: cfg.Pool})
	}
	if cfg.Process {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// Registry returns the registry, to add an embedder's own collectors or to
// gather in a test.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format. It does
// no authentication of its own: mount it behind one.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Middleware counts calls in flight: a call is in flight while its handler
// runs (after its scopes, limits and intent row).
func (m *Metrics) Middleware() rigout.Middleware {
	return func(next rigout.Handler) rigout.Handler {
		return func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			m.inFlight.Inc()
			defer m.inFlight.Dec()
			return next(ctx, call)
		}
	}
}

// OnAuthEvent returns an auth.Config.OnEvent hook that counts refusals and
// then calls next (if not nil), usually the gateway's RecordAuthEvent.
func (m *Metrics) OnAuthEvent(next func(context.Context, auth.Event)) func(context.Context, auth.Event) {
	return func(ctx context.Context, e auth.Event) {
		if e.Refused() {
			m.authFail.WithLabelValues(string(e.Type), m.reasons.get(e.Reason)).Inc()
		}
		if next != nil {
			next(ctx, e)
		}
	}
}

// Ledger wraps l so that every row it commits is counted: a call's done
// row (or the single row of a call refused before it ran) counts the call,
// and every Record is timed. The wrapper keeps l's Healthy method, which
// the gateway's /health reads, and its DigestArgs (audit.ArgsDigester)
// when l has one.
func (m *Metrics) Ledger(l audit.Recorder) audit.Recorder {
	w := &ledger{Recorder: l, m: m}
	if d, ok := l.(audit.ArgsDigester); ok {
		return &digestingLedger{ledger: w, ArgsDigester: d}
	}
	return w
}

type ledger struct {
	audit.Recorder
	m *Metrics
}

// digestingLedger is a ledger whose wrapped Recorder digests arguments.
type digestingLedger struct {
	*ledger
	audit.ArgsDigester
}

// Record commits e through the wrapped ledger and counts it.
func (l *ledger) Record(ctx context.Context, e audit.Event) error {
	start := time.Now()
	err := l.Recorder.Record(ctx, e)
	phase := string(e.Phase)
	if phase == "" {
		phase = "single"
	}
	l.m.commit.WithLabelValues(phase).Observe(time.Since(start).Seconds())
	if err != nil {
		l.m.commitErr.Inc()
		l.m.healthy.Set(0)
		return err
	}
	l.m.healthy.Set(boolFloat(l.Healthy() == nil))
	l.m.observe(e)
	return nil
}

// Healthy reports the wrapped ledger's health, or nil if it has no such
// method.
func (l *ledger) Healthy() error {
	if h, ok := l.Recorder.(interface{ Healthy() error }); ok {
		return h.Healthy()
	}
	return nil
}

// observe counts one committed row.
func (m *Metrics) observe(e audit.Event) {
	if e.Type != audit.TypeToolCall && e.Type != audit.TypeToolDenied || e.Phase == audit.PhaseIntent {
		return
	}
	tool, status, route := m.tool(e), statusLabel(e.Status), m.routes.get(RouteKind(e.Route))
	m.calls.WithLabelValues(tool, status, route).Inc()
	// A denial as the ledger's Stats count it: refused by scope or policy.
	switch {
	case e.Status == audit.StatusDenied || e.Decision == audit.DecisionDeny || e.Type == audit.TypeToolDenied:
		m.denials.WithLabelValues(tool, m.rules.get(e.Rule)).Inc()
	case e.Status == audit.StatusError:
		m.errs.WithLabelValues(tool).Inc()
	}
	if e.Status != audit.StatusUnknown {
		m.latency.WithLabelValues(tool, route).Observe(e.Duration.Seconds())
	}
}

func (m *Metrics) tool(e audit.Event) string {
	if e.Status == audit.StatusUnknown || e.Tool == "" {
		return "unknown"
	}
	if m.cfg.Tools == nil {
		return m.tools.get(e.Tool)
	}
	// The registered names are cached; a miss reloads them once, for a
	// tool registered since.
	m.known.Lock()
	defer m.known.Unlock()
	if !m.known.set[e.Tool] {
		m.known.set = map[string]bool{}
		for _, t := range m.cfg.Tools() {
			m.known.set[t] = true
		}
	}
	if m.known.set[e.Tool] {
		return e.Tool
	}
	return "unknown"
}

// RouteKind reduces a ledger route such as "ssh(web1 → 10.0.0.5:22)" to
// its kind, "ssh": the part before any parenthesis or space.
func RouteKind(route string) string {
	if i := strings.IndexAny(route, "( "); i >= 0 {
		route = route[:i]
	}
	if route == "" {
		return "none"
	}
	return route
}

// statuses are the ledger's own; an embedder's are Other.
var statuses = map[audit.Status]bool{
	audit.StatusOK: true, audit.StatusStarted: true, audit.StatusError: true, audit.StatusDenied: true,
	audit.StatusInvalid: true, audit.StatusTimeout: true, audit.StatusCanceled: true, audit.StatusAborted: true,
	audit.StatusBusy: true, audit.StatusLimited: true, audit.StatusAwaitingConfirmation: true,
	audit.StatusUnknown: true, audit.StatusBackground: true,
}

func statusLabel(s audit.Status) string {
	if statuses[s] {
		return string(s)
	}
	return Other
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// capped admits the first n distinct values of a label and maps the rest
// to Other.
type capped struct {
	n  int
	mu sync.Mutex
	in map[string]bool
}

func newCapped(n int) *capped { return &capped{n: n, in: map[string]bool{}} }

func (c *capped) get(v string) string {
	if len(v) > 64 {
		return Other
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.in[v] {
		return v
	}
	if len(c.in) >= c.n {
		return Other
	}
	c.in[v] = true
	return v
}

// poolCollector reads pooled SSH connections at scrape time.
type poolCollector struct{ pool Pool }

var poolDesc = prometheus.NewDesc(Namespace+"_ssh_pool_connections",
	"Live pooled SSH connections, by configured host name.", []string{"host"}, nil)

func (poolCollector) Describe(ch chan<- *prometheus.Desc) { ch <- poolDesc }

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	for host, n := range c.pool.Connections() {
		ch <- prometheus.MustNewConstMetric(poolDesc, prometheus.GaugeValue, float64(n), host)
	}
}
