// Package sshtest provides an in-process SSH server on loopback TCP for
// tests of SSH clients, built on golang.org/x/crypto/ssh.
//
// The server runs exec requests as real processes (bash -c, else sh -c,
// as sshd runs the login shell), or only records them (Config.RecordOnly,
// for tests that send a command which must be refused before it arrives).
// It honours "env", "pty-req" (the command then runs on a
// pseudo-terminal of that size, as its controlling terminal; the
// requested modes are ignored, as a terminal's defaults echo) and
// "signal" requests, reports "exit-status" or
// "exit-signal", answers keepalive@openssh.com like sshd, and forwards
// direct-tcpip channels to loopback addresses so that it can serve as a
// jump host. It counts accepted connections and
// authentication attempts, and can inject faults: Freeze stops all
// traffic as a stopped process would; a Tarpit accepts TCP and never
// speaks.
//
// Everything a Server starts, Close stops.
package sshtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	osexec "os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Config configures a Server. The zero value is a server with a fresh
// ed25519 host key that lets any public key log in.
type Config struct {
	// HostKeys are the server's host keys. If empty, an ed25519 key is
	// generated.
	HostKeys []ssh.Signer
	// AuthorizedKeys may log in. If empty, any public key may.
	AuthorizedKeys []ssh.PublicKey
	// NoPublicKey turns public key authentication off.
	NoPublicKey bool
	// Password, if set, enables password and keyboard-interactive
	// authentication with that password.
	Password string
	// Shell runs exec commands with -c. If empty, bash when on PATH, else
	// /bin/sh.
	Shell string
	// RecordOnly makes exec requests run nothing: the server records the
	// command (see Server.Commands), accepts the request, writes no
	// output, reads stdin until the client ends it (EOF), then reports
	// exit status 0 and closes the channel. Use it for tests that send a
	// command which must be refused before it reaches the server: if the
	// refusal fails, nothing happens, and the test sees the command in
	// Commands. Shell, Env and Dir are then unused.
	RecordOnly bool
	// Answer, if set, is asked about every exec request before anything
	// runs, with the command and its whole standard input (read to the
	// client's EOF): the server records the command and, when Answer
	// returns handled, writes stdout and exits with code; otherwise it
	// exits with 127. Either way it runs nothing. A test
	// uses it to act as a host whose shell is not a POSIX one (cmd.exe
	// answering the shell probe, say) without running what it is sent.
	Answer func(command string, stdin []byte) (stdout string, code uint32, handled bool)
	// ServerVersion is the version string the server sends. If empty,
	// "SSH-2.0-sshtest".
	ServerVersion string
	// Env is the base environment of commands. If nil, this process's
	// environment.
	Env []string
	// Dir is the working directory of commands. If empty, this process's.
	Dir string
	// AllowForwarding serves direct-tcpip channels to loopback addresses.
	AllowForwarding bool
	// MaxSessions refuses session channels past this many open on one
	// connection, as sshd's MaxSessions. Zero means no limit.
	MaxSessions int
	// Addr is the listen address. If empty, 127.0.0.1 and a free port.
	Addr string
	// Logf, if set, receives debug lines.
	Logf func(format string, args ...any)
}

// Server is a running test SSH server.
type Server struct {
	cfg   Config
	sc    *ssh.ServerConfig
	ln    net.Listener
	shell string
	wg    sync.WaitGroup

	accepted atomic.Int64
	auths    atomic.Int64
	execs    atomic.Int64

	// mu protects the following.
	mu       sync.Mutex
	conns    map[*gateConn]bool
	procs    map[int]bool // process group ids
	commands []string
	signals  []string
	frozen   chan struct{} // nil when not frozen; closed on thaw
	closed   bool
}

