package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/sessions"
)

//go:embed static
var static embed.FS

// CookieName is the session cookie's name.
const CookieName = "rigout_ui"

// DefaultSessionTTL is how long a sign-in lasts when Config.SessionTTL is
// zero.
const DefaultSessionTTL = 8 * time.Hour

// maxSessions caps the signed-in sessions; the oldest is dropped beyond.
const maxSessions = 1024

// MaxStreams caps the event streams open at once: each polls the ledger.
const MaxStreams = 64

// MaxStreamsPerPrincipal caps the event streams of one principal, so that
// no principal can take every stream.
const MaxStreamsPerPrincipal = 8

// maxSessionsPerPrincipal caps the sign-ins of one principal; its oldest
// is dropped beyond.
const maxSessionsPerPrincipal = 16

// CSP is the Content-Security-Policy of every response.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"

// Processes is what the page reads of a process manager: satisfied by
// *sessions.Manager.
type Processes interface {
	List(principal string) []sessions.Info
	Terminals(principal string) []sessions.TerminalInfo
}

// Config configures the page.
type Config struct {
	// Ledger is read for the calls. Required.
	Ledger audit.Querier
	// Authenticate checks the bearer token of a sign-in and attaches the
	// principal to the request's context (auth.Front.RequireBearer).
	// Required.
	Authenticate func(http.Handler) http.Handler
	// Verify checks the ledger's hash chain and returns a report to show.
	// Optional.
	Verify func(ctx context.Context) (any, error)
	// Health returns the gateway's health (rigout.Gateway.Health).
	// Optional.
	Health func() any
	// Processes lists background processes and terminal sessions.
	// Optional.
	Processes Processes
	// Hosts returns the configured host names. Optional.
	Hosts func() []string
	// ListApprovals returns the calls waiting for an operator's approval,
	// as p may see them (rigout.Gateway.PendingApprovals), or an error
	// when p may not (no approve scope). Optional: without it the page
	// shows no approvals.
	ListApprovals func(p auth.Principal) (any, error)
	// DecideApproval approves (approve true) or denies the pending
	// approval id, whose digest the page showed, on behalf of p
	// (rigout.Gateway.DecideApproval). Optional; set with ListApprovals.
	DecideApproval func(ctx context.Context, p auth.Principal, id, digest string, approve bool) (any, error)
	// PublicOrigin is the origin people reach the page at when it is not
	// the listener's own, e.g. "https://rigout.example.com" behind a
	// tunnel or proxy that ends TLS. Its Origin is accepted, and with
	// https the cookie is Secure even though the request arrives in plain
	// HTTP.
	PublicOrigin string
	// SessionTTL is how long a sign-in lasts. If zero, DefaultSessionTTL.
	SessionTTL time.Duration
	// Poll is how often the event stream reads the ledger. If zero, 250ms.
	Poll time.Duration
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

// Page is the activity page's handler. Mount it at Prefix ("/ui/").
type Page struct {
	cfg     Config
	mux     *http.ServeMux
	mu      sync.Mutex
	byID    map[string]*session
	streams atomic.Int32
	verify  struct {
		sync.Mutex
		at  time.Time
		res any
		err error
	}

	signIns uint64 // sign-ins so far, guarded by mu

	// streamMu protects streamsOf: the open streams of each principal.
	streamMu  sync.Mutex
	streamsOf map[string]int
}

// session is one sign-in.
type session struct {
	id        string
	principal auth.Principal
	expires   time.Time
	n         uint64 // sign-in order
}

// Prefix is the path the page is served under.
const Prefix = "/ui/"

// New builds the page.
func New(cfg Config) (*Page, error) {
	if cfg.Ledger == nil {
		return nil, errors.New("ui: Config.Ledger is required")
	}
	if cfg.Authenticate == nil {
		return nil, errors.New("ui: Config.Authenticate is required: the page signs people in with a bearer token")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 250 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Page{cfg: cfg, byID: map[string]*session{}, streamsOf: map[string]int{}}
	files, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	fileServer := http.StripPrefix(Prefix, http.FileServerFS(files))
	m.Handle("GET /ui/{$}", fileServer)
	m.Handle("GET /ui/app.js", fileServer)
	m.Handle("GET /ui/app.css", fileServer)
	m.Handle("POST /ui/login", p.sameOrigin(cfg.Authenticate(http.HandlerFunc(p.login))))
	m.Handle("POST /ui/logout", p.sameOrigin(p.signedIn(p.logout)))
	m.Handle("GET /ui/api/me", p.signedIn(p.me))
	m.Handle("GET /ui/api/events", p.signedIn(p.events))
	m.Handle("GET /ui/api/call", p.signedIn(p.call))
	m.Handle("GET /ui/api/state", p.signedIn(p.state))
	m.Handle("GET /ui/api/verify", p.signedIn(p.verifyChain))
	m.Handle("GET /ui/api/stream", p.sameOrigin(p.signedIn(p.stream)))
	m.Handle("GET /ui/api/approvals", p.signedIn(p.approvals))
	m.Handle("POST /ui/api/approvals", p.sameOrigin(p.signedIn(p.decide)))
	m.Handle("/ui/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such page")
	}))
	p.mux = m
	return p, nil
}

