// Package pgtest starts a real, throwaway PostgreSQL server for tests and
// benchmarks: initdb into a temporary directory, then postgres listening on
// a free loopback port and a Unix socket in that directory, run as an
// unprivileged user (postgres refuses to run as root), stopped by its PID
// when the test ends (or, for [Launch], when the caller calls
// [Server.Close]).
//
// Without the server binaries (Debian's postgresql package) [Start] skips
// the test loudly; with RIGOUT_REQUIRE_POSTGRES=1 in the environment, as in
// CI, it fails it instead.
package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing server into
// a test failure.
const RequireEnv = "RIGOUT_REQUIRE_POSTGRES"

// Server is a running PostgreSQL server owned by one test.
type Server struct {
	Dir  string // the data directory, which also holds the Unix socket
	Port int    // the TCP port on 127.0.0.1
	bin  string // directory of initdb, postgres, pg_ctl
	uid  int    // the user the server runs as
	gid  int
	cmd  *exec.Cmd
	done chan struct{}
	t    testing.TB // nil for a server from Launch
	sync bool       // fsync on, for benchmarks
	pw   string     // the superuser's password once RequirePassword was called
}

// Bin returns the directory holding the server binaries, or an error
// saying how to install them.
func Bin() (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(matches) == 0 {
		if p, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
		return "", errors.New("no PostgreSQL server binaries (apt-get install postgresql)")
	}
	sort.Strings(matches)
	return filepath.Dir(matches[len(matches)-1]), nil
}

// Start initialises and starts a server for t, or skips t loudly (fails it
// under RIGOUT_REQUIRE_POSTGRES=1) when PostgreSQL is not installed.
//
// The server runs with fsync=off, which makes tests fast and keeps every
// commit safe against a crash of the server process (not of the machine);
// benchmarks use [StartDurable].
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, false)
}

// StartDurable is [Start] with fsync on, as in production: for benchmarks
// that compare the cost of a durable commit.
func StartDurable(t testing.TB) *Server {
	t.Helper()
	return start(t, true)
}

func start(t testing.TB, durable bool) *Server {
	t.Helper()
	if _, err := Bin(); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("pgtest: %v, and %s=1", err, RequireEnv)
		}
		t.Skipf("SKIP: pgtest: %v; set %s=1 to make this a failure", err, RequireEnv)
	}
	s, err := Launch(durable)
	if err != nil {
		t.Fatalf("%v", err)
	}
	s.t = t
	t.Cleanup(s.Close)
	return s
}

// Launch initialises and starts a server outside a test, with fsync on when
// durable is true, and waits until it accepts connections. The caller must
// call [Server.Close]. Methods that fail a test (Restart, CreateDB, Psql,
// RequirePassword) panic on a server from Launch; use [Server.Exec].
func Launch(durable bool) (*Server, error) {
	bin, err := Bin()
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{bin: bin, uid: -1, gid: -1, sync: durable}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgtest: running as root needs the postgres system user: %w", err)
		}
		s.uid, _ = strconv.Atoi(u.Uid)
		s.gid, _ = strconv.Atoi(u.Gid)
	}
	// A short path: the socket path must fit in sun_path (108 bytes).
	if s.Dir, err = os.MkdirTemp("", "pg"); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := s.launch(); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	return s, nil
}

// launch makes the data directory and starts the server in it.
func (s *Server) launch() error {
	if s.uid >= 0 {
		if err := os.Chown(s.Dir, s.uid, s.gid); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	out, err := s.command("initdb", "-D", s.Dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	if s.Port, err = freePort(); err != nil {
		return err
	}
	return s.restart()
}

// Close stops the server and removes its data directory.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.Dir)
}

// fatalf fails the test that owns s, or panics for a server from Launch.
func (s *Server) fatalf(format string, args ...any) {
	if s.t == nil {
		panic(fmt.Sprintf(format, args...))
	}
	s.t.Helper()
	s.t.Fatalf(format, args...)
}

// command runs one of the server binaries as the server's user.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)}}
	}
	return cmd
}

// Restart starts the server if it is stopped and waits until it accepts
// connections.
func (s *Server) Restart() {
	if s.t != nil {
		s.t.Helper()
	}
	if err := s.restart(); err != nil {
		s.fatalf("%v", err)
	}
}

func (s *Server) restart() error {
	if s.cmd != nil {
		return nil
	}
	log, err := os.OpenFile(filepath.Join(s.Dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	fsync := "fsync=off"
	if s.sync {
		fsync = "fsync=on"
	}
	cmd := s.command("postgres", "-D", s.Dir, "-k", s.Dir, "-c", "listen_addresses=127.0.0.1",
		"-p", strconv.Itoa(s.Port), "-c", fsync, "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	log.Close()
	s.cmd, s.done = cmd, make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(cmd, s.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", s.addr(), time.Second); err == nil {
			c.Close()
			// The port opens before recovery ends; pg_isready tells.
			if s.command("pg_isready", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-q").Run() == nil {
				return nil
			}
		}
		select {
		case <-s.done:
			b, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
			s.cmd = nil
			return fmt.Errorf("pgtest: postgres exited at start:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return errors.New("pgtest: postgres did not accept connections within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server by its PID (fast shutdown, SIGINT) and waits for it
// to exit; a server still running after 20s is killed. Stop on a stopped
// server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

func (s *Server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// DSN returns a connection string for database db (created by
// [Server.CreateDB]; "postgres" always exists) as the superuser postgres,
// which trusts loopback connections.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", s.addr(), db)
}

// CreateDB creates database name and returns its DSN.
func (s *Server) CreateDB(name string) string {
	if s.t != nil {
		s.t.Helper()
	}
	s.Psql("postgres", "CREATE DATABASE "+name)
	return s.DSN(name)
}

// Psql runs sql with psql against database db, failing the test on error,
// and returns its unaligned, tuples-only output.
func (s *Server) Psql(db, sql string) string {
	if s.t != nil {
		s.t.Helper()
	}
	out, err := s.Exec(db, sql)
	if err != nil {
		s.fatalf("%v", err)
	}
	return out
}

// Exec runs sql with psql against database db and returns its unaligned,
// tuples-only output, or an error holding psql's.
func (s *Server) Exec(db, sql string) (string, error) {
	cmd := exec.Command("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", s.DSN(db), "-c", sql)
	cmd.Env = os.Environ()
	if s.pw != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+s.pw)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("pgtest: psql %q: %v\n%s", sql, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// RequirePassword gives the superuser postgres the password pw and makes
// the server require it (SCRAM) on TCP connections; the Unix socket stays
// trusted. [Server.Psql] then sends it; a [Server.DSN] carries none.
func (s *Server) RequirePassword(pw string) {
	if s.t != nil {
		s.t.Helper()
	}
	s.Psql("postgres", "ALTER USER postgres PASSWORD '"+strings.ReplaceAll(pw, "'", "''")+"'")
	s.pw = pw
	hba := "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(s.Dir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		s.fatalf("pgtest: %v", err)
	}
	if s.uid >= 0 {
		os.Chown(filepath.Join(s.Dir, "pg_hba.conf"), s.uid, s.gid)
	}
	s.Psql("postgres", "SELECT pg_reload_conf()")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
