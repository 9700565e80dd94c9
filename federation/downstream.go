package federation

//lint:file-ignore SA1019 mcp-go marks what protocol 2026-07-28 removed (the GET stream, ping, logging, sampling) deprecated; rigout still serves and tests 2025-11-25 clients, which use them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/redact"
)

// inheritedEnv are the variables a stdio downstream gets from the gateway.
var inheritedEnv = []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR"}

// downstream is one supervised downstream server.
type downstream struct {
	f   *Federation
	srv Server
	log *slog.Logger

	changed chan struct{} // tools/list_changed arrived
	lost    chan error    // a call saw the connection die

	// mu protects the following.
	mu        sync.Mutex
	c         *client.Client // nil while not connected
	state     State
	tools     int
	restarts  int
	protocol  string
	lastErr   string
	nextRetry time.Time
	problems  []string
	progress  map[string]func(mcp.JSONRPCNotification)
	secrets   []string     // the current connection's credential values
	mask      *redact.Set  // masks them (and earlier connections'); nil: none
	oversized *atomic.Bool // set when the current connection sent a message over MaxMessage
}

func newDownstream(f *Federation, s Server) *downstream {
	return &downstream{
		f: f, srv: s, log: f.log.With("downstream", s.Name),
		changed:   make(chan struct{}, 1),
		lost:      make(chan error, 1),
		state:     Connecting,
		progress:  map[string]func(mcp.JSONRPCNotification){},
		oversized: new(atomic.Bool),
	}
}

func (d *downstream) kind() string {
	if d.srv.URL != "" {
		return "http"
	}
	return "stdio"
}

func (d *downstream) status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := Status{
		Name: d.srv.Name, Transport: d.kind(), Protocol: d.protocol, State: d.state, Tools: d.tools,
		Restarts: d.restarts, LastError: d.lastErr, NextRetry: d.nextRetry,
		Problems: append([]string(nil), d.problems...),
	}
	if d.mask != nil {
		st.LastError = d.mask.Redact(st.LastError)
		for i, p := range st.Problems {
			st.Problems[i] = d.mask.Redact(p)
		}
	}
	return st
}

// redact masks the downstream's credential values in s.
func (d *downstream) redact(s string) string {
	d.mu.Lock()
	m := d.mask
	d.mu.Unlock()
	if m == nil {
		return s
	}
	return m.Redact(s)
}

// addSecrets records the values the connection being made uses, to be
// masked in what the downstream says.
func (d *downstream) addSecrets(vals ...string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mask == nil {
		d.mask = new(redact.Set)
	}
	for _, v := range vals {
		if err := d.mask.Add(v); err != nil {
			return err
		}
	}
	d.secrets = append(d.secrets, vals...)
	return nil
}

// tooLarge returns what the connection being made calls when its stream
// passes MaxMessage: it marks that connection and ends it.
func (d *downstream) tooLarge() func() {
	d.mu.Lock()
	flag := d.oversized
	d.mu.Unlock()
	return func() {
		flag.Store(true)
		d.reportLost(fmt.Errorf("it sent a message over the %d-byte limit (max_message_bytes)", d.srv.MaxMessage))
	}
}

func (d *downstream) set(fn func()) {
	d.mu.Lock()
	fn()
	d.mu.Unlock()
	d.f.publish()
}

// run supervises the downstream until ctx ends: connect, serve, and after
// each failure wait (doubling from MinBackoff to MaxBackoff) and restart.
// first is called after the first attempt.
func (d *downstream) run(ctx context.Context, first func()) {
	var once sync.Once
	backoff := d.f.cfg.MinBackoff
	for {
		began := time.Now()
		err := d.session(ctx, func() { once.Do(first) })
		if ctx.Err() != nil {
			d.set(func() { d.c, d.state, d.nextRetry = nil, Stopped, time.Time{} })
			once.Do(first)
			return
		}
		if time.Since(began) > 4*d.f.cfg.MaxBackoff {
			backoff = d.f.cfg.MinBackoff
		}
		d.log.Warn("federation: downstream down", "err", err, "retry_in", backoff)
		d.set(func() {
			d.c, d.state, d.lastErr = nil, Down, err.Error()
			d.nextRetry = time.Now().Add(backoff)
		})
		once.Do(first) // Start returns with the failure on record
		select {
		case <-ctx.Done():
			d.set(func() { d.state, d.nextRetry = Stopped, time.Time{} })
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, d.f.cfg.MaxBackoff)
		d.set(func() { d.restarts++; d.state = Connecting })
	}
}

