package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/internal/runstate"
	"github.com/rigout/rigout/transport"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// runServe serves MCP over streamable HTTP. A bearer token is always
// required unless --no-auth is given, which is refused on a non-loopback
// address. Without a configured token, rigout uses the one kept in the
// state directory, generating it on first use.
func runServe(ctx context.Context, args []string, stderr io.Writer, sec *secrets) int {
	fs := flag.NewFlagSet("rigout serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := common{sec: sec}
	c.register(fs)
	addr := fs.String("addr", envOr("RIGOUT_ADDR", "127.0.0.1:8765"), "listen address (env RIGOUT_ADDR)")
	path := fs.String("path", transport.DefaultPath, "MCP endpoint path")
	stateless := fs.Bool("stateless", false, "serve every POST on its own; GET and DELETE answer 405")
	maxBody := fs.Int64("max-body", transport.DefaultMaxFrame, "largest request body in bytes (413 above)")
	shutdown := fs.Duration("shutdown-timeout", transport.DefaultShutdownTimeout, "how long in-flight calls may drain on SIGINT/SIGTERM")
	token := fs.String("auth-token", "", "refused: a token on the command line is readable in /proc by every user; use RIGOUT_AUTH_TOKEN or --auth-token-file (rigout start --detach moves it off for you)")
	tokenFile := fs.String("auth-token-file", "", "file holding a bearer token with full scopes, named \"default\" (owner-only; or env RIGOUT_AUTH_TOKEN)")
	noAuth := fs.Bool("no-auth", false, "serve without authentication (loopback addresses only)")
	publicURL := fs.String("public-url", os.Getenv("RIGOUT_PUBLIC_URL"), "the URL clients use for the MCP endpoint, if not http://ADDR/PATH (env RIGOUT_PUBLIC_URL)")
	connFile := fs.String("connection-file", "", "where to write the connection file (default <state dir>/connection.json)")
	setup := fs.Bool("setup-token", false, "print a one-shot setup token that fetches /connection.json (15 minutes, one use); on by default when the server is reachable beyond this machine")
	var origins, hosts stringList
	fs.Var(&origins, "allowed-origin", "browser origin to accept besides this server's own (repeatable)")
	fs.Var(&hosts, "allowed-host", "Host header value to accept besides loopback names, e.g. a tunnel hostname (repeatable)")
	tunnelName := fs.String("tunnel", "", "reach the gateway from the internet through a tunnel: cloudflare (a cloudflared quick tunnel; cloudflared must be on PATH)")
	c.observe = newObserver(fs)
	approvalWait := fs.Duration("approval-wait", rigout.DefaultApprovalWait, "how long a held-back call waits for an operator's `rigout approve` before it is refused")
	approvalNotify := fs.String("approval-notify", "", "command run (by /bin/sh -c) with each new pending approval as JSON on stdin, to tell an operator")
	detached := fs.Bool("detached", false, "log only to the activity log (set by rigout start --detach)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// Everything written to stderr also goes, redacted, to the activity log
	// (<state dir>/rigout.log) once the state directory is known.
	sink := newLogSink(stderr, *detached)
	defer sink.Close()
	stderr = sink
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rigout serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "rigout serve: "+format+"\n", a...)
		return code
	}
	logger, err := c.logger(stderr)
	if err != nil {
		return fail(2, "%v", err)
	}
	if *token != "" {
		return fail(2, "--auth-token VALUE would stay in /proc/%d/cmdline, readable by every user of this machine, for as long as the gateway runs: "+
			"pass the token in RIGOUT_AUTH_TOKEN or with --auth-token-file FILE (rigout start --detach --auth-token moves it off the command line for you)", os.Getpid())
	}
	if *tokenFile != "" {
		t, err := readTokenFile(*tokenFile)
		if err != nil {
			return fail(2, "--auth-token-file: %v", err)
		}
		*token = t
	}
	if *token == "" {
		*token = sec.getenv("RIGOUT_AUTH_TOKEN")
	}
	if err := c.observe.check(); err != nil {
		return fail(2, "%v", err)
	}
	if *noAuth && !auth.IsLoopback(*addr) {
		return fail(2, "refusing --no-auth on %s: without authentication rigout binds loopback addresses only (127.0.0.0/8, ::1, localhost)", *addr)
	}
	if *tunnelName != "" && *tunnelName != "cloudflare" {
		return fail(2, "--tunnel %q: the only tunnel is cloudflare", *tunnelName)
	}
	if *tunnelName != "" && (*publicURL != "" || *noAuth) {
		return fail(2, "--tunnel contradicts --public-url and --no-auth: the tunnel sets the public URL, and a public gateway needs a token")
	}
	if *noAuth && *token != "" {
		return fail(2, "--no-auth and a token (--auth-token-file or RIGOUT_AUTH_TOKEN) contradict each other")
	}
	dir, err := c.prepare(logger)
	if err != nil {
		return fail(1, "%v", err)
	}
	if err := sink.open(filepath.Join(dir, runstate.LogFile)); err != nil {
		return fail(1, "%v", err)
	}
	inst, err := claimInstance(dir, logger.Info)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer inst.release()
	tokens, err := c.file.AuthTokens(sec.getenv)
	if err != nil {
		return fail(2, "%v", err)
	}
	oauthCfg, err := c.file.OAuthConfig(sec.getenv)
	if err != nil {
		return fail(2, "%v", err)
	}
	// The approval queue is on when someone can decide: a token or an
	// OAuth client with the approve scope. Without one, a held-back call
	// is refused at once rather than waiting for no one.
	if canApprove(tokens, oauthCfg) {
		c.approvals = &rigout.ApprovalConfig{Wait: *approvalWait}
		if *approvalNotify != "" {
			c.approvals.Notify = notifyCommand(*approvalNotify, logger)
		}
	} else if *approvalNotify != "" {
		logger.Warn("--approval-notify is ignored: no token or OAuth client has the approve scope, so there is no approval queue")
	}
	if *noAuth && (len(tokens) > 0 || oauthCfg != nil) {
		return fail(2, "--no-auth contradicts the tokens or OAuth server in %s", c.configPath)
	}

	// The token a client can be handed: given, or kept in the state dir.
	var handout string
	generated := false
	if !*noAuth {
		handout = *token
		if handout == "" && len(tokens) == 0 && oauthCfg == nil {
			handout, generated, err = stateToken(filepath.Join(dir, "token"))
			if err != nil {
				return fail(1, "%v", err)
			}
		} else if handout == "" {
			// Tokens (or OAuth) were configured after a start generated a
			// token: the clients set up with it keep working, and the
			// connection file keeps naming it, until the operator deletes
			// it — never retired without a word.
			if kept, err := keptStateToken(filepath.Join(dir, "token")); err != nil {
				return fail(1, "%v", err)
			} else if kept != "" {
				handout = kept
				fmt.Fprintf(stderr, "NOTE: the token generated earlier (%s) stays valid beside the configured ones, so clients set up with it keep working;\n"+
					"  delete that file and restart to retire it.\n", filepath.Join(dir, "token"))
			}
		}
		if handout != "" {
			tokens = append(tokens, auth.Token{Name: "default", Secret: auth.NewSecret(handout), Scopes: auth.FullScopes()})
		}
	}
	sink.secret(handout, *token)
	sink.secret(sec.values()...)

	ledger, err := c.openLedger(ctx, dir, logger)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer ledger.Close()
	closeOAuth, err := c.attachOAuthStore(ctx, oauthCfg, logger)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer closeOAuth()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(1, "%v", err)
	}
	bound := ln.Addr().String()
	url := *publicURL
	if *tunnelName != "" {
		tun, err := startTunnel(ctx, "http://"+bound, childEnv(sec), 45*time.Second, logger)
		if err != nil {
			ln.Close()
			return fail(1, "%v", err)
		}
		defer tun.Stop()
		// The tunnel's hostname is the resource URL's, so the Host check
		// accepts it; the setup token is on, as for every public URL.
		url = tun.URL + *path
		hosts = append(hosts, tun.Host)
		*publicURL = url
		var stopServe context.CancelFunc
		ctx, stopServe = context.WithCancel(ctx)
		defer stopServe()
		go func() {
			select {
			case <-tun.Done():
				logger.Error("cloudflared exited: the public URL is gone, so the gateway stops (a new quick tunnel has a new URL)", "url", tun.URL)
				stopServe()
			case <-ctx.Done():
			}
		}()
		logger.Info("cloudflare quick tunnel up", "url", tun.URL)
	}
	if url == "" {
		url = "http://" + bound + *path
	}
	gw, err := c.gateway(logger, ledger, nil, handout, *token)
	if err != nil {
		ln.Close()
		return fail(1, "%v", err)
	}
	defer gw.Close()

	connData := connectionData(gw.Gateway, url, *path, handout)
	front, err := auth.New(auth.Config{
		Tokens:         tokens,
		InsecureNoAuth: *noAuth,
		Listener:       bound,
		ResourceURL:    url,
		AllowedOrigins: append(origins, c.file.AllowedOrigins...),
		AllowedHosts:   append(hosts, c.file.AllowedHosts...),
		CORS:           c.file.CORS,
		OAuth:          oauthCfg,
		ConnectionData: func() any { return connData },
		Name:           gw.Config().Name,
		Version:        gw.Config().Version,
		OnEvent:        c.observe.onAuth(gw.RecordAuthEvent),
		Logger:         logger,
	})
	if err != nil {
		ln.Close()
		return fail(2, "%v", err)
	}
	routes, err := c.observe.routes(front, front.Routes(), *publicURL)
	if err != nil {
		ln.Close()
		return fail(1, "%v", err)
	}
	approvals := front.RequireBearer(gw.ApprovalsHandler())
	routes["GET /approvals"], routes["POST /approvals"] = approvals, approvals
	h, err := transport.NewHTTP(gw.MCPServer(), transport.HTTPConfig{
		Name:            gw.Config().Name,
		Version:         gw.Config().Version,
		Path:            *path,
		Stateless:       *stateless,
		MaxBody:         *maxBody,
		ShutdownTimeout: *shutdown,
		Guard:           front.Guard,
		// The tasks extension (2026-07-28) is served in front of mcp-go,
		// after authentication: its tasks belong to principals.
		Auth:         func(h http.Handler) http.Handler { return front.RequireBearer(gw.TasksHTTP(h)) },
		Routes:       routes,
		SessionOwner: sessionOwner,
		Health:       health(gw),
		Logger:       logger,
	})
	if err != nil {
		ln.Close()
		return fail(1, "%v", err)
	}
	defer h.Close()

	cf := *connFile
	if cf == "" {
		cf = filepath.Join(dir, "connection.json")
	}
	if handout != "" {
		b, _ := json.MarshalIndent(connData, "", "  ")
		if err := auth.WriteFileSecure(cf, append(b, '\n')); err != nil {
			return fail(1, "connection file: %v", err)
		}
	} else if err := os.Remove(cf); err == nil {
		// An earlier start's file names a token this one does not accept.
		fmt.Fprintf(stderr, "NOTE: removed %s: its token is not accepted now (the configured tokens or OAuth are)\n", cf)
	}
	banner(stderr, url, handout, generated, *noAuth, cf, len(tokens), oauthCfg != nil)
	public := !auth.IsLoopback(bound) || *publicURL != ""
	if handout != "" && (*setup || public) {
		st, err := front.NewSetupToken()
		if err != nil {
			return fail(1, "setup token: %v", err)
		}
		base := strings.TrimSuffix(url, *path)
		fmt.Fprintf(stderr, "Setup (one use, expires in 15 minutes; it hands out the bearer token, so treat it like a password):\n"+
			"  curl -s -H \"X-Setup-Token: %s\" %s/connection.json\n", st.Reveal(), base)
	}
	rt := runstate.Runtime{Addr: bound, URL: url, HealthURL: "http://" + bound + "/health", Token: tokenSummary(handout, *noAuth, len(tokens), oauthCfg != nil)}
	if handout != "" {
		rt.ConnectionFile = cf
		serveSetupTokens(ctx, front, dir, strings.TrimSuffix(url, *path), logger.Info)
	}
	if gw.Router() != nil {
		for _, ep := range gw.Router().List() {
			rt.Hosts = append(rt.Hosts, ep.Name)
		}
	}
	if err := inst.record(rt); err != nil {
		return fail(1, "%v", err)
	}
	if err := c.observe.listen(ctx, logger); err != nil {
		return fail(1, "%v", err)
	}
	logger.Info("serving MCP over streamable HTTP", "url", url, "stateless", *stateless, "auth", !*noAuth)

	_ = gw.RecordEvent(ctx, audit.Event{Type: audit.TypeServerStart, Transport: auth.TransportHTTP, Status: audit.StatusOK,
		Detail: rigout.DetailJSON(map[audit.DetailKey]string{audit.DetailURL: url, audit.DetailNoAuth: strconv.FormatBool(*noAuth)})})
	err = h.Serve(ctx, ln)
	_ = gw.RecordEvent(context.WithoutCancel(ctx), audit.Event{Type: audit.TypeServerStop, Transport: auth.TransportHTTP, Status: audit.StatusOK})
	if err != nil {
		logger.Error("http transport failed", "err", err)
		return 1
	}
	logger.Info("stopped")
	return 0
}

