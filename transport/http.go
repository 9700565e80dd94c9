package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/internal/callstream"
)

// Defaults used when the corresponding HTTPConfig field is zero.
const (
	DefaultPath              = "/mcp"
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultShutdownTimeout   = 10 * time.Second
	DefaultSessionIdleTTL    = time.Hour
	// DefaultMaxRouteBody caps the bodies of the extra routes (OAuth
	// registration, consent, token): 64 KiB.
	DefaultMaxRouteBody = 64 << 10
	// DefaultStrangerReadTimeout bounds the reading of a body no bearer
	// token has vouched for.
	DefaultStrangerReadTimeout = 10 * time.Second
	// DefaultMaxStrangersPerAddr and DefaultMaxStrangers bound the
	// connections of Serve that have not carried an authenticated MCP
	// request, per client address and in all.
	DefaultMaxStrangersPerAddr = 16
	DefaultMaxStrangers        = 512
	// DefaultMaxSessionsPerPrincipal and DefaultMaxSessions bound the
	// protocol sessions of a stateful transport.
	DefaultMaxSessionsPerPrincipal = 256
	DefaultMaxSessions             = 10000
)

// HTTPConfig configures an HTTP transport. Auth is required: a transport
// without authentication must say so with InsecureNoAuth.
type HTTPConfig struct {
	// Name and Version are reported by /health.
	Name, Version string
	// Path is the MCP endpoint. If empty, DefaultPath.
	Path string
	// Stateless serves every POST on its own and answers GET and DELETE on
	// the MCP endpoint with 405 and an explanatory JSON body.
	Stateless bool
	// MaxBody caps MCP request bodies, in bytes; a larger body gets 413 and
	// nothing runs. The body is read only once Auth has let the request
	// through. If zero, DefaultMaxFrame.
	MaxBody int64
	// MaxRouteBody caps the bodies of Routes, which are read before any
	// bearer check (OAuth registration and consent). If zero,
	// DefaultMaxRouteBody.
	MaxRouteBody int64
	// StrangerReadTimeout bounds the reading of a Routes body, so a slow
	// client cannot hold a connection open by trickling one. If zero,
	// DefaultStrangerReadTimeout.
	StrangerReadTimeout time.Duration
	// MaxStrangersPerAddr and MaxStrangers bound, in Serve, the connections
	// that have not yet carried an authenticated MCP request: per client
	// address (an IPv4 address or an IPv6 /64) and in all. A new
	// connection over a bound closes the oldest such connection of that
	// address (or of all), so a flood of strangers evicts itself while the
	// real client's next connection still gets through. A connection
	// that authenticates is no longer counted. If zero,
	// DefaultMaxStrangersPerAddr and DefaultMaxStrangers.
	MaxStrangersPerAddr, MaxStrangers int

	// Guard wraps every route except /health, before anything else runs:
	// the place for Host and Origin checks. If nil, requests pass.
	Guard func(http.Handler) http.Handler
	// Auth wraps the MCP endpoint, after Guard: the place for bearer
	// authentication (auth.Front.RequireBearer). Required unless
	// InsecureNoAuth is set.
	Auth func(http.Handler) http.Handler
	// InsecureNoAuth serves the MCP endpoint with no authentication when
	// Auth is nil: anyone who reaches the listener can call every tool.
	InsecureNoAuth bool
	// Routes are extra handlers (OAuth, metadata, connection file), mounted
	// behind the body cap and Guard, by ServeMux pattern.
	Routes map[string]http.Handler
	// SessionOwner names the principal of a request. Protocol sessions are
	// bound to the principal that created them: another principal using the
	// same session ID gets 404. If nil, every request has the same owner.
	SessionOwner func(r *http.Request) string
	// Health, if set, adds fields to the /health body; a field "ok": false
	// marks the server degraded (503).
	Health func() map[string]any
	// Context, if set, derives the context of every MCP request.
	Context func(ctx context.Context, r *http.Request) context.Context

	// Timeouts. If zero, the Default* values above.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout, ShutdownTimeout time.Duration
	// SessionIdleTTL ends protocol sessions idle this long. If zero,
	// DefaultSessionIdleTTL.
	SessionIdleTTL time.Duration
	// MaxSessionsPerPrincipal caps the protocol sessions of one principal
	// (SessionOwner); a new one beyond it ends that principal's oldest.
	// MaxSessions caps them all; beyond it the principal holding the most
	// loses its oldest, so no principal can end another's by opening
	// many. If zero, DefaultMaxSessionsPerPrincipal and
	// DefaultMaxSessions.
	MaxSessionsPerPrincipal, MaxSessions int

	// Logger receives operator logs. If nil, logs are discarded.
	Logger *slog.Logger
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

func (c *HTTPConfig) setDefaults() {
	if c.Name == "" {
		c.Name = "rigout"
	}
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if !strings.HasPrefix(c.Path, "/") {
		c.Path = "/" + c.Path
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxFrame
	}
	if c.MaxRouteBody <= 0 {
		c.MaxRouteBody = DefaultMaxRouteBody
	}
	if c.StrangerReadTimeout <= 0 {
		c.StrangerReadTimeout = DefaultStrangerReadTimeout
	}
	if c.MaxStrangersPerAddr <= 0 {
		c.MaxStrangersPerAddr = DefaultMaxStrangersPerAddr
	}
	if c.MaxStrangers <= 0 {
		c.MaxStrangers = DefaultMaxStrangers
	}
	if c.MaxSessionsPerPrincipal <= 0 {
		c.MaxSessionsPerPrincipal = DefaultMaxSessionsPerPrincipal
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.Guard == nil {
		c.Guard = func(h http.Handler) http.Handler { return h }
	}
	if c.Auth == nil {
		c.Auth = func(h http.Handler) http.Handler { return h }
	}
	if c.SessionOwner == nil {
		c.SessionOwner = func(*http.Request) string { return "" }
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.SessionIdleTTL <= 0 {
		c.SessionIdleTTL = DefaultSessionIdleTTL
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// HTTP serves an MCP server over streamable HTTP, with /health and any
// extra routes. Build it with NewHTTP; serve it with Serve or mount
// Handler in your own server. Close it when done.
type HTTP struct {
	cfg       HTTPConfig
	mcp       *server.StreamableHTTPServer
	sessions  *sessionStore
	strangers *strangers
	handler   http.Handler
}

// ErrNoAuth means an HTTPConfig had neither Auth nor InsecureNoAuth.
var ErrNoAuth = errors.New("transport: HTTP needs Auth, or InsecureNoAuth to serve without authentication")

// NewHTTP builds the HTTP transport for srv. cfg is copied.
func NewHTTP(srv *server.MCPServer, cfg HTTPConfig) (*HTTP, error) {
	if cfg.Auth == nil && !cfg.InsecureNoAuth {
		return nil, ErrNoAuth
	}
	c := cfg
	c.Routes = maps.Clone(cfg.Routes)
	c.setDefaults()
	h := &HTTP{cfg: c, strangers: newStrangers(c.MaxStrangersPerAddr, c.MaxStrangers)}
	opts := []server.StreamableHTTPOption{
		server.WithEndpointPath(c.Path),
		server.WithStreamableHTTPLogger(c.Logger),
	}
	if c.Context != nil {
		opts = append(opts, server.WithHTTPContextFunc(c.Context))
	}
	if c.Stateless {
		opts = append(opts, server.WithStateLess(true))
	} else {
		h.sessions = newSessionStore(c.MaxSessions, c.MaxSessionsPerPrincipal)
		opts = append(opts,
			server.WithSessionIdManagerResolver(sessionResolver{store: h.sessions, owner: c.SessionOwner}),
			server.WithSessionIdleTTL(c.SessionIdleTTL))
	}
	h.mcp = server.NewStreamableHTTPServer(srv, opts...)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", h.health)
	mux.Handle("GET /{$}", http.HandlerFunc(h.root))
	// The MCP body is read only after Auth: a stranger's body is never
	// buffered. Route bodies are read first (OAuth needs them), under a
	// smaller cap and a read deadline.
	mux.Handle(c.Path, c.Guard(c.Auth(h.trusted(h.limitBody(http.HandlerFunc(h.serveMCP), c.MaxBody, 0)))))
	for pattern, route := range c.Routes {
		mux.Handle(pattern, h.limitBody(c.Guard(route), c.MaxRouteBody, c.StrangerReadTimeout))
	}
	mux.Handle("/", http.HandlerFunc(notFound))
	h.handler = mux
	return h, nil
}

// Handler returns the transport's root handler.
func (h *HTTP) Handler() http.Handler { return h.handler }

// Serve accepts connections on ln until ctx is done, then shuts down
// gracefully: it stops accepting, lets in-flight calls finish for up to
// ShutdownTimeout, then cancels what is left (which kills running commands)
// and closes every connection. It returns nil after a shutdown caused by ctx.
func (h *HTTP) Serve(ctx context.Context, ln net.Listener) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	srv := &http.Server{
		Handler:           h.handler,
		ReadHeaderTimeout: h.cfg.ReadHeaderTimeout,
		ReadTimeout:       h.cfg.ReadTimeout,
		IdleTimeout:       h.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ConnState:         h.strangers.connState,
		ErrorLog:          slog.NewLogLogger(h.cfg.Logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("transport: serve: %w", err)
	case <-ctx.Done():
	}
	h.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "shutting down: draining in-flight calls",
		slog.Duration("timeout", h.cfg.ShutdownTimeout))
	drain, cancelDrain := context.WithTimeout(context.Background(), h.cfg.ShutdownTimeout)
	defer cancelDrain()
	// Listening streams never end on their own; close them so Shutdown
	// waits only for calls.
	_ = h.mcp.Shutdown(drain)
	if err := srv.Shutdown(drain); err != nil {
		h.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shutdown timed out: cancelling remaining calls")
		cancelBase()
		// Give cancelled commands a moment to be killed and answered.
		grace, cancelGrace := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancelGrace()
		if err := srv.Shutdown(grace); err != nil {
			_ = srv.Close()
		}
	}
	<-served
	return nil
}

// Close ends the transport's background work.
func (h *HTTP) Close() error {
	return h.mcp.Shutdown(context.Background())
}

// serveMCP handles the MCP endpoint: method checks, then mcp-go.
func (h *HTTP) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodDelete:
		if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			// Protocol 2026-07-28 has no sessions and no GET stream:
			// both verbs are 405 whatever the session header says.
			w.Header().Set("Allow", "POST")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{
				"error":   "method_not_allowed",
				"message": r.Method + " is not part of protocol " + r.Header.Get(mcp.HeaderProtocolVersion) + ": use POST " + h.cfg.Path + " (server-to-client messages use subscriptions/listen)",
			})
			return
		}
		if h.cfg.Stateless {
			w.Header().Set("Allow", "POST")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{
				"error":   "method_not_allowed",
				"message": "Stateless mode: use POST " + h.cfg.Path,
			})
			return
		}
		// mcp-go does not validate the session of a GET stream, and takes
		// a DELETE for an unknown session as done: check both here, so one
		// principal can neither listen to nor end another's session.
		id := r.Header.Get(server.HeaderKeySessionID)
		switch {
		case id == "" && r.Method == http.MethodDelete:
			writeJSON(w, http.StatusBadRequest, map[string]string{
				"error": "bad_request", "message": "DELETE needs the Mcp-Session-Id header of the session to end",
			})
			return
		case id != "" && !h.sessions.owns(id, h.cfg.SessionOwner(r)):
			writeJSON(w, http.StatusNotFound, map[string]string{
				"error": "not_found", "message": "unknown session: initialize a new one",
			})
			return
		}
	default:
		allow := "GET, POST, DELETE"
		if h.cfg.Stateless {
			allow = "POST"
		}
		w.Header().Set("Allow", allow)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{
			"error":   "method_not_allowed",
			"message": r.Method + " is not supported on " + h.cfg.Path + "; use " + allow,
		})
		return
	}
	if r.Method != http.MethodPost {
		h.mcp.ServeHTTP(w, r)
		return
	}
	// A call's notifications go out on its own POST's response, before
	// its result (see callResponse).
	cw := newCallResponse(w)
	defer cw.end()
	h.mcp.ServeHTTP(cw, r.WithContext(callstream.With(r.Context(), cw)))
}