// session connects once and serves until the connection fails or ctx
// ends. ready is called once the tools are registered.
func (d *downstream) session(parent context.Context, ready func()) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	select { // a loss reported for the previous connection
	case <-d.lost:
	default:
	}
	d.mu.Lock()
	d.oversized, d.secrets = new(atomic.Bool), nil
	d.mu.Unlock()
	c, release, err := d.connect(ctx)
	if err != nil {
		return err
	}
	defer func() {
		cancel() // kills a stdio downstream's process group
		c.Close()
		release()
	}()
	if err := d.refresh(ctx, c); err != nil {
		return err
	}
	d.set(func() {
		d.c, d.state, d.nextRetry = c, Ready, time.Time{} // lastErr stays: why it last went down
		d.protocol = c.ProtocolVersion()
	})
	ready()
	refresh := time.NewTicker(d.f.cfg.Refresh)
	defer refresh.Stop()
	ping := time.NewTicker(d.f.cfg.Ping)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-d.lost:
			return err
		case <-d.changed:
			if err := d.refresh(ctx, c); err != nil {
				return err
			}
		case <-refresh.C:
			if err := d.refresh(ctx, c); err != nil {
				return err
			}
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, d.f.cfg.Ping)
			err := alive(pctx, c)
			pcancel()
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
		}
	}
}

// connect starts the transport and initializes the MCP session. Call
// release once the client is closed.
func (d *downstream) connect(ctx context.Context) (*client.Client, func(), error) {
	var tr transport.Interface
	release := func() {}
	if d.srv.URL != "" {
		base := http.DefaultTransport.(*http.Transport).Clone()
		hc := &http.Client{Transport: limitTransport{base: base, max: d.srv.MaxMessage, over: d.tooLarge()}}
		opts := []transport.StreamableHTTPCOption{transport.WithContinuousListening(), transport.WithHTTPLogger(d.log),
			transport.WithHTTPBasicClient(hc)}
		if d.srv.Token != "" {
			// Resolved now, so a missing credential fails the connection
			// with its reason, and at every request after.
			tok, err := d.f.cfg.Credentials.Credential(ctx, d.srv.Token)
			if err != nil {
				return nil, release, fmt.Errorf("credential: %w", err)
			}
			if len(tok) >= redact.MinSecretLen {
				_ = d.addSecrets(tok)
			}
			opts = append(opts, transport.WithHTTPHeaderFunc(func(ctx context.Context) map[string]string {
				tok, err := d.f.cfg.Credentials.Credential(ctx, d.srv.Token)
				if err != nil {
					return nil
				}
				return map[string]string{"Authorization": "Bearer " + tok}
			}))
		}
		h, err := transport.NewStreamableHTTP(d.srv.URL, opts...)
		if err != nil {
			return nil, release, err
		}
		tr = h
	} else {
		// The process is started here, not by mcp-go's stdio transport,
		// so that its standard output can be read through a lineLimit:
		// the transport reads each message whole.
		out, in, rel, err := d.spawn(ctx)
		if err != nil {
			return nil, release, fmt.Errorf("start: %w", err)
		}
		release = rel
		io := transport.NewIO(out, in, nil)
		transport.WithCommandLogger(d.log)(io)
		tr = io
	}
	c := client.NewClient(tr, client.WithElicitationHandler(d))
	// ctx outlives the call: a stdio downstream's process lives as long
	// as the context it is started with.
	if err := c.Start(ctx); err != nil {
		release()
		return nil, func() {}, fmt.Errorf("start: %w", err)
	}
	c.OnNotification(d.notified)
	c.OnConnectionLost(func(err error) { d.reportLost(fmt.Errorf("connection lost: %w", err)) })
	ictx, icancel := context.WithTimeout(ctx, d.f.cfg.ConnectTimeout)
	defer icancel()
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "rigout-federation", Version: rigout.Version}
	if _, err := c.Initialize(ictx, init); err != nil {
		c.Close()
		release()
		return nil, func() {}, fmt.Errorf("initialize: %w", d.oversize(err))
	}
	return c, release, nil
}

// oversize explains err when the connection failed on an oversized message.
func (d *downstream) oversize(err error) error {
	d.mu.Lock()
	over := d.oversized
	d.mu.Unlock()
	if over != nil && over.Load() {
		return fmt.Errorf("downstream %s sent a message over the %d-byte limit (max_message_bytes), so the connection was dropped", d.srv.Name, d.srv.MaxMessage)
	}
	return err
}

