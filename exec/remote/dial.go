package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// DialError reports a host that could not be reached, or that refused
// rigout before a command could start: TCP failure, handshake timeout,
// host key refusal (a *HostKeyError inside), login failure (an *AuthError
// inside).
type DialError struct {
	// Host is the name asked for; Address the host:port dialled.
	Host    string
	Address string
	// Err says what went wrong.
	Err error
}

func (e *DialError) Error() string {
	msg := e.Err.Error()
	var hk *HostKeyError
	var ae *AuthError
	if errors.As(e.Err, &hk) || errors.As(e.Err, &ae) {
		// These carry the host already.
		return msg
	}
	return fmt.Sprintf("exec: cannot reach %s (%s): %s", e.Host, e.Address, strings.TrimPrefix(msg, "exec: "))
}

// Unwrap returns Err.
func (e *DialError) Unwrap() error { return e.Err }

// ErrConnectTimeout means the TCP connection or the SSH handshake did not
// complete within the connect timeout.
var ErrConnectTimeout = errors.New("exec: connect timeout")

// dialEndpoint opens a connection to ep for principal, through its jump
// hosts, each hop's key checked against its own known_hosts entry.
func (r *Router) dialEndpoint(ctx context.Context, ep *Endpoint, principal string) (*conn, error) {
	hops := make([]Endpoint, 0, len(ep.Jumps)+1)
	hops = append(hops, ep.Jumps...)
	last := *ep
	last.Jumps = nil
	hops = append(hops, last)

	var client *ssh.Client
	var closers []io.Closer
	fail := func(err error) (*conn, error) {
		if client != nil {
			client.Close()
		}
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i].Close()
		}
		return nil, err
	}
	var fingerprint string
	for i := range hops {
		h := &hops[i]
		timeout := r.cfg.ConnectTimeout
		if h.ConnectTimeout > 0 {
			timeout = h.ConnectTimeout
		}
		// Keys are read (and decrypted, which takes a while) before the
		// connect timeout starts.
		creds := r.auth.load(ctx, h)
		hctx, cancel := context.WithTimeout(ctx, timeout)
		nc, err := r.transport(hctx, h, client)
		if err != nil {
			cancel()
			creds.close()
			return fail(r.dialError(ctx, ep, h, i < len(hops)-1, connectErr(ctx, hctx, err, timeout, "connect")))
		}
		c, fp, err := r.handshake(ctx, hctx, nc, h, principal, timeout, creds)
		creds.close()
		cancel()
		if err != nil {
			nc.Close()
			return fail(r.dialError(ctx, ep, h, i < len(hops)-1, err))
		}
		if client != nil {
			closers = append(closers, client)
		}
		client, fingerprint = c, fp
	}
	ka, kn := r.cfg.KeepaliveInterval, r.cfg.KeepaliveCountMax
	if ep.KeepaliveInterval > 0 {
		ka = ep.KeepaliveInterval
	}
	if ep.KeepaliveCountMax > 0 {
		kn = ep.KeepaliveCountMax
	}
	return &conn{
		host: ep.Name, client: client, closers: closers, fingerprint: fingerprint,
		keepalive: ka, keepaliveN: kn,
		stop: make(chan struct{}), dead: make(chan struct{}), idleKick: make(chan struct{}, 1),
	}, nil
}

func (r *Router) dialError(ctx context.Context, ep, h *Endpoint, jump bool, err error) error {
	if jump {
		err = fmt.Errorf("jump host %s (%s): %w", h.Name, h.Address(), err)
	}
	return &DialError{Host: ep.Name, Address: ep.Address(), Err: err}
}

// connectErr names a timeout as such, and a name that does not resolve
// as that (even when the resolver timed out): not as a host that did not
// answer.
func connectErr(parent, hctx context.Context, err error, timeout time.Duration, what string) error {
	if parent.Err() != nil {
		return fmt.Errorf("%s: %w", what, context.Cause(parent))
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return fmt.Errorf("%s: DNS: no such host %s: %w", what, dns.Name, err)
		}
		return fmt.Errorf("%s: DNS: cannot resolve %s (%s): %w", what, dns.Name, dns.Err, err)
	}
	var ne net.Error
	if hctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%s: no answer within %v: %w", what, timeout, ErrConnectTimeout)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// transport opens the byte stream for one hop: TCP for the first hop (or