// ServeHTTP serves the page, with its security headers on every response.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	p.mux.ServeHTTP(w, r)
}

// sameOrigin refuses a request that does not come from the page itself:
// its Origin must be this server's own (scheme and Host), or, for a
// browser GET that carries no Origin, Sec-Fetch-Site must be same-origin.
// A request with neither is refused: the page's script always sends one.
func (p *Page) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		own := scheme + "://" + strings.ToLower(r.Host)
		switch o := r.Header.Get("Origin"); {
		case o != "":
			if !strings.EqualFold(o, own) && (p.cfg.PublicOrigin == "" || !strings.EqualFold(o, p.cfg.PublicOrigin)) {
				writeError(w, http.StatusForbidden, "cross-origin request refused: Origin "+quote(o)+" is not this page's")
				return
			}
		case r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Site") == "same-origin":
		default:
			writeError(w, http.StatusForbidden, "request refused: it carries neither this page's Origin nor Sec-Fetch-Site: same-origin")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// login exchanges the bearer token (already checked by Authenticate) for a
// session cookie.
func (p *Page) login(w http.ResponseWriter, r *http.Request) {
	pr, ok := auth.FromContext(r.Context())
	if !ok {
		writeError(w, http.StatusUnauthorized, "sign in with a bearer token")
		return
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		writeError(w, http.StatusInternalServerError, "no randomness for a session")
		return
	}
	s := &session{id: base64.RawURLEncoding.EncodeToString(b[:]), principal: pr, expires: p.cfg.Now().Add(p.cfg.SessionTTL)}
	p.mu.Lock()
	p.purgeLocked(ownerOf(pr))
	p.signIns++
	s.n = p.signIns
	p.byID[s.id] = s
	p.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: s.id, Path: Prefix, Expires: s.expires, MaxAge: int(p.cfg.SessionTTL / time.Second),
		HttpOnly: true, Secure: r.TLS != nil || strings.HasPrefix(p.cfg.PublicOrigin, "https://"), SameSite: http.SameSiteStrictMode,
	})
	writeJSON(w, map[string]any{"principal": pr.Name, "expires": s.expires.UTC()})
}

// purgeLocked drops expired sessions, and makes room for one more sign-in
// of owner: its own oldest beyond maxSessionsPerPrincipal, and beyond
// maxSessions the oldest of the principal holding the most, so no
// principal can sign another out by signing in many times.
func (p *Page) purgeLocked(owner string) {
	now := p.cfg.Now()
	oldest := map[string]*session{}
	count := map[string]int{}
	for id, s := range p.byID {
		if !now.Before(s.expires) {
			delete(p.byID, id)
			continue
		}
		o := ownerOf(s.principal)
		count[o]++
		if oldest[o] == nil || s.n < oldest[o].n {
			oldest[o] = s
		}
	}
	if count[owner] >= maxSessionsPerPrincipal {
		delete(p.byID, oldest[owner].id)
		return
	}
	if len(p.byID) >= maxSessions {
		hog := owner
		for o, n := range count {
			if n > count[hog] {
				hog = o
			}
		}
		if oldest[hog] != nil {
			delete(p.byID, oldest[hog].id)
		}
	}
}

// ownerOf names the principal a sign-in or a stream counts against: one
// per token, one per OAuth grant.
func ownerOf(pr auth.Principal) string { return pr.Name + "\x00" + pr.GrantID }

