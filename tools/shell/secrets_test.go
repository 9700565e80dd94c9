package shell_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/gwtest"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/shell"
)

// secretValue is the credential of these tests; leaked reports any form
// of it in a text.
const secretValue = "tok-9f8e7d6c5b4a-SECRET"

// secretSHA is the value's SHA-256, which the commands compare with, so
// that no command line holds the value itself.
var secretSHA = func() string { h := sha256.Sum256([]byte(secretValue)); return hex.EncodeToString(h[:]) }()

// leaked returns the form of secretValue that text holds, or "".
func leaked(text string) string {
	return gwtest.Leaked(text, gwtest.SecretForms(secretValue, "9f8e7d6c5b4a"))
}

// syncBuffer is a log destination safe for the gateway's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func secretStore(t *testing.T) *credentials.Store {
	return gwtest.SecretStore(t, secretValue, func(f string) map[string]credentials.Spec {
		return map[string]credentials.Spec{
			"api":       {File: f, Hosts: []string{"local", sshdtest.Host}},
			"elsewhere": {File: f, Hosts: []string{"nowhere"}},
		}
	})
}

// dumpCommand prints the environment every way the issue names, the value
// in base64 (at each alignment), hex, interleaved and reversed, and MATCH
// when the variable holds the value.
var dumpCommand = `env; printenv API_KEY; cat /proc/self/environ | tr '\0' '\n'; echo "$API_KEY" | base64; ` +
	`printf %s "$API_KEY" | base64; echo; printf %s "$API_KEY" | od -An -tx1 | tr -d ' \n'; echo; ` +
	`printf 'xx%s' "$API_KEY" | base64 -w0 | cut -c3-; echo; printf 'x%s' "$API_KEY" | base64 -w0 | cut -c2-; echo; ` +
	`printf %s "$API_KEY" | sed 's/./&-/g'; echo; printf %s "$API_KEY" | fold -w1 | tr '\n' '\0'; echo; printf '%s\n' "$API_KEY" | rev; ` +
	`[ "$(printf %s "$API_KEY" | sha256sum | cut -c1-64)" = ` + secretSHA + ` ] && echo MATCH; echo "$API_KEY" >&2`

// checkDump asserts the command got the value and printed it only masked.
func checkDump(t *testing.T, res string) {
	t.Helper()
	if !strings.Contains(res, "MATCH") {
		t.Fatalf("the command did not get the value:\n%s", res)
	}
	if f := leaked(res); f != "" {
		t.Fatalf("the result holds %q:\n%s", f, res)
	}
	if !strings.Contains(res, "API_KEY=***") {
		t.Fatalf("env shows no masked API_KEY:\n%s", res)
	}
}