// readTokenFile reads a bearer token from a file that only its owner may
// read: the first line, trimmed.
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by others (mode %04o): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	t := strings.TrimSpace(line)
	if t == "" {
		return "", fmt.Errorf("%s holds no token", path)
	}
	return t, nil
}

// sessionOwner binds protocol sessions to the authenticated principal.
func sessionOwner(r *http.Request) string {
	p, ok := auth.FromContext(r.Context())
	if !ok {
		return ""
	}
	return p.Name + "\x00" + p.GrantID
}

// connectionData is what /connection.json and the connection file hold.
// /health is served at the root beside the MCP endpoint's path.
func connectionData(gw *rigout.Gateway, url, path, token string) map[string]any {
	headers := map[string]string{}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	return map[string]any{
		"server": map[string]string{"name": gw.Config().Name, "version": gw.Config().Version},
		"mcp": map[string]any{
			"transport":  "streamable-http",
			"url":        url,
			"health_url": strings.TrimSuffix(url, path) + "/health",
			"headers":    headers,
		},
	}
}

// stateToken returns the token kept in the state directory, creating it
// (32 random bytes, owner-only) on first use.
// keptStateToken returns the token an earlier start generated in path, or
// "" when there is none.
func keptStateToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func stateToken(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, false, nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, fmt.Errorf("token file: %w", err)
	}
	t, err := auth.GenerateToken(rand.Reader)
	if err != nil {
		return "", false, err
	}
	if err := auth.WriteFileSecure(path, []byte(t+"\n")); err != nil {
		return "", false, fmt.Errorf("token file: %w", err)
	}
	return t, true, nil
}

