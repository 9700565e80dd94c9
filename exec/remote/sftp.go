package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// ErrNotSSH means an SFTP client was asked for a host the routing ladder
// leads to this machine; use the local file system there.
var ErrNotSSH = errors.New("exec: host is this machine, not an SSH host")

// SFTPLease is the use of one pooled connection's SFTP client, from
// [Router.SFTP] until [SFTPLease.Release]. The client is shared: every
// lease on the same pooled connection gets the same *sftp.Client, which
// runs concurrent requests (reads and writes pipelined). Do not Close it;
// it closes with its connection (idle TTL, dead keepalive, Router.Close).
type SFTPLease struct {
	// Client speaks SFTP to the host's sftp subsystem.
	Client *sftp.Client
	// Route is the path taken, as Target.Route: "ssh(web1 → …)".
	Route string
	// Host is the host asked for.
	Host string

	c    *conn
	once sync.Once
}

// Release gives back the lease's channel slot, so the pooled connection
// can go idle. It is safe to call twice.
func (l *SFTPLease) Release() {
	l.once.Do(l.c.release)
}

// openSSHPacket is the SFTP read and write size used with OpenSSH servers.
const openSSHPacket = 128 << 10

// sftpSlot is a pooled connection's SFTP client, opened on first use.
type sftpSlot struct {
	// mu protects the following.
	mu     sync.Mutex
	client *sftp.Client
	sess   *ssh.Session
	dead   chan struct{} // closed when client's connection has ended
}

// get returns the connection's SFTP client, opening the sftp subsystem
// on a session channel when there is none or the last one ended.
func (s *sftpSlot) get(ctx context.Context, c *conn) (*sftp.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		select {
		case <-s.dead:
			s.client.Close()
			s.sess.Close()
			s.client, s.sess = nil, nil
		default:
			return s.client, nil
		}
	}
	sess, err := c.client.NewSession()
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { sess.Close() })
	defer stop()
	w, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	r, err := sess.StdoutPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	if err := sess.RequestSubsystem("sftp"); err != nil {
		sess.Close()
		return nil, fmt.Errorf("sftp subsystem: %w", err)
	}
	opts := []sftp.ClientOption{sftp.UseConcurrentWrites(true), sftp.UseConcurrentReads(true)}
	if strings.Contains(string(c.client.ServerVersion()), "OpenSSH") {
		// OpenSSH's sftp-server takes messages up to 256 KiB; 128 KiB
		// reads and writes halve the requests of the 32 KiB default, the
		// most every server must accept.
		opts = append(opts, sftp.MaxPacketUnchecked(openSSHPacket))
	}
	cl, err := sftp.NewClientPipe(r, w, opts...)
	if err != nil {
		sess.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("sftp: %w", err)
	}
	// Session.Wait does not wait for a subsystem (it was not started with
	// Start), so watch the client: its Wait returns when the channel ends.
	dead := make(chan struct{})
	c.p.goTracked(func() {
		_ = cl.Wait()
		close(dead)
	})
	s.client, s.sess, s.dead = cl, sess, dead
	return cl, nil
}

// close closes the client, if any; the connection is closing.
func (s *sftpSlot) close() {
	s.mu.Lock()
	cl, sess := s.client, s.sess
	s.client, s.sess = nil, nil
	s.mu.Unlock()
	if cl != nil {
		cl.Close()
		sess.Close()
	}
}

// SFTP returns a lease on the SFTP client of principal's pooled connection
// to host (resolved through the routing ladder, see Resolve), dialling the
// connection if needed. One SFTP session serves every lease on a
// connection; it holds one of the connection's channels for as long as the
// connection lives. A host that leads to this machine is ErrNotSSH.
func (r *Router) SFTP(ctx context.Context, host, principal string) (*SFTPLease, error) {
	t, ep, err := r.resolve(ctx, host, principal)
	if err != nil {
		return nil, err
	}
	if t.Local {
		return nil, ErrNotSSH
	}
	c, err := r.pool.acquire(ctx, ep.poolKey(principal), func(dctx context.Context) (*conn, error) {
		return r.dialEndpoint(dctx, ep, principal)
	})
	if err != nil {
		return nil, err
	}
	cl, err := c.sftp.get(ctx, c)
	if err != nil {
		c.release()
		if cause := c.lost(); cause != nil {
			return nil, &DisconnectError{Host: ep.Name, Err: cause}
		}
		return nil, fmt.Errorf("exec: sftp on %s: %w", ep.Name, err)
	}
	return &SFTPLease{Client: cl, Route: t.Route, Host: t.Host, c: c}, nil
}