// TestSecretsLocal: execute_command with secrets, on this machine, as a
// background process too; then the ledger (its SQLite file, byte for
// byte), the log and the spool files hold no form of the value.
func TestSecretsLocal(t *testing.T) {
	l := openLedger(t)
	var logs syncBuffer
	spool := t.TempDir()
	m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true}, SpoolDir: spool, Audit: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	c := connect(t, newGateway(t, setup{
		Config: rigout.Config{Audit: l, AuditArgValues: true, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		// ShowMax over the output below, which is read whole.
		Shell: shell.Config{Credentials: secretStore(t), Processes: m, ShowMax: 1 << 20},
	}))
	res := callTool(t, c, "execute_command", map[string]any{"command": dumpCommand, "secrets": map[string]any{"API_KEY": "api"}})
	all, _ := json.Marshal(res)
	checkDump(t, string(all))
	if res.IsError {
		t.Fatalf("failed: %s", text(res))
	}

	// A value split across a 64 KiB read: 65530 bytes, then the value.
	res = callTool(t, c, "execute_command", map[string]any{
		"command": `head -c 65530 /dev/zero | tr '\0' a; printf '%s\n' "$API_KEY"; head -c 131066 /dev/zero | tr '\0' b; printf '%s' "$API_KEY" >&2`,
		"secrets": map[string]any{"API_KEY": "api"}})
	st := structured(t, res)
	out, _ := st["stdout"].(string)
	if want := strings.Repeat("a", 65530) + "***\n" + strings.Repeat("b", 131066); out != want {
		t.Fatalf("stdout across 64 KiB: %d bytes, leaked %q, ends %q", len(out), leaked(out), out[max(0, len(out)-40):])
	}
	if st["stderr"] != "***" {
		t.Fatalf("stderr = %q", st["stderr"])
	}

	// environment cannot overwrite the alias's variable, nor read it back.
	res = callTool(t, c, "execute_command", map[string]any{"command": "echo $API_KEY",
		"secrets": map[string]any{"API_KEY": "api"}, "environment": map[string]any{"API_KEY": "mine"}})
	if !res.IsError || !strings.Contains(text(res), "environment may not set it") {
		t.Fatalf("environment over a secret: %s", text(res))
	}
	// An alias not allowed on this host, an unknown one, a bad name.
	for alias, want := range map[string]string{"elsewhere": `may not be used on host "local"`, "nope": "unknown credential alias"} {
		res = callTool(t, c, "execute_command", map[string]any{"command": "true", "secrets": map[string]any{"X_KEY": alias}})
		if !res.IsError || !strings.Contains(text(res), want) {
			t.Fatalf("alias %s: %s", alias, text(res))
		}
	}

	// A background process: its spool file is scrubbed too. (A stream gets
	// a file once it outgrows the 64 KiB kept in memory.)
	res = callTool(t, c, "execute_command", map[string]any{"command": `sleep 0.5; echo "bg:$API_KEY"; head -c 70000 /dev/zero | tr '\0' x; echo; echo done`,
		"secrets": map[string]any{"API_KEY": "api"}, "wait_seconds": 0})
	if id, _ := structured(t, res)["process_id"].(string); id == "" {
		t.Fatalf("no background process: %s", text(res))
	}
	spooled := waitSpool(t, spool, "done")
	if !strings.Contains(spooled, "bg:***") {
		t.Fatalf("spool files: %q", spooled)
	}

	scanAfter(t, l, logs.String(), spooled)
	// The ledger names the alias the call used.
	found := false
	for _, e := range events(t, l, audit.Filter{Tool: "execute_command"}) {
		if strings.Contains(e.Detail, "api as API_KEY") {
			found = true
		}
	}
	if !found {
		t.Fatal("no ledger row names the alias used")
	}
}