// NewServer starts a server on Config.Addr, by default 127.0.0.1 and a
// free port.
func NewServer(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, conns: map[*gateConn]bool{}, procs: map[int]bool{}}
	if len(cfg.HostKeys) == 0 {
		k, err := NewKey("ed25519")
		if err != nil {
			return nil, err
		}
		s.cfg.HostKeys = []ssh.Signer{k.Signer}
	}
	s.shell = cfg.Shell
	if s.shell == "" {
		if p, err := osexec.LookPath("bash"); err == nil {
			s.shell = p
		} else {
			s.shell = "/bin/sh"
		}
	}
	sc := &ssh.ServerConfig{
		AuthLogCallback: func(ssh.ConnMetadata, string, error) { s.auths.Add(1) },
		ServerVersion:   "SSH-2.0-sshtest",
	}
	if cfg.ServerVersion != "" {
		sc.ServerVersion = cfg.ServerVersion
	}
	if !cfg.NoPublicKey {
		sc.PublicKeyCallback = func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if len(s.cfg.AuthorizedKeys) == 0 {
				return &ssh.Permissions{}, nil
			}
			for _, k := range s.cfg.AuthorizedKeys {
				if string(k.Marshal()) == string(key.Marshal()) {
					return &ssh.Permissions{}, nil
				}
			}
			return nil, errors.New("sshtest: key not authorized")
		}
	}
	if cfg.Password != "" {
		sc.PasswordCallback = func(_ ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if string(pw) == s.cfg.Password {
				return &ssh.Permissions{}, nil
			}
			return nil, errors.New("sshtest: wrong password")
		}
		sc.KeyboardInteractiveCallback = func(_ ssh.ConnMetadata, ch ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			ans, err := ch("", "", []string{"Password: "}, []bool{false})
			if err != nil {
				return nil, err
			}
			if len(ans) == 1 && ans[0] == s.cfg.Password {
				return &ssh.Permissions{}, nil
			}
			return nil, errors.New("sshtest: wrong password")
		}
	}
	for _, k := range s.cfg.HostKeys {
		sc.AddHostKey(k)
	}
	s.sc = sc
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.ln = ln
	s.wg.Go(s.serve)
	return s, nil
}

// Addr returns host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Host returns the listening IP address.
func (s *Server) Host() string { return s.ln.Addr().(*net.TCPAddr).IP.String() }

// Port returns the listening port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// HostKey returns the server's first host key.
func (s *Server) HostKey() ssh.PublicKey { return s.cfg.HostKeys[0].PublicKey() }

// KnownHostsLine returns a plain known_hosts line for the server's first
// host key.
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{s.Addr()}, s.HostKey())
}

// Accepted returns how many TCP connections the server accepted.
func (s *Server) Accepted() int { return int(s.accepted.Load()) }

// AuthAttempts returns how many userauth requests arrived, of any method,
// "none" included.
func (s *Server) AuthAttempts() int { return int(s.auths.Load()) }

// Execs returns how many exec requests were served.
func (s *Server) Execs() int { return int(s.execs.Load()) }

// OpenConnections returns how many connections are open now.
func (s *Server) OpenConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Commands returns the exec request strings received, in order.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands)
}

// Signals returns the signal names received ("TERM"), in order.
func (s *Server) Signals() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.signals)
}

// Freeze stops all traffic on every connection, present and future, as a
// stopped server process would: nothing is read or written until Thaw.
// TCP stays up.
func (s *Server) Freeze() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frozen == nil {
		s.frozen = make(chan struct{})
	}
}

// Thaw resumes traffic after Freeze.
func (s *Server) Thaw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frozen != nil {
		close(s.frozen)
		s.frozen = nil
	}
}

func (s *Server) gate() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frozen
}

// DropConnections closes every open connection abruptly.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := make([]*gateConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// Close stops the server: the listener, every connection and every
// command it started. It waits for its goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.frozen != nil {
		close(s.frozen)
		s.frozen = nil
	}
	for pg := range s.procs {
		_ = syscall.Kill(-pg, syscall.SIGKILL)
	}
	s.mu.Unlock()
	s.ln.Close()
	s.DropConnections()
	s.wg.Wait()
	return nil
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

func (s *Server) serve() {
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		gc := &gateConn{Conn: nc, s: s, done: make(chan struct{})}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[gc] = true
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				gc.Close()
				s.mu.Lock()
				delete(s.conns, gc)
				s.mu.Unlock()
			}()
			s.handleConn(gc)
		})
	}
}

// gateConn is a connection that Freeze can stop.
type gateConn struct {
	net.Conn
	s    *Server
	done chan struct{}
	once sync.Once
}

func (c *gateConn) wait() error {
	if g := c.s.gate(); g != nil {
		select {
		case <-g:
		case <-c.done:
			return net.ErrClosed
		}
	}
	return nil
}

