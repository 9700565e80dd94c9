package federation_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/federation"
	"github.com/rigout/rigout/rigouttest"
)

// TestStdioNeedsASandbox: a stdio server without a Sandbox is refused at
// New, naming the fix, unless the embedder said UnsafeNoSandbox; HTTP
// servers start no process and need none.
func TestStdioNeedsASandbox(t *testing.T) {
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	stdio := stdioServer("a", t.TempDir())
	web := federation.Server{Name: "web", URL: "http://127.0.0.1:1/mcp"}
	tests := []struct {
		name    string
		cfg     federation.Config
		wantErr error
	}{
		{name: "stdio without a sandbox", cfg: federation.Config{Servers: []federation.Server{web, stdio}}, wantErr: exec.ErrNoSandbox},
		{name: "stdio with UnsafeNoSandbox", cfg: federation.Config{Servers: []federation.Server{stdio}, UnsafeNoSandbox: true}},
		{name: "stdio with a sandbox", cfg: federation.Config{Servers: []federation.Server{stdio}, Sandbox: sb}},
		{name: "http alone", cfg: federation.Config{Servers: []federation.Server{web}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := federation.New(tt.cfg)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("New: %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "Config.Sandbox") {
				t.Errorf("the error does not name the fix: %v", err)
			}
		})
	}
}

// TestStdioDownstreamRunsInAView starts a real stdio downstream in a
// sandbox with views: it serves its tools, runs in a PID namespace of its
// own as the principal federation:NAME, and cannot read what the view
// hides (a secret beside files it can read, and the state directory),
// which the gateway's own process reads.
func TestStdioDownstreamRunsInAView(t *testing.T) {
	base, err := os.MkdirTemp("", "rigout-fedview-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	work, state := filepath.Join(base, "work"), filepath.Join(base, "state")
	for _, d := range []string{work, state} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secretText := fmt.Sprintf("fed-secret-%d", rand.Int64())
	secret, token, visible := filepath.Join(work, "secret.txt"), filepath.Join(state, "token"), filepath.Join(work, "notes.txt")
	for _, f := range []string{secret, token} {
		if err := os.WriteFile(f, []byte(secretText), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(visible, []byte("plain notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The downstream is this test binary, copied where the view shows it
	// (the go tool builds it under /tmp, which a view replaces).
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(work, "down.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var principals []string
	sb, err := exec.NewSandbox(exec.SandboxConfig{Views: &exec.ViewConfig{
		Writable: []string{work},
		Hidden:   []string{state, secret},
		TmpDir:   filepath.Join(state, "tmp"),
		Principal: func(ctx context.Context) exec.Principal {
			name, _ := federation.DownstreamFromContext(ctx)
			mu.Lock()
			principals = append(principals, name)
			mu.Unlock()
			return exec.Principal{Name: "federation:" + name}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	if st := sb.Status(); !st.Views {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("RIGOUT_REQUIRE_SANDBOX=1 and no views: %s", st.ViewsReason)
		}
		t.Skip("SKIPPED, no per-principal views here: " + st.ViewsReason)
	}

	gw := rigouttest.New(t, rigout.Config{})
	fed, err := federation.New(federation.Config{
		Servers: []federation.Server{{
			Name: "v", Command: []string{bin, "-test.run=^$"}, Dir: work,
			Env:     map[string]string{"FEDTEST_DOWNSTREAM": "stdio", "FEDTEST_DIR": work},
			Timeout: 10 * time.Second,
		}},
		Sandbox: sb,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fed.Close() })
	if st := fed.Status()[0]; st.State != federation.Ready {
		t.Fatalf("downstream: %+v", st)
	}
	mu.Lock()
	if len(principals) == 0 || principals[0] != "v" {
		t.Errorf("the view's principal came from %q, want the downstream's name v", principals)
	}
	mu.Unlock()

	// The gateway's process reads the files the view hides: the test
	// could fail.
	for _, f := range []string{secret, token} {
		if b, err := os.ReadFile(f); err != nil || string(b) != secretText {
			t.Fatalf("the gateway cannot read %s: %v", f, err)
		}
	}
	c := rigouttest.Connect(t, gw)
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		check    func(text string) bool
		wantText string
	}{
		{name: "still serves tools", tool: "v__echo", args: map[string]any{"msg": "hi"}, check: func(s string) bool { return s == "echo:hi" }, wantText: "echo:hi"},
		{name: "reads what the view shows", tool: "v__cat", args: map[string]any{"path": visible}, check: func(s string) bool { return s == "plain notes" }, wantText: "plain notes"},
		{name: "hidden file unreadable", tool: "v__cat", args: map[string]any{"path": secret}, check: func(s string) bool { return !strings.Contains(s, secretText) }, wantText: "not the secret"},
		{name: "state directory unreadable", tool: "v__cat", args: map[string]any{"path": token}, check: func(s string) bool { return !strings.Contains(s, secretText) }, wantText: "not the secret"},
		{name: "own PID namespace", tool: "v__pid", args: map[string]any{}, check: func(s string) bool {
			pid, err := strconv.Atoi(s)
			return err == nil && pid < 10 && pid != os.Getpid()
		}, wantText: "a PID below 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := rigouttest.Call(t, c, tt.tool, tt.args)
			if text := rigouttest.Text(res); !tt.check(text) {
				t.Errorf("%s: %q (error %v), want %s", tt.tool, text, res.IsError, tt.wantText)
			}
		})
	}
}
