package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/metrics"
	"github.com/rigout/rigout/ui"
)

// observer wires the gateway's metrics (issue 19): /metrics behind a token
// with the metrics scope, or on a loopback-only listener of its own.
type observer struct {
	addr  string // --metrics-addr
	noUI  bool   // --no-ui
	m     *metrics.Metrics
	a     *assembly.Server
	ldg   gatewayLedger
	uiTTL time.Duration
}

// newObserver registers serve's observability flags on fs.
func newObserver(fs *flag.FlagSet) *observer {
	o := &observer{}
	fs.BoolVar(&o.noUI, "no-ui", false, "leave out the live activity page at /ui/")
	fs.DurationVar(&o.uiTTL, "ui-session-ttl", ui.DefaultSessionTTL, "how long a sign-in to the activity page lasts")
	fs.StringVar(&o.addr, "metrics-addr", "", "also serve /metrics without a token on this loopback address, e.g. 127.0.0.1:9464 (a non-loopback address is refused); /metrics on the main listener always needs a token with the metrics scope")
	return o
}

// check refuses a metrics listener beyond this machine: it has no token.
func (o *observer) check() error {
	if o == nil || o.addr == "" {
		return nil
	}
	if !auth.IsLoopback(o.addr) {
		return fmt.Errorf("--metrics-addr %s: the metrics listener has no authentication, so it binds loopback addresses only (127.0.0.0/8, ::1, localhost); use /metrics on the main listener with a token that has the metrics scope instead", o.addr)
	}
	return nil
}

// wire builds the metrics for the assembly and hooks them into cfg: the
// ledger is wrapped, and a middleware counts calls in flight
// (assembly.WithGatewayConfig).
func (o *observer) wire(a *assembly.Server, cfg *rigout.Config) error {
	o.a, o.ldg = a, a.Ledger()
	mc := metrics.Config{Process: true, Tools: func() []string {
		if a.Gateway == nil {
			return nil
		}
		var names []string
		for _, t := range a.Tools() {
			names = append(names, t.Name)
		}
		return names
	}}
	if a.Processes() != nil {
		mc.Sessions = a.Processes()
	}
	if a.Router() != nil {
		mc.Pool = a.Router()
	}
	o.m = metrics.New(mc)
	if cfg.Audit != nil {
		cfg.Audit = o.m.Ledger(cfg.Audit)
	}
	cfg.Middleware = append([]rigout.Middleware{o.m.Middleware()}, cfg.Middleware...)
	return nil
}

// onAuth counts refused requests, then passes the event to next.
func (o *observer) onAuth(next func(context.Context, auth.Event)) func(context.Context, auth.Event) {
	if o == nil || o.m == nil {
		return next
	}
	return o.m.OnAuthEvent(next)
}

// routes adds /metrics to the transport's routes, which needs a bearer
// token whose scopes include metrics, and the activity page at /ui/.
// publicURL is the MCP endpoint's public URL, if it has one.
func (o *observer) routes(front *auth.Front, routes map[string]http.Handler, publicURL string) (map[string]http.Handler, error) {
	if o == nil || o.m == nil {
		return routes, nil
	}
	routes["GET /metrics"] = front.RequireBearer(requireMetricsScope(o.m.Handler()))
	if o.noUI || o.ldg == nil {
		return routes, nil
	}
	uc := ui.Config{
		Ledger:       o.ldg,
		Authenticate: front.RequireBearer,
		SessionTTL:   o.uiTTL,
		Verify: func(ctx context.Context) (any, error) {
			ldg := o.ldg
			if s, ok := ldg.(interface{ Unwrap() assembly.Ledger }); ok {
				ldg = s.Unwrap() // the ledger under the intent rows' stamp
			}
			switch l := ldg.(type) {
			case *sqlite.Ledger:
				return l.Verify(ctx)
			case *postgres.Ledger:
				return l.Verify(ctx)
			}
			return nil, fmt.Errorf("no chain verification for %T", ldg)
		},
		Health: func() any { return o.a.Health() },
	}
	if u, err := url.Parse(publicURL); err == nil && u.Scheme != "" && u.Host != "" {
		uc.PublicOrigin = u.Scheme + "://" + u.Host
	}
	if o.a.Processes() != nil {
		uc.Processes = o.a.Processes()
	}
	if gw := o.a.Gateway; gw != nil && gw.Config().Approvals != nil {
		uc.ListApprovals = func(p auth.Principal) (any, error) { return gw.PendingApprovals(context.Background(), p) }
		uc.DecideApproval = func(ctx context.Context, p auth.Principal, id, digest string, approve bool) (any, error) {
			return gw.DecideApproval(ctx, p, id, digest, approve)
		}
	}
	if r := o.a.Router(); r != nil {
		uc.Hosts = func() []string {
			var names []string
			for _, ep := range r.List() {
				names = append(names, ep.Name)
			}
			return names
		}
	}
	page, err := ui.New(uc)
	if err != nil {
		return nil, err
	}
	routes[ui.Prefix] = page
	return routes, nil
}

// requireMetricsScope answers 403 unless the authenticated principal may
// read metrics.
func requireMetricsScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		if !ok || !p.Scopes.Metrics {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintln(w, `{"error":"insufficient_scope","error_description":"this token may not read metrics: give it the metrics scope (\"scopes\": {\"metrics\": true})"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// listen serves /metrics alone on --metrics-addr until ctx is done.
func (o *observer) listen(ctx context.Context, logger *slog.Logger) error {
	if o == nil || o.addr == "" || o.m == nil {
		return nil
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener failed", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return nil
}