// banner tells the operator, once, how to connect.
func banner(w io.Writer, url, token string, generated, noAuth bool, connFile string, ntokens int, oauth bool) {
	fmt.Fprintf(w, "rigout %s listening on %s\n", releaseVersion(), url)
	switch {
	case noAuth:
		fmt.Fprintln(w, "Auth: NONE (--no-auth): any process on this machine can call every tool.")
	case token != "":
		if generated {
			fmt.Fprintln(w, "Auth: bearer token required. A token was generated and saved in the state directory:")
		} else {
			fmt.Fprintln(w, "Auth: bearer token required.")
		}
		if generated {
			fmt.Fprintf(w, "  claude mcp add --transport http rigout %s --header \"Authorization: Bearer %s\"\n", url, token)
		} else {
			fmt.Fprintf(w, "  claude mcp add --transport http rigout %s --header \"Authorization: Bearer $TOKEN\"\n", url)
		}
		fmt.Fprintf(w, "Connection file (owner-only): %s\n", connFile)
	default:
		fmt.Fprintf(w, "Auth: bearer token required (%d configured token(s)", ntokens)
		if oauth {
			fmt.Fprint(w, ", OAuth server on")
		}
		fmt.Fprintln(w, ").")
	}
}

// tokenSummary names the credential a status shows: the handed-out
// token's name, or what else authenticates.
func tokenSummary(handout string, noAuth bool, n int, oauth bool) string {
	switch {
	case noAuth:
		return "none (--no-auth)"
	case handout != "":
		return "default (state directory token file or RIGOUT_AUTH_TOKEN)"
	case oauth:
		return fmt.Sprintf("%d configured, OAuth server on", n)
	}
	return fmt.Sprintf("%d configured", n)
}