// signedIn runs next with the session of the request's cookie, or answers
// 401.
func (p *Page) signedIn(next func(http.ResponseWriter, *http.Request, *session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := p.session(r)
		if s == nil {
			writeError(w, http.StatusUnauthorized, "not signed in, or the sign-in expired: paste a token")
			return
		}
		next(w, r, s)
	})
}

// session returns the live session of r's cookie, or nil.
func (p *Page) session(r *http.Request) *session {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, s := range p.byID {
		if subtle.ConstantTimeCompare([]byte(id), []byte(c.Value)) == 1 {
			if !p.cfg.Now().Before(s.expires) {
				delete(p.byID, id)
				return nil
			}
			return s
		}
	}
	return nil
}

// alive reports whether s is still signed in.
func (p *Page) alive(s *session) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byID[s.id] == s && p.cfg.Now().Before(s.expires)
}

func (p *Page) logout(w http.ResponseWriter, _ *http.Request, s *session) {
	p.mu.Lock()
	delete(p.byID, s.id)
	p.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

func (p *Page) me(w http.ResponseWriter, _ *http.Request, s *session) {
	writeJSON(w, map[string]any{"principal": s.principal.Name, "all_calls": s.principal.Scopes.IsFull(), "expires": s.expires.UTC(),
		"approve": s.principal.Scopes.Approve && p.cfg.ListApprovals != nil && p.cfg.DecideApproval != nil})
}

// approvals lists the calls waiting for an operator, for a principal with
// the approve scope.
func (p *Page) approvals(w http.ResponseWriter, _ *http.Request, s *session) {
	if p.cfg.ListApprovals == nil {
		writeError(w, http.StatusNotFound, "this gateway has no approval queue")
		return
	}
	if !s.principal.Scopes.Approve {
		writeError(w, http.StatusForbidden, "listing approvals needs a token with the approve scope")
		return
	}
	list, err := p.cfg.ListApprovals(s.principal)
	if err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	writeJSON(w, map[string]any{"approvals": list})
}

// decide approves or denies one pending approval: {"id", "digest",
// "decision": "approve"|"deny"}.
func (p *Page) decide(w http.ResponseWriter, r *http.Request, s *session) {
	if p.cfg.DecideApproval == nil {
		writeError(w, http.StatusNotFound, "this gateway has no approval queue")
		return
	}
	if !s.principal.Scopes.Approve {
		writeError(w, http.StatusForbidden, "deciding approvals needs a token with the approve scope")
		return
	}
	var req struct {
		ID       string `json:"id"`
		Digest   string `json:"digest"`
		Decision string `json:"decision"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.ID == "" || req.Digest == "" || (req.Decision != "approve" && req.Decision != "deny") {
		writeError(w, http.StatusBadRequest, `want {"id", "digest", "decision": "approve" or "deny"}`)
		return
	}
	res, err := p.cfg.DecideApproval(r.Context(), s.principal, req.ID, req.Digest, req.Decision == "approve")
	if err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, res)
}

// filter scopes f to what s may see: everything for full scopes, else its
// own events.
func (s *session) filter(f audit.Filter) audit.Filter {
	if !s.principal.Scopes.IsFull() {
		f.Principal = s.principal.Name
	}
	return f
}

// Row is one event as the page shows it: no hashes, no arguments (those
// are in the call's detail).
type Row struct {
	Seq       int64          `json:"seq"`
	Time      time.Time      `json:"time"`
	Type      string         `json:"type"`
	CallID    string         `json:"call_id,omitempty"`
	Phase     string         `json:"phase,omitempty"`
	Principal string         `json:"principal,omitempty"`
	Tool      string         `json:"tool,omitempty"`
	Host      string         `json:"host,omitempty"`
	Route     string         `json:"route,omitempty"`
	Decision  audit.Decision `json:"decision,omitempty"`
	Rule      string         `json:"rule,omitempty"`
	ExitCode  *int           `json:"exit_code,omitempty"`
	Duration  float64        `json:"duration_ms"`
	Status    audit.Status   `json:"status,omitempty"`
	Error     string         `json:"error,omitempty"`
	Refused   bool           `json:"refused,omitempty"`
	// Ran is what the call ran or touched (audit.Event.Ran), cut to
	// maxRan bytes; the detail has it whole.
	Ran string `json:"ran,omitempty"`
	// State is the status in words: "exited 2", "stopped", "killed by
	// SIGKILL", "running in the background".
	State string `json:"state,omitempty"`
}

// maxRan bounds the command a row shows.
const maxRan = 300

func rowOf(e audit.Event) Row {
	ran := e.Ran()
	if len(ran) > maxRan {
		cut := maxRan
		for cut > 0 && !utf8.RuneStart(ran[cut]) {
			cut--
		}
		ran = ran[:cut] + "…"
	}
	return Row{Seq: e.Seq, Time: e.Time, Type: string(e.Type), CallID: e.CallID, Phase: string(e.Phase), Principal: e.Principal,
		Tool: e.Tool, Host: e.Host, Route: e.Route, Decision: e.Decision, Rule: e.Rule, ExitCode: e.ExitCode,
		Duration: float64(e.Duration) / float64(time.Millisecond), Status: e.Status, Error: e.Error,
		Refused: e.Status == audit.StatusDenied || e.Decision == audit.DecisionDeny || e.Type == audit.TypeToolDenied ||
			e.Type == audit.TypeAuthFailed,
		Ran: ran, State: stateOf(e)}
}

// stateOf says in words how a row stands or ended, for a person: never
// "exited -1" for a process that was stopped.
func stateOf(e audit.Event) string {
	switch e.Status {
	case audit.StatusOK:
		if e.ExitCode != nil {
			return "exited 0"
		}
		return "ok"
	case audit.StatusError:
		switch {
		case e.Signal != "":
			return "killed by " + e.Signal
		case e.ExitCode != nil && *e.ExitCode >= 0:
			return fmt.Sprintf("exited %d", *e.ExitCode)
		}
		return "failed"
	case audit.StatusCanceled:
		if strings.Contains(e.Error, "stopped") {
			return "stopped"
		}
		return "canceled"
	case audit.StatusTimeout:
		return "timed out"
	case audit.StatusBackground:
		return "running in the background"
	case audit.StatusDenied:
		return "refused"
	case audit.StatusInvalid:
		return "invalid arguments"
	case audit.StatusBusy, audit.StatusLimited:
		return "refused: " + string(e.Status)
	case audit.StatusAwaitingConfirmation:
		return "awaiting confirmation"
	}
	return string(e.Status)
}

// events returns the newest events the session may see (?limit, at most
// 500), or those after ?after.
func (p *Page) events(w http.ResponseWriter, r *http.Request, s *session) {
	limit := 200
	if v, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && v > 0 {
		limit = min(v, 500)
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	f := s.filter(audit.Filter{Limit: limit, Newest: after <= 0, AfterSeq: max(after, 0)})
	evs, err := p.cfg.Ledger.Query(r.Context(), f)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the ledger cannot be read: "+err.Error())
		return
	}
	rows := make([]Row, 0, len(evs))
	for _, e := range evs {
		rows = append(rows, rowOf(e))
	}
	writeJSON(w, rows)
}

// call returns the rows of one call, with their redacted arguments when
// the ledger stores them. Another principal's call is not found.
func (p *Page) call(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.URL.Query().Get("id")
	if id == "" || len(id) > 128 {
		writeError(w, http.StatusBadRequest, "?id= names a call")
		return
	}
	evs, err := p.cfg.Ledger.Query(r.Context(), s.filter(audit.Filter{CallID: id, Limit: 10}))
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the ledger cannot be read: "+err.Error())
		return
	}
	if len(evs) == 0 {
		writeError(w, http.StatusNotFound, "no such call")
		return
	}
	type detail struct {
		Row
		Args       any    `json:"args,omitempty"` // decoded when it is JSON, so the page shows its text
		ArgsDigest string `json:"args_digest,omitempty"`
		Signal     string `json:"signal,omitempty"`
		Stdout     int64  `json:"stdout_bytes,omitempty"`
		Stderr     int64  `json:"stderr_bytes,omitempty"`
		Truncated  bool   `json:"truncated,omitempty"`
		Bypassed   bool   `json:"bypassed,omitempty"`
		Detail     string `json:"detail,omitempty"`
	}
	out := make([]detail, 0, len(evs))
	for _, e := range evs {
		var args any
		if e.Args != "" {
			args = e.Args
			if json.Valid([]byte(e.Args)) {
				args = json.RawMessage(e.Args)
			}
		}
		out = append(out, detail{Row: rowOf(e), Args: args, ArgsDigest: e.ArgsDigest, Signal: e.Signal,
			Stdout: e.StdoutBytes, Stderr: e.StderrBytes, Truncated: e.Truncated, Bypassed: e.Bypassed, Detail: e.Detail})
	}
	writeJSON(w, out)
}

// state returns the session's processes and terminals, the hosts and the
// gateway's health.
func (p *Page) state(w http.ResponseWriter, _ *http.Request, s *session) {
	out := map[string]any{"principal": s.principal.Name}
	if p.cfg.Processes != nil {
		out["processes"] = p.cfg.Processes.List(s.principal.Name)
		out["terminals"] = p.cfg.Processes.Terminals(s.principal.Name)
	}
	if p.cfg.Hosts != nil {
		var hosts []string
		for _, h := range p.cfg.Hosts() {
			if s.principal.Scopes.AllowHost(h) {
				hosts = append(hosts, h)
			}
		}
		out["hosts"] = hosts
	}
	if p.cfg.Health != nil {
		out["health"] = p.cfg.Health()
	}
	writeJSON(w, out)
}

// verifyChain runs the chain verification, at most once every 10 seconds
// whoever asks.
func (p *Page) verifyChain(w http.ResponseWriter, r *http.Request, _ *session) {
	if p.cfg.Verify == nil {
		writeError(w, http.StatusNotFound, "this ledger cannot be verified")
		return
	}
	v := &p.verify
	v.Lock()
	if v.at.IsZero() || p.cfg.Now().Sub(v.at) > 10*time.Second {
		v.res, v.err = p.cfg.Verify(r.Context())
		v.at = p.cfg.Now()
	}
	res, err, at := v.res, v.err, v.at
	v.Unlock()
	if err != nil {
		writeJSON(w, map[string]any{"ok": false, "error": err.Error(), "at": at.UTC()})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "report": res, "at": at.UTC()})
}

// stream sends the events the session may see as server-sent events: the
// ones after Last-Event-ID (or ?after), then each new one as the ledger
// commits it. It ends when the sign-in expires or the client goes.
func (p *Page) stream(w http.ResponseWriter, r *http.Request, s *session) {
	owner := ownerOf(s.principal)
	p.streamMu.Lock()
	mine := p.streamsOf[owner] < MaxStreamsPerPrincipal
	if mine {
		p.streamsOf[owner]++
	}
	p.streamMu.Unlock()
	if !mine {
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("%s has %d activity streams open already, the most one principal may: close a tab", s.principal.Name, MaxStreamsPerPrincipal))
		return
	}
	defer func() {
		p.streamMu.Lock()
		if p.streamsOf[owner]--; p.streamsOf[owner] <= 0 {
			delete(p.streamsOf, owner)
		}
		p.streamMu.Unlock()
	}()
	if p.streams.Add(1) > MaxStreams {
		p.streams.Add(-1)
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("%d activity streams are open already: close a tab", MaxStreams))
		return
	}
	defer p.streams.Add(-1)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	last, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	if last <= 0 {
		last, _ = strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	}
	if last < 0 {
		last = 0
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	if err := rc.Flush(); err != nil {
		return
	}
	t := time.NewTicker(p.cfg.Poll)
	defer t.Stop()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		if !p.alive(s) {
			fmt.Fprint(w, "event: expired\ndata: {}\n\n")
			_ = rc.Flush()
			return
		}
		evs, err := p.cfg.Ledger.Query(r.Context(), s.filter(audit.Filter{AfterSeq: last, Limit: 200}))
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			fmt.Fprintf(w, "event: ledger\ndata: %s\n\n", mustJSON(map[string]string{"error": err.Error()}))
		}
		for _, e := range evs {
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", e.Seq, mustJSON(rowOf(e)))
			last = e.Seq
		}
		if len(evs) > 0 {
			if err := rc.Flush(); err != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
			if err := rc.Flush(); err != nil {
				return
			}
		case <-t.C:
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return strconv.Quote(s)
}
