package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// DisconnectError reports a connection that died while a command used it:
// the keepalive went unanswered, or the peer closed it. Whether the remote
// command finished is unknown.
type DisconnectError struct {
	// Host is the name asked for.
	Host string
	// Err says why the connection ended.
	Err error
}

func (e *DisconnectError) Error() string {
	return fmt.Sprintf("exec: connection to %s lost: %v", e.Host, e.Err)
}

// Unwrap returns Err.
func (e *DisconnectError) Unwrap() error { return e.Err }

// errKeepalive is the cause recorded when keepalives go unanswered.
type keepaliveError struct {
	interval time.Duration
	count    int
}

func (e *keepaliveError) Error() string {
	return fmt.Sprintf("no reply to %d keepalives sent %v apart (peer frozen or network down)", e.count, e.interval)
}

// poolConfig holds the pool's settings, defaults applied.
type poolConfig struct {
	keepalive   time.Duration
	keepaliveN  int
	idleTTL     time.Duration
	maxChannels int
	logger      *slog.Logger
}

// pool keeps one or more multiplexed SSH connections per key (principal,
// login, transport). Connections are opened on demand, carry at most
// maxChannels sessions each, are probed with keepalive@openssh.com and
// closed after idleTTL without sessions or when a probe goes unanswered.
type pool struct {
	cfg poolConfig
	// wg counts the goroutines the pool started: one supervisor and one
	// waiter per connection, plus helpers that finish a session whose
	// caller has gone.
	wg sync.WaitGroup

	// mu protects the following.
	mu     sync.Mutex
	closed bool
	groups map[string]*group
}

type group struct {
	conns   []*conn
	dialing *dialAttempt
}

type dialAttempt struct {
	done chan struct{}
	err  error
}

// conn is one pooled SSH connection.
type conn struct {
	p      *pool
	key    string
	host   string // name, for errors
	client *ssh.Client
	// closers are closed after client: jump-host clients, a proxy command.
	closers     []io.Closer
	fingerprint string
	sftp        sftpSlot   // the SFTP client, opened on first use (sftp.go)
	helper      helperSlot // the rigout helper, started on first use (helperclient.go)
	keepalive   time.Duration
	keepaliveN  int

	stop     chan struct{} // closed to retire the connection
	stopOnce sync.Once
	dead     chan struct{} // closed when the connection has ended
	idleKick chan struct{}

	// The following are protected by p.mu.
	active   int
	limit    int
	lastUsed time.Time
	retired  bool
	cause    error
}

func newPool(cfg poolConfig) *pool {
	return &pool{cfg: cfg, groups: map[string]*group{}}
}

// acquire returns a connection for key with a free channel slot, dialling
// one with dial when none has room. Concurrent callers for the same key
// wait for one dial rather than each opening a connection; if that dial
// fails they get its error.
func (p *pool) acquire(ctx context.Context, key string, dial func(context.Context) (*conn, error)) (*conn, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		g := p.groups[key]
		if g == nil {
			g = &group{}
			p.groups[key] = g
		}
		for _, c := range g.conns {
			if !c.retired && c.active < c.limit {
				c.active++
				p.mu.Unlock()
				return c, nil
			}
		}
		if a := g.dialing; a != nil {
			p.mu.Unlock()
			select {
			case <-a.done:
				if a.err != nil && !isContextError(a.err) {
					return nil, a.err
				}
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		a := &dialAttempt{done: make(chan struct{})}
		g.dialing = a
		p.mu.Unlock()

		c, err := dial(ctx)

		p.mu.Lock()
		g.dialing = nil
		a.err = err
		close(a.done)
		if err != nil {
			if len(g.conns) == 0 && p.groups[key] == g {
				delete(p.groups, key)
			}
			p.mu.Unlock()
			return nil, err
		}
		if p.closed {
			p.mu.Unlock()
			c.closeTransport()
			return nil, ErrClosed
		}
		c.p, c.key = p, key
		c.active, c.limit = 1, p.cfg.maxChannels
		c.lastUsed = time.Now()
		g.conns = append(g.conns, c)
		p.mu.Unlock()
		p.start(c)
		return c, nil
	}
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// release gives back a channel slot.
func (c *conn) release() {
	p := c.p
	p.mu.Lock()
	c.active--
	c.lastUsed = time.Now()
	idle := c.active == 0
	p.mu.Unlock()
	if idle {
		select {
		case c.idleKick <- struct{}{}:
		default:
		}
	}
}

// saturate lowers the connection's channel limit to what it carries now,
// after the server refused one more channel (sshd MaxSessions).
func (c *conn) saturate() {
	c.p.mu.Lock()
	if c.active-1 < c.limit {
		c.limit = max(c.active-1, 1)
	}
	c.p.mu.Unlock()
}

// kill ends the connection with cause (recorded for DisconnectError).
func (c *conn) kill(cause error) {
	c.p.mu.Lock()
	if c.cause == nil {
		c.cause = cause
	}
	c.p.mu.Unlock()
	c.retire()
}

// retire stops new sessions on c and closes it.
func (c *conn) retire() {
	c.stopOnce.Do(func() { close(c.stop) })
}

// lost returns why the connection ended, or nil while it is up.
func (c *conn) lost() error {
	select {
	case <-c.dead:
	default:
		return nil
	}
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if c.cause != nil {
		return c.cause
	}
	return errors.New("the server closed the connection")
}

func (c *conn) closeTransport() {
	c.client.Close()
	c.sftp.close()
	c.helper.close()
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i].Close()
	}
}