func (c *gateConn) Read(b []byte) (int, error) {
	if err := c.wait(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(b)
	if werr := c.wait(); werr != nil {
		return 0, werr
	}
	return n, err
}

func (c *gateConn) Write(b []byte) (int, error) {
	if err := c.wait(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

func (c *gateConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}

func (s *Server) handleConn(nc net.Conn) {
	conn, chans, reqs, err := ssh.NewServerConn(nc, s.sc)
	if err != nil {
		s.logf("sshtest: handshake: %v", err)
		return
	}
	defer conn.Close()
	s.wg.Go(func() {
		for r := range reqs {
			// sshd answers keepalive@openssh.com and any other unknown
			// global request with a failure: a reply all the same.
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
		}
	})
	var sessions atomic.Int64
	for nch := range chans {
		switch nch.ChannelType() {
		case "session":
			if s.cfg.MaxSessions > 0 && sessions.Load() >= int64(s.cfg.MaxSessions) {
				_ = nch.Reject(ssh.Prohibited, "open failed")
				continue
			}
			ch, creqs, err := nch.Accept()
			if err != nil {
				continue
			}
			sessions.Add(1)
			s.wg.Go(func() {
				defer sessions.Add(-1)
				s.session(ch, creqs)
			})
		case "direct-tcpip":
			if !s.cfg.AllowForwarding {
				_ = nch.Reject(ssh.Prohibited, "forwarding disabled")
				continue
			}
			s.forward(nch)
		default:
			_ = nch.Reject(ssh.UnknownChannelType, "unsupported")
		}
	}
}

func (s *Server) forward(nch ssh.NewChannel) {
	var req struct {
		Host     string
		Port     uint32
		OrigHost string
		OrigPort uint32
	}
	if err := ssh.Unmarshal(nch.ExtraData(), &req); err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, "bad request")
		return
	}
	a, err := netip.ParseAddr(req.Host)
	if req.Host != "localhost" && (err != nil || !a.IsLoopback()) {
		_ = nch.Reject(ssh.Prohibited, "only loopback destinations")
		return
	}
	target, err := net.Dial("tcp", net.JoinHostPort(req.Host, strconv.Itoa(int(req.Port))))
	if err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, creqs, err := nch.Accept()
	if err != nil {
		target.Close()
		return
	}
	s.wg.Go(func() { ssh.DiscardRequests(creqs) })
	s.wg.Go(func() {
		// The client's side ending (EOF or close) ends the forward.
		_, _ = io.Copy(target, ch)
		target.Close()
	})
	s.wg.Go(func() {
		_, _ = io.Copy(ch, target)
		ch.Close()
	})
}

type session struct {
	env  []string
	pty  *ptyReq // a "pty-req" was granted
	mu   sync.Mutex
	pgid int
}

func (s *Server) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	sess := &session{}
	var exitOnce sync.Once
	finished := make(chan struct{})
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			if ssh.Unmarshal(req.Payload, &kv) == nil {
				sess.env = append(sess.env, kv.Name+"="+kv.Value)
			}
			_ = req.Reply(true, nil)
		case "pty-req":
			var pr ptyReq
			if err := ssh.Unmarshal(req.Payload, &pr); err != nil {
				_ = req.Reply(false, nil)
				continue
			}
			sess.pty = &pr
			_ = req.Reply(true, nil)
		case "exec":
			var cmd struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &cmd); err != nil {
				_ = req.Reply(false, nil)
				continue
			}
			if s.cfg.Answer != nil {
				command := cmd.Command
				_ = req.Reply(true, nil)
				s.wg.Go(func() {
					in, _ := io.ReadAll(ch)
					out, code, handled := s.cfg.Answer(command, in)
					s.record(command)
					if handled {
						_, _ = io.WriteString(ch, out)
					} else {
						code = 127
					}
					s.exit(ch, code)
				})
				continue
			}
			if s.cfg.RecordOnly {
				s.record(cmd.Command)
				_ = req.Reply(true, nil)
				s.wg.Go(func() {
					// Read stdin to its end, as a command that reads its
					// input would, so that the client's copy never fails.
					_, _ = io.Copy(io.Discard, ch)
					s.exit(ch, 0)
				})
				continue
			}
			proc, err := s.start(ch, sess, cmd.Command)
			if err != nil {
				s.logf("sshtest: start: %v", err)
				_ = req.Reply(false, nil)
				continue
			}
			_ = req.Reply(true, nil)
			s.wg.Go(func() {
				s.finish(ch, sess, proc)
				exitOnce.Do(func() { close(finished) })
			})
		case "signal":
			var sig struct{ Signal string }
			if ssh.Unmarshal(req.Payload, &sig) == nil {
				s.mu.Lock()
				s.signals = append(s.signals, sig.Signal)
				s.mu.Unlock()
				sess.mu.Lock()
				pg := sess.pgid
				sess.mu.Unlock()
				if n, ok := signalNumbers[sig.Signal]; ok && pg > 0 {
					_ = syscall.Kill(-pg, n)
				}
			}
			if req.WantReply {
				_ = req.Reply(true, nil)
			}
		default:
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
	// The client closed the channel: end the command, as sshd ends the
	// session (the pipes close and the group is signalled here so that
	// tests leave nothing behind).
	sess.mu.Lock()
	pg := sess.pgid
	sess.mu.Unlock()
	if pg > 0 {
		_ = syscall.Kill(-pg, syscall.SIGKILL)
	}
}

