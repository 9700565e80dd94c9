package files_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/files"
)

// setup describes one test gateway.
type setup struct {
	roots    []string
	readOnly bool
	ssh      *remote.RouterConfig // nil: local only
	workDir  string
	cfg      files.Config
}

type env struct {
	t      testing.TB
	c      *client.Client
	ledger *sqlite.Ledger
	router *remote.Router
}

func newEnv(t testing.TB, s setup) *env {
	t.Helper()
	e := &env{t: t, ledger: rigouttest.OpenLedger(t)}
	fc := s.cfg
	fc.WorkDir = s.workDir
	if fc.WorkDir == "" {
		fc.WorkDir = t.TempDir()
	}
	if s.ssh != nil {
		r, err := remote.NewRouter(*s.ssh)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		e.router = r
		fc.Router = r
	}
	ff, err := files.New(fc)
	if err != nil {
		t.Fatal(err)
	}
	sc := auth.FullScopes()
	sc.Roots = s.roots
	sc.ReadOnly = s.readOnly
	p := auth.Principal{Name: "tester", Transport: "in-process", Scopes: sc}
	gw := rigouttest.New(t, rigout.Config{Tools: ff.Tools(), Audit: e.ledger, Principal: &p})
	e.c = rigouttest.Connect(t, gw)
	return e
}

func (e *env) call(name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	return rigouttest.Call(e.t, e.c, name, args)
}

// ok calls file_operations and fails the test on an error result.
func (e *env) ok(args map[string]any) string {
	e.t.Helper()
	res := e.call("file_operations", args)
	if res.IsError {
		e.t.Fatalf("file_operations %v: %s", args, rigouttest.Text(res))
	}
	return rigouttest.Text(res)
}

// fails calls file_operations and fails the test unless it errs with a
// text containing want.
func (e *env) fails(args map[string]any, want string) string {
	e.t.Helper()
	res := e.call("file_operations", args)
	if !res.IsError || !strings.Contains(rigouttest.Text(res), want) {
		e.t.Fatalf("file_operations %v: want an error containing %q, got (isError=%v) %s", args, want, res.IsError, rigouttest.Text(res))
	}
	return rigouttest.Text(res)
}

func write(t testing.TB, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// canary is a file outside the root whose content, mtime and hash must
// never change.
type canary struct {
	path  string
	data  []byte
	mtime time.Time
}

func newCanary(t testing.TB, p string) *canary {
	t.Helper()
	data := []byte("CANARY-7f3a secret outside the root\n")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	return &canary{path: p, data: data, mtime: old}
}

// check fails the test if the canary changed or was replaced; results are
// checked separately for its content (see leaked).
func (c *canary) check(t testing.TB, what string) {
	t.Helper()
	fi, err := os.Lstat(c.path)
	if err != nil {
		t.Fatalf("%s: canary gone: %v", what, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: canary mode changed: %v", what, fi.Mode())
	}
	b, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	if sum(b) != sum(c.data) {
		t.Fatalf("%s: canary content changed: %q", what, b)
	}
	if !fi.ModTime().Equal(c.mtime) {
		t.Fatalf("%s: canary mtime changed: %v", what, fi.ModTime())
	}
}

// leaked reports whether a result shows the canary's content.
func (c *canary) leaked(text string) bool { return strings.Contains(text, "CANARY-7f3a") }

// backends runs f against this machine and, over the real sshd's SFTP
// subsystem, against host sftp1 (the same machine, so the test inspects
// both through the local file system).
func backends(t *testing.T, s setup, f func(t *testing.T, e *env, host string)) {
	t.Run("local", func(t *testing.T) { f(t, newEnv(t, s), "local") })
	t.Run("sftp", func(t *testing.T) {
		h := startSSHD(t)
		s := s
		s.ssh = &h.cfg
		f(t, newEnv(t, s), "sftp1")
	})
	if len(s.roots) > 0 {
		// A principal with roots reaches an SSH host's files through
		// rigout's helper there.
		t.Run("helper", func(t *testing.T) { f(t, newEnv(t, helperSetup(t, s)), "sftp1") })
	}
}

// helperSetup returns s reaching sshd as host "sftp1" with rigout's helper
// required there, the login's $HOME a temp dir.
func helperSetup(t *testing.T, s setup) setup {
	t.Helper()
	srv := sshdtest.Start(t, sshdtest.Options{MaxSessions: 50, SetEnv: map[string]string{"HOME": t.TempDir()}})
	cfg := srv.Router
	cfg.Hosts = slices.Clone(cfg.Hosts)
	cfg.Hosts[0].Name = "sftp1"
	cfg.Hosts[0].Helper = remote.HelperRequire
	cfg.Helper = sshdtest.BuildHelper(t)
	s.ssh = &cfg
	return s
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