// spawn starts a stdio downstream: its standard output behind a
// lineLimit, its standard input, and release, which closes what is left
// of the pipes once the client is closed. It starts as a local command,
// in the federation's sandbox (in the view of the principal its context
// names, see DownstreamFromContext); ctx's end ends it with all it
// started.
func (d *downstream) spawn(ctx context.Context) (io.Reader, io.WriteCloser, func(), error) {
	cmd, err := d.command(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx = context.WithValue(ctx, downstreamKey{}, d.srv.Name)
	p, in, outR, err := d.f.local.StartPipes(ctx, cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	if ok, why := p.Sandbox(); !ok {
		d.log.Warn("federation: stdio downstream runs outside the kernel sandbox", "why", why)
	}
	out := &lineLimit{r: outR, max: d.srv.MaxMessage, over: d.tooLarge()}
	return out, in, func() { in.Close(); outR.Close() }, nil
}

// command builds a stdio downstream's command: no shell, a small
// environment (with the values of its env credentials, resolved now, as
// secrets), its stderr logged line by line.
func (d *downstream) command(ctx context.Context) (exec.Command, error) {
	creds := make([]string, 0, len(d.srv.EnvCredentials))
	for k := range d.srv.EnvCredentials {
		creds = append(creds, k)
	}
	sort.Strings(creds)
	var vals []string
	secrets := map[string]string{}
	for _, k := range creds {
		v, err := d.f.cfg.Credentials.Credential(ctx, d.srv.EnvCredentials[k])
		if err != nil {
			return exec.Command{}, fmt.Errorf("env credential %s: %w", k, err)
		}
		if len(v) < redact.MinSecretLen {
			return exec.Command{}, fmt.Errorf("env credential %s: the value is shorter than %d bytes, too short to be masked, so it is not used", k, redact.MinSecretLen)
		}
		vals = append(vals, v)
		secrets[k] = v
	}
	if err := d.addSecrets(vals...); err != nil {
		return exec.Command{}, err
	}
	env := map[string]string{}
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range d.srv.Env {
		env[k] = v
	}
	stderr := &logWriter{log: d.log, mask: d.redact}
	return exec.Command{
		Argv: slices.Clone(d.srv.Command), Dir: d.srv.Dir, Env: env, Secrets: secrets,
		// What the Process keeps of each stream for its Result, which
		// nothing reads: the output itself goes to the client and the log.
		MaxOutput: 4 << 10,
		OnOutput: func(s exec.Stream, p []byte) {
			if s == exec.Stderr {
				_, _ = stderr.Write(p)
			}
		},
	}, nil
}

// notified routes the downstream's notifications: a tool list change, or
// progress of one of the calls in flight.
func (d *downstream) notified(n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged):
		select {
		case d.changed <- struct{}{}:
		default:
		}
	case string(mcp.MethodNotificationProgress):
		tok := fmt.Sprint(n.Params.AdditionalFields["progressToken"])
		d.mu.Lock()
		fn := d.progress[tok]
		d.mu.Unlock()
		if fn != nil {
			fn(n)
		}
	}
}

// reportLost tells the session its connection died.
func (d *downstream) reportLost(err error) {
	select {
	case d.lost <- err:
	default:
	}
}

// current returns the connected client, or nil and why not.
func (d *downstream) current() (*client.Client, Status) {
	d.mu.Lock()
	c := d.c
	d.mu.Unlock()
	return c, d.status()
}

// refresh lists the downstream's tools and sets them on the gateway.
func (d *downstream) refresh(ctx context.Context, c *client.Client) error {
	lctx, cancel := context.WithTimeout(ctx, d.f.cfg.ConnectTimeout)
	defer cancel()
	res, err := c.ListTools(lctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	tools, problems := d.convert(res.Tools)
	if err := d.f.gw.SetTools(d.srv.Name+Separator, tools); err != nil {
		if errors.Is(err, rigout.ErrClosed) {
			return err
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			problems = append(problems, "left out: "+line)
		}
	}
	n := 0
	prefix := d.srv.Name + Separator
	for _, t := range d.f.gw.Tools() {
		if strings.HasPrefix(t.Name, prefix) {
			n++
		}
	}
	if len(problems) > 0 {
		d.log.Warn("federation: downstream tool list has problems", "problems", strings.Join(problems, "; "))
	}
	d.set(func() { d.tools, d.problems = n, problems })
	return nil
}

// logWriter sends a downstream's stderr to the operator's log, a line at
// a time (at most 1 KiB each), masked of its credential values.
type logWriter struct {
	log  *slog.Logger
	mask func(string) string // the downstream's credential values masked
	mu   sync.Mutex
	buf  []byte
	skip bool // dropping the rest of a line that was cut
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if w.skip { // the rest of a line already cut
			if i < 0 {
				w.buf = w.buf[:0]
				return len(p), nil
			}
			w.buf, w.skip = w.buf[i+1:], false
			continue
		}
		if i < 0 {
			if len(w.buf) > maxLogLine+64<<10 {
				// A line this long is cut: what follows, up to its end,
				// is dropped, so no later piece starts inside a value.
				w.emit(w.buf)
				w.buf, w.skip = w.buf[:0], true
			}
			return len(p), nil
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

// maxLogLine is the most of one stderr line logged.
const maxLogLine = 1024

// emit logs one line, masked before it is cut.
func (w *logWriter) emit(line []byte) {
	s := w.mask(string(line))
	if len(s) > maxLogLine {
		s = s[:maxLogLine] + "… [cut]"
	}
	w.log.Info("federation: downstream stderr", "line", s)
}

var _ io.Writer = (*logWriter)(nil)

// alive asks the downstream for a cheap answer: ping, or server/discover
// under protocol 2026-07-28, where mcp-go's Ping sends nothing.
func alive(ctx context.Context, c *client.Client) error {
	if mcp.IsModernProtocol(c.ProtocolVersion()) {
		_, err := c.Discover(ctx, mcp.DiscoverRequest{})
		return err
	}
	return c.Ping(ctx)
}