type proc struct {
	cmd    *osexec.Cmd
	stdin  io.WriteCloser
	master *os.File      // with a pty-req: the terminal's master
	copied chan struct{} // closed once the master's output is copied
}

// ptyReq is a "pty-req" payload (RFC 4254 6.2).
type ptyReq struct {
	Term             string
	Cols, Rows, W, H uint32
	Modes            string
}

// record counts an exec request and keeps its command.
func (s *Server) record(command string) {
	s.execs.Add(1)
	s.mu.Lock()
	s.commands = append(s.commands, command)
	s.mu.Unlock()
}

// exit reports an exit status and closes the channel.
func (s *Server) exit(ch ssh.Channel, code uint32) {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, code)
	_, _ = ch.SendRequest("exit-status", false, b)
	_ = ch.CloseWrite()
	ch.Close()
}

func (s *Server) start(ch ssh.Channel, sess *session, command string) (*proc, error) {
	s.record(command)
	cmd := osexec.Command(s.shell, "-c", command)
	env := s.cfg.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clone(env), sess.env...)
	cmd.Dir = s.cfg.Dir
	cmd.Stdout = ch
	cmd.Stderr = ch.Stderr()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if sess.pty != nil {
		return s.startPTY(ch, sess, cmd)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.track(sess, cmd.Process.Pid)
	s.wg.Go(func() {
		_, _ = io.Copy(stdin, ch)
		stdin.Close()
	})
	return &proc{cmd: cmd, stdin: stdin}, nil
}

// track records the started command's process group, pg, as the
// session's and the server's, and kills it at once if the server closed
// meanwhile.
func (s *Server) track(sess *session, pg int) {
	sess.mu.Lock()
	sess.pgid = pg
	sess.mu.Unlock()
	s.mu.Lock()
	s.procs[pg] = true
	closed := s.closed
	s.mu.Unlock()
	if closed {
		_ = syscall.Kill(-pg, syscall.SIGKILL)
	}
}