// waitSpool returns the text of every file under dir once one holds
// want, within 10s.
func waitSpool(t *testing.T, dir, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var all strings.Builder
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				all.Write(b)
			}
			return nil
		})
		if strings.Contains(all.String(), want) || time.Now().After(deadline) {
			return all.String()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scanAfter: no ledger row, no byte of the SQLite files, no log line and
// no spool file holds a form of the value.
func scanAfter(t *testing.T, l interface {
	audit.Querier
	Path() string
}, logs, spooled string) {
	t.Helper()
	evs := events(t, l, audit.Filter{})
	if len(evs) < 4 {
		t.Fatalf("only %d ledger rows", len(evs))
	}
	for _, e := range evs {
		b, _ := json.Marshal(e)
		if f := leaked(string(b)); f != "" {
			t.Fatalf("ledger row holds %q: %s", f, b)
		}
	}
	matches, _ := filepath.Glob(l.Path() + "*")
	for _, p := range matches {
		b, _ := os.ReadFile(p)
		if f := leaked(string(b)); f != "" {
			t.Fatalf("%s holds %q", p, f)
		}
	}
	if f := leaked(logs); f != "" {
		t.Fatalf("the log holds %q:\n%s", f, logs)
	}
	if f := leaked(spooled); f != "" {
		t.Fatalf("a spool file holds %q", f)
	}
	if logs == "" {
		t.Fatal("nothing was logged: the scan proves nothing")
	}
}

// TestSecretsOverSSH: the same against a real OpenSSH server. The value
// reaches the remote command, comes back masked, and is on no command line
// while it runs (sshd runs on this machine: every /proc/*/cmdline is
// scanned) nor in sshd's log.
func TestSecretsOverSSH(t *testing.T) {
	d := sshdtest.Start(t, sshdtest.Options{})
	l := openLedger(t)
	var logs syncBuffer
	c := connect(t, newGateway(t, setup{
		Config: rigout.Config{Audit: l, AuditArgValues: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		Shell:  shell.Config{Credentials: secretStore(t)},
		SSH:    &d.Router,
	}))
	res := callTool(t, c, "execute_command", map[string]any{"host": sshdtest.Host, "command": dumpCommand, "secrets": map[string]any{"API_KEY": "api"}})
	all, _ := json.Marshal(res)
	checkDump(t, string(all))

	// With stdin: the command still reads exactly what the caller sent.
	res = callTool(t, c, "execute_command", map[string]any{"host": sshdtest.Host, "command": `cat; [ -n "$API_KEY" ] && echo set`,
		"stdin": "line one\n", "secrets": map[string]any{"API_KEY": "api"}})
	if out := structured(t, res)["stdout"]; out != "line one\nset\n" {
		t.Fatalf("stdout = %q", out)
	}

	// While a command runs, no process's argv holds the value.
	done := make(chan string, 1)
	go func() {
		r := callTool(t, c, "execute_command", map[string]any{"host": sshdtest.Host, "command": `sleep 1.5; echo "$API_KEY"`, "secrets": map[string]any{"API_KEY": "api"}})
		done <- text(r)
	}()
	deadline := time.Now().Add(1200 * time.Millisecond)
	scans := 0
	for time.Now().Before(deadline) {
		paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range paths {
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), secretValue) {
				t.Fatalf("%s holds the value: %q", p, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
			}
		}
		scans++
		time.Sleep(100 * time.Millisecond)
	}
	if out := <-done; !strings.Contains(out, "***") || leaked(out) != "" {
		t.Fatalf("result: %s", out)
	}
	if scans < 3 {
		t.Fatalf("only %d scans of the process list", scans)
	}
	if f := leaked(d.Log()); f != "" {
		t.Fatalf("sshd's log holds %q", f)
	}
	scanAfter(t, l, logs.String(), "")
}

// A credential is used by reference: the command gets the value, the
// caller sees it masked.
func ExampleConfig_credentials() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "token")
	os.WriteFile(f, []byte("example-token-value\n"), 0o600)
	store, _ := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{"deploy": {File: f}}})
	sh, _ := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}, Credentials: store})
	gw, _ := rigout.New(rigout.Config{Tools: sh.Tools()})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"command": `echo "deploying with $DEPLOY_TOKEN"`, "secrets": map[string]any{"DEPLOY_TOKEN": "deploy"}}
	res, _ := c.CallTool(ctx, req)
	fmt.Println(strings.Contains(res.Content[0].(mcp.TextContent).Text, "deploying with ***"))
	// Output: true
}

// TestSecretsNotOnCommandLine: the in-process SSH server records every
// exec request's command line; the value reaches the command (MATCH) yet
// is on none of them.
func TestSecretsNotOnCommandLine(t *testing.T) {
	f := newSSHFixture(t, 1, true)
	st, err := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{"api": {File: secretFile(t), Hosts: []string{"web1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, newGateway(t, setup{Shell: shell.Config{Credentials: st}, SSH: &f.cfg}))
	res := callTool(t, c, "execute_command", map[string]any{"host": "web1", "command": dumpCommand, "secrets": map[string]any{"API_KEY": "api"}})
	all, _ := json.Marshal(res)
	checkDump(t, string(all))
	cmds := f.servers[0].Commands()
	if len(cmds) == 0 {
		t.Fatal("the server recorded no command")
	}
	for _, line := range cmds {
		if f := leaked(line); f != "" {
			t.Fatalf("a command line holds %q: %s", f, line)
		}
	}
}

func secretFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "api")
	if err := os.WriteFile(f, []byte(secretValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