// trusted marks the connection of a request that got past Auth as no
// longer a stranger.
func (h *HTTP) trusted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.strangers.trust(r.Context())
		next.ServeHTTP(w, r)
	})
}

// limitBody reads a request body up to max bytes before next runs: a
// larger one gets 413 and nothing is executed. A non-zero deadline bounds
// the time the reading may take. POST bodies on the MCP endpoint must also
// be valid UTF-8 and must not be JSON-RPC batches, which the protocol no
// longer allows.
func (h *HTTP) limitBody(next http.Handler, max int64, deadline time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > max {
			h.tooLarge(w, max)
			return
		}
		rc := http.NewResponseController(w)
		if deadline > 0 {
			// Not every ResponseWriter supports deadlines (httptest's
			// recorder does not); the server's ReadTimeout still applies.
			_ = rc.SetReadDeadline(time.Now().Add(deadline))
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
		if deadline > 0 && err == nil {
			// Lift it once the body is read: it bounds the body, not the
			// handler.
			_ = rc.SetReadDeadline(time.Time{})
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				h.tooLarge(w, max)
				return
			}
			writeRPCError(w, http.StatusBadRequest, -32700, "could not read the request body: "+err.Error())
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == h.cfg.Path {
			if !utf8.Valid(body) {
				writeRPCError(w, http.StatusBadRequest, -32700, "request body is not valid UTF-8")
				return
			}
			if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
				writeRPCError(w, http.StatusBadRequest, -32600, "JSON-RPC batches are not supported: send one message per request")
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

func (h *HTTP) tooLarge(w http.ResponseWriter, max int64) {
	w.Header().Set("Connection", "close")
	writeRPCError(w, http.StatusRequestEntityTooLarge, -32600,
		fmt.Sprintf("request body exceeds the limit of %d bytes", max))
}

func (h *HTTP) health(w http.ResponseWriter, _ *http.Request) {
	body := map[string]any{
		"ok":      true,
		"name":    h.cfg.Name,
		"version": h.cfg.Version,
		"ts":      h.cfg.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
	if h.cfg.Health != nil {
		maps.Copy(body, h.cfg.Health())
	}
	status := http.StatusOK
	if ok, _ := body["ok"].(bool); !ok {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, body)
}

func (h *HTTP) root(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "%s MCP gateway\nMCP endpoint: %s (streamable HTTP)\nHealth: /health\n", h.cfg.Name, h.cfg.Path)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "message": "no route for " + r.URL.Path})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
}

// sessionStore holds the protocol sessions of a stateful transport, each
// bound to the principal that opened it. A principal over its own cap
// loses its own oldest session; when the store is full, the principal
// holding the most sessions loses its oldest, so no principal can evict
// another's sessions by opening many.
type sessionStore struct {
	max, perOwner int

	// mu protects the following.
	mu       sync.Mutex
	sessions map[string]string   // session ID → owner
	byOwner  map[string][]string // owner → its session IDs, oldest first
}

func newSessionStore(max, perOwner int) *sessionStore {
	return &sessionStore{max: max, perOwner: perOwner, sessions: make(map[string]string), byOwner: make(map[string][]string)}
}

// add records session id of owner, evicting as the caps require.
func (s *sessionStore) add(id, owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions[id] = owner
	s.byOwner[owner] = append(s.byOwner[owner], id)
	for len(s.byOwner[owner]) > s.perOwner {
		s.evictOldestLocked(owner)
	}
	for len(s.sessions) > s.max {
		hog := ""
		for o, ids := range s.byOwner {
			if len(ids) > len(s.byOwner[hog]) || (len(ids) == len(s.byOwner[hog]) && o < hog) {
				hog = o
			}
		}
		s.evictOldestLocked(hog)
	}
}

// evictOldestLocked ends owner's oldest session. The caller holds mu.
func (s *sessionStore) evictOldestLocked(owner string) {
	ids := s.byOwner[owner]
	if len(ids) == 0 {
		return
	}
	s.removeLocked(ids[0])
}

// removeLocked forgets session id. The caller holds mu.
func (s *sessionStore) removeLocked(id string) {
	owner, ok := s.sessions[id]
	if !ok {
		return
	}
	delete(s.sessions, id)
	ids := s.byOwner[owner]
	for i, v := range ids {
		if v == id {
			ids = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(s.byOwner, owner)
		return
	}
	s.byOwner[owner] = ids
}

// count returns the number of sessions of owner.
func (s *sessionStore) count(owner string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byOwner[owner])
}

// sessionResolver gives mcp-go a session manager bound to one request's
// principal.
type sessionResolver struct {
	store *sessionStore
	owner func(*http.Request) string
}

func (r sessionResolver) ResolveSessionIdManager(req *http.Request) server.SessionIdManager {
	owner := ""
	if req != nil {
		owner = r.owner(req)
	}
	return &ownedSessions{store: r.store, owner: owner, any: req == nil}
}

// ownedSessions is the session manager for one principal. any is set for
// mcp-go's background sweeper, which acts for no request.
type ownedSessions struct {
	store *sessionStore
	owner string
	any   bool
}

func (o *ownedSessions) Generate() string {
	id := newSessionID()
	o.store.add(id, o.owner)
	return id
}

// errUnknownSession makes mcp-go answer 404, which tells the client to
// start a new session.
var errUnknownSession = errors.New("transport: unknown session")

func (o *ownedSessions) Validate(id string) (bool, error) {
	s := o.store
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, ok := s.sessions[id]
	if !ok || (!o.any && owner != o.owner) {
		return false, errUnknownSession
	}
	return false, nil
}

func (o *ownedSessions) Terminate(id string) (bool, error) {
	s := o.store
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, ok := s.sessions[id]
	switch {
	case !ok:
		return false, nil // already gone: ending it again is harmless
	case !o.any && owner != o.owner:
		return true, errUnknownSession // another principal's: not allowed
	}
	s.removeLocked(id)
	return false, nil
}

// owns reports whether session id exists and belongs to owner.
func (s *sessionStore) owns(id, owner string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.sessions[id]
	return ok && o == owner
}

// newSessionID returns 128 random bits in hex: unguessable, visible ASCII.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