// startPTY starts cmd on a new pseudo-terminal, in a session of its own
// whose controlling terminal it is, and copies the channel to the
// terminal and the terminal to the channel.
func (s *Server) startPTY(ch ssh.Channel, sess *session, cmd *osexec.Cmd) (*proc, error) {
	master, tty, err := pty.Open()
	if err != nil {
		return nil, err
	}
	if sess.pty.Rows > 0 && sess.pty.Cols > 0 {
		_ = pty.Setsize(master, &pty.Winsize{Rows: uint16(sess.pty.Rows), Cols: uint16(sess.pty.Cols)})
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = cmd.Start()
	_ = tty.Close()
	if err != nil {
		_ = master.Close()
		return nil, err
	}
	s.track(sess, cmd.Process.Pid)
	p := &proc{cmd: cmd, stdin: master, master: master, copied: make(chan struct{})}
	s.wg.Go(func() { _, _ = io.Copy(master, ch) })
	s.wg.Go(func() {
		defer close(p.copied)
		_, _ = io.Copy(ch, master) // ends with EIO once no process holds the terminal
	})
	return p, nil
}

func (s *Server) finish(ch ssh.Channel, sess *session, p *proc) {
	err := p.cmd.Wait()
	if p.master != nil {
		<-p.copied
		_ = p.master.Close()
	}
	pg := p.cmd.Process.Pid
	s.mu.Lock()
	delete(s.procs, pg)
	s.mu.Unlock()
	sess.mu.Lock()
	sess.pgid = 0
	sess.mu.Unlock()
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	var exitErr *osexec.ExitError
	switch {
	case ws.Signaled():
		name := signalNames[ws.Signal()]
		if name == "" {
			name = "USR2"
		}
		payload := ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}{Signal: name})
		_, _ = ch.SendRequest("exit-signal", false, payload)
	case err == nil || errors.As(err, &exitErr):
		s.exit(ch, uint32(p.cmd.ProcessState.ExitCode()))
		return
	}
	_ = ch.CloseWrite()
	ch.Close()
}

var signalNumbers = map[string]syscall.Signal{
	"ABRT": syscall.SIGABRT, "ALRM": syscall.SIGALRM, "FPE": syscall.SIGFPE, "HUP": syscall.SIGHUP,
	"ILL": syscall.SIGILL, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL, "PIPE": syscall.SIGPIPE,
	"QUIT": syscall.SIGQUIT, "SEGV": syscall.SIGSEGV, "TERM": syscall.SIGTERM, "USR1": syscall.SIGUSR1,
	"USR2": syscall.SIGUSR2,
}

var signalNames = func() map[syscall.Signal]string {
	m := map[syscall.Signal]string{}
	for k, v := range signalNumbers {
		m[v] = k
	}
	return m
}()

// Tarpit accepts TCP connections and never sends a byte: a server that
// hangs before its SSH banner.
type Tarpit struct {
	ln       net.Listener
	wg       sync.WaitGroup
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
}

// NewTarpit listens on 127.0.0.1 and a free port.
func NewTarpit() (*Tarpit, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &Tarpit{ln: ln}
	t.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.accepted.Add(1)
			t.mu.Lock()
			t.conns = append(t.conns, c)
			t.mu.Unlock()
		}
	})
	return t, nil
}

// Addr returns host:port.
func (t *Tarpit) Addr() string { return t.ln.Addr().String() }

// Port returns the listening port.
func (t *Tarpit) Port() int { return t.ln.Addr().(*net.TCPAddr).Port }

// Accepted returns how many connections were accepted.
func (t *Tarpit) Accepted() int { return int(t.accepted.Load()) }

// Close closes the listener and every connection.
func (t *Tarpit) Close() error {
	t.ln.Close()
	t.wg.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.conns {
		c.Close()
	}
	return nil
}

// Key is a key pair for tests: a host key, or a user key written to a file.
type Key struct {
	// Signer signs with the key.
	Signer ssh.Signer
	// Private is the private key (ed25519.PrivateKey, *ecdsa.PrivateKey
	// or *rsa.PrivateKey).
	Private crypto.PrivateKey
}

// NewKey generates a key: "ed25519", "ecdsa" (P-256) or "rsa" (2048 bits).
func NewKey(kind string) (*Key, error) {
	var priv crypto.PrivateKey
	var err error
	switch kind {
	case "ed25519":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	case "ecdsa":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "rsa":
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		return nil, fmt.Errorf("sshtest: unknown key kind %q", kind)
	}
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	return &Key{Signer: signer, Private: priv}, nil
}

// Public returns the public key.
func (k *Key) Public() ssh.PublicKey { return k.Signer.PublicKey() }

// Write writes the private key in OpenSSH format to path (mode 0600), and
// the public key to path+".pub". A non-empty passphrase encrypts it.
func (k *Key) Write(path, passphrase string) error {
	var block *pem.Block
	var err error
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(k.Private, "sshtest")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(k.Private, "sshtest", []byte(passphrase))
	}
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return err
	}
	return os.WriteFile(path+".pub", ssh.MarshalAuthorizedKey(k.Public()), 0o644)
}

// AuthorizedKey returns the key as an authorized_keys line.
func (k *Key) AuthorizedKey() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k.Public())))
}