// start runs the connection's supervisor: keepalive, idle TTL, and removal
// from the pool when the connection ends.
func (p *pool) start(c *conn) {
	waited := make(chan error, 1)
	p.goTracked(func() { waited <- c.client.Wait() })
	p.goTracked(func() { c.supervise(waited) })
}

func (c *conn) supervise(waited <-chan error) {
	p := c.p
	defer close(c.dead)
	defer p.remove(c)

	var tick <-chan time.Time
	if c.keepalive > 0 {
		t := time.NewTicker(c.keepalive)
		defer t.Stop()
		tick = t.C
	}
	idle := time.NewTimer(p.cfg.idleTTL)
	defer idle.Stop()

	replies := make(chan error, 1)
	var probes sync.WaitGroup
	defer probes.Wait()
	inflight, missed := false, 0

	for {
		select {
		case err := <-waited:
			c.p.mu.Lock()
			if c.cause == nil && err != nil {
				c.cause = err
			}
			c.p.mu.Unlock()
			c.closeTransport()
			return
		case <-c.stop:
			c.closeTransport()
			<-waited
			return
		case err := <-replies:
			inflight = false
			if err == nil {
				missed = 0
			}
		case <-tick:
			if inflight {
				missed++
				if missed >= c.keepaliveN {
					cause := &keepaliveError{interval: c.keepalive, count: c.keepaliveN}
					p.cfg.logger.LogAttrs(context.Background(), slog.LevelWarn, "ssh connection dead",
						slog.String("host", c.host), slog.String("reason", cause.Error()))
					c.kill(cause)
				}
				continue
			}
			inflight = true
			probes.Go(func() {
				_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
				replies <- err
			})
		case <-c.idleKick:
			idle.Reset(p.cfg.idleTTL)
		case <-idle.C:
			p.mu.Lock()
			expired := c.active == 0 && time.Since(c.lastUsed) >= p.cfg.idleTTL-10*time.Millisecond
			if expired {
				c.retired = true
			}
			wait := p.cfg.idleTTL - time.Since(c.lastUsed)
			p.mu.Unlock()
			if expired {
				p.cfg.logger.LogAttrs(context.Background(), slog.LevelDebug, "ssh connection idle, closing", slog.String("host", c.host))
				c.retire()
				continue
			}
			if wait <= 0 {
				wait = p.cfg.idleTTL
			}
			idle.Reset(wait)
		}
	}
}

// remove drops c from its group.
func (p *pool) remove(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.retired = true
	g := p.groups[c.key]
	if g == nil {
		return
	}
	g.conns = slices.DeleteFunc(g.conns, func(x *conn) bool { return x == c })
	if len(g.conns) == 0 && g.dialing == nil {
		delete(p.groups, c.key)
	}
}

// close retires every connection and waits for the pool's goroutines.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	var all []*conn
	for _, g := range p.groups {
		all = append(all, g.conns...)
	}
	p.mu.Unlock()
	for _, c := range all {
		c.retire()
	}
	p.wg.Wait()
}

// goTracked runs f on a goroutine that close waits for. After close it
// runs f on a plain goroutine: every connection is closed by then, so f
// ends promptly.
func (p *pool) goTracked(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go f()
		return
	}
	p.wg.Go(f)
}

// ErrClosed means the Router was closed.
var ErrClosed = errors.New("exec: router closed")