// the ProxyCommand, when enabled), a direct-tcpip channel through the
// previous hop otherwise.
func (r *Router) transport(ctx context.Context, h *Endpoint, via *ssh.Client) (net.Conn, error) {
	if via != nil {
		return via.DialContext(ctx, "tcp", h.Address())
	}
	if h.ProxyCommand != "" {
		return startProxyCommand(h.ProxyCommand)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", h.Address())
}

// handshake runs the SSH handshake on nc within the connect timeout: a
// deadline on the connection, and a context.AfterFunc that closes it when
// hctx ends (x/crypto's own Timeout covers only the TCP dial).
func (r *Router) handshake(parent, hctx context.Context, nc net.Conn, h *Endpoint, principal string, timeout time.Duration, creds *credentials) (*ssh.Client, string, error) {
	known, err := r.keys.known(h.Address())
	if err != nil {
		return nil, "", err
	}
	var refused *HostKeyError
	var authFailed *AuthError
	var fingerprint string
	auth, authCB := creds.methods(h.Name, h.User, &authFailed)
	cfg := &ssh.ClientConfig{
		User:              h.User,
		Auth:              auth,
		AuthCallback:      authCB,
		HostKeyCallback:   r.keys.callback(parent, hop{name: h.Name, addr: h.Address(), principal: principal}, &refused, &fingerprint),
		HostKeyAlgorithms: algorithms(known),
		ClientVersion:     "SSH-2.0-rigout",
	}
	if dl, ok := hctx.Deadline(); ok {
		_ = nc.SetDeadline(dl) // channels through a jump host do not support it; the AfterFunc covers them
	}
	stop := context.AfterFunc(hctx, func() { nc.Close() })
	c, chans, reqs, err := ssh.NewClientConn(nc, h.Address(), cfg)
	interrupted := !stop()
	if err != nil {
		switch {
		case refused != nil:
			return nil, "", refused
		case authFailed != nil:
			return nil, "", authFailed
		case interrupted || hctx.Err() != nil:
			return nil, "", connectErr(parent, hctx, err, timeout, "SSH handshake")
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, "", connectErr(parent, hctx, err, timeout, "SSH handshake")
		}
		return nil, "", fmt.Errorf("SSH handshake: %w", err)
	}
	if interrupted {
		c.Close()
		return nil, "", connectErr(parent, hctx, context.DeadlineExceeded, timeout, "SSH handshake")
	}
	_ = nc.SetDeadline(time.Time{})
	return ssh.NewClient(c, chans, reqs), fingerprint, nil
}

// proxyConn is a net.Conn over a ProxyCommand's standard input and output.
type proxyConn struct {
	cmd  *osexec.Cmd
	r    io.ReadCloser
	w    io.WriteCloser
	once sync.Once
}

func startProxyCommand(command string) (net.Conn, error) {
	cmd := osexec.Command("/bin/sh", "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	rd, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ProxyCommand: %w", err)
	}
	return &proxyConn{cmd: cmd, r: rd, w: w}, nil
}

func (p *proxyConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *proxyConn) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p *proxyConn) Close() error {
	p.once.Do(func() {
		p.w.Close()
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return nil
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "proxy-command" }

func (p *proxyConn) LocalAddr() net.Addr                { return pipeAddr{} }
func (p *proxyConn) RemoteAddr() net.Addr               { return pipeAddr{} }
func (p *proxyConn) SetDeadline(t time.Time) error      { return nil }
func (p *proxyConn) SetReadDeadline(t time.Time) error  { return nil }
func (p *proxyConn) SetWriteDeadline(t time.Time) error { return nil }
