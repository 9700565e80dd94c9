package terminal_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
	"github.com/rigout/rigout/internal/gwtest"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
)

// secretValue is the credential of these tests. No command line of a test
// holds it: the commands compare its SHA-256.
const secretValue = "term-7c6b5a49382716-SECRET"

var secretSHA = func() string { h := sha256.Sum256([]byte(secretValue)); return hex.EncodeToString(h[:]) }()

// secretForms are the forms a scan looks for: gwtest.SecretForms, a
// distinctive part of the value and the \xHH escapes a remote shell is
// typed.
func secretForms() []string {
	var esc strings.Builder
	for _, c := range []byte(secretValue)[:12] {
		esc.WriteString(`\x` + hex.EncodeToString([]byte{c}))
	}
	return gwtest.SecretForms(secretValue, "7c6b5a49382716", esc.String())
}

// leaked returns the form of secretValue that text holds, or "".
func leaked(text string) string { return gwtest.Leaked(text, secretForms()) }

// termStore holds "api", allowed to create_terminal_session on local and
// the sshd host, and "cmdonly", which only execute_command may use.
func termStore(t *testing.T) *credentials.Store {
	return gwtest.SecretStore(t, secretValue, func(f string) map[string]credentials.Spec {
		return map[string]credentials.Spec{
			"api":     {File: f, Hosts: []string{"local", sshdtest.Host}, Tools: []string{"create_terminal_session"}},
			"cmdonly": {File: f, Hosts: []string{"local", sshdtest.Host}},
		}
	})
}

// dumpCommands print the environment every way the issue names.
var dumpCommands = []string{
	"env",
	"printenv API_KEY",
	`cat /proc/self/environ | tr '\0' '\n'`,
	`echo $API_KEY | base64`,
	`printf %s "$API_KEY" | base64`,
	`printf %s "$API_KEY" | od -An -tx1 | tr -d ' \n'; echo`,
	`printf %s "$API_KEY" | xxd -p 2>/dev/null || true`,
	`set | grep API_KEY; declare -p API_KEY`,
	`[ "$(printf %s "$API_KEY" | sha256sum | cut -c1-64)" = ` + secretSHA + ` ] && echo MATCH`,
	// The value across a 64 KiB boundary of the terminal's output.
	`head -c 65530 /dev/zero | tr '\0' a; printf '%s\n' "$API_KEY"`,
	// A prefix of it alone, then the rest a second later: split across reads.
	`printf %s "${API_KEY:0:9}"; sleep 1; printf '%s\n' "${API_KEY:9}"`,
}

// runDump runs dumpCommands in session id and returns every result,
// checking that the session has the value and shows it only masked.
func runDump(t *testing.T, e *env, id string) string {
	t.Helper()
	c := e.connect(t, "alice", nil)
	var all strings.Builder
	for _, cmd := range dumpCommands {
		res := rigouttest.Call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": cmd, "timeout": 20})
		b, _ := json.Marshal(res)
		all.Write(b)
		out, _ := rigouttest.Structured(t, res)["output"].(string)
		switch {
		case strings.HasPrefix(cmd, "env"), strings.HasPrefix(cmd, "cat /proc"):
			if !strings.Contains(out, "API_KEY=***") {
				t.Errorf("%s: no masked API_KEY:\n%s", cmd, out)
			}
		case strings.HasPrefix(cmd, "head"):
			if want := strings.Repeat("a", 65530) + "***\n"; out != want {
				t.Errorf("across 64 KiB: %d bytes, leaked %q, ends %q", len(out), leaked(out), out[max(0, len(out)-40):])
			}
		case strings.Contains(cmd, "sleep 1"):
			if out != "***\n" {
				t.Errorf("split across reads: %q", out)
			}
		case strings.HasPrefix(cmd, "printenv"):
			if out != "***\n" {
				t.Errorf("printenv: %q", out)
			}
		}
	}
	if !strings.Contains(all.String(), "MATCH") {
		t.Fatalf("the session's shell does not have the value:\n%s", all.String())
	}
	if f := leaked(all.String()); f != "" {
		t.Fatalf("a result holds %q:\n%s", f, all.String())
	}
	return all.String()
}

// scanLedger: no row, and no byte of the SQLite files, holds a form of
// the value; a row names the alias used.
func scanLedger(t *testing.T, e *env) {
	t.Helper()
	evs := rigouttest.Events(t, e.ledger, audit.Filter{})
	if len(evs) < len(dumpCommands) {
		t.Fatalf("only %d ledger rows", len(evs))
	}
	named := false
	for _, ev := range evs {
		b, _ := json.Marshal(ev)
		if f := leaked(string(b)); f != "" {
			t.Fatalf("ledger row holds %q: %s", f, b)
		}
		named = named || strings.Contains(ev.Detail, "api as API_KEY")
	}
	if !named {
		t.Fatal("no ledger row names the alias used")
	}
	matches, _ := filepath.Glob(e.ledger.Path() + "*")
	for _, p := range matches {
		b, _ := os.ReadFile(p)
		if f := leaked(string(b)); f != "" {
			t.Fatalf("%s holds %q", p, f)
		}
	}
	spooled := readTree(t, e.m.SpoolDir())
	if f := leaked(spooled); f != "" {
		t.Fatalf("the spool holds %q", f)
	}
}

func readTree(t *testing.T, dir string) string {
	t.Helper()
	var all strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			all.Write(b)
		}
		return nil
	})
	return all.String()
}

// TestTerminalSecretsLocal: a local session gets the value in its shell's
// environment at creation; every way of printing it shows only the mask,
// across reads and a 64 KiB boundary; nothing the gateway keeps holds it.
func TestTerminalSecretsLocal(t *testing.T) {
	l := rigouttest.OpenLedger(t)
	e := &env{m: newManager(t, l), dir: t.TempDir(), ledger: l, creds: termStore(t)}
	c := e.connect(t, "alice", nil)
	id := create(t, c, map[string]any{"secrets": map[string]any{"API_KEY": "api"}})
	runDump(t, e, id)

	// Refusals: an alias whose tools leave out create_terminal_session,
	// an unknown one, a bad name.
	for alias, want := range map[string]string{
		"cmdonly": `credential alias "cmdonly" may not be used by create_terminal_session (see its "tools")`,
		"nope":    "unknown credential alias",
	} {
		res, text, _ := call(t, c, "create_terminal_session", map[string]any{"secrets": map[string]any{"X_KEY": alias}})
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("alias %s: %s", alias, text)
		}
	}
	if res, text, _ := call(t, c, "create_terminal_session", map[string]any{"secrets": map[string]any{"1X": "api"}}); !res.IsError || !strings.Contains(text, "not a valid environment variable name") {
		t.Errorf("bad name: %s", text)
	}
	call(t, c, "close_terminal_session", map[string]any{"session_id": id})
	scanLedger(t, e)
	for _, ev := range rigouttest.Events(t, l, audit.Filter{Tool: "create_terminal_session"}) {
		if strings.Contains(ev.Detail, "cmdonly") && ev.Status != audit.StatusDenied {
			t.Errorf("a refused alias is recorded %s", ev.Status)
		}
	}
}

// TestTerminalSecretsSchema: without a credential store the tool offers
// no secrets argument, and refuses one.
func TestTerminalSecretsSchema(t *testing.T) {
	e := &env{m: newManager(t, nil), dir: t.TempDir()}
	c := e.connect(t, "alice", nil)
	res, text, _ := call(t, c, "create_terminal_session", map[string]any{"secrets": map[string]any{"X": "api"}})
	if !res.IsError {
		t.Fatalf("secrets without a store: %s", text)
	}
}

// TestTerminalSecretsSSH: over a real OpenSSH server the value is typed
// into the set-up shell (echo off), so no command line holds it — every
// /proc/*/cmdline is scanned while the session lives (sshd runs on this
// machine) — and it is masked as locally; sshd's log holds none of it.
func TestTerminalSecretsSSH(t *testing.T) {
	sd := sshdtest.Start(t, sshdtest.Options{})
	r, err := remote.NewRouter(sd.Router)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	l := rigouttest.OpenLedger(t)
	e := &env{m: newManager(t, l), router: r, dir: t.TempDir(), ledger: l, creds: termStore(t)}
	c := e.connect(t, "alice", nil)

	stop := make(chan struct{})
	scanned := make(chan string, 1)
	go func() {
		scans, found := 0, ""
		for {
			paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range paths {
				b, _ := os.ReadFile(p)
				if f := leaked(string(b)); f != "" && found == "" {
					found = p + " holds " + f + ": " + string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
				}
			}
			scans++
			select {
			case <-stop:
				if found == "" && scans < 3 {
					found = "too few scans"
				}
				scanned <- found
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	res, text, sc := call(t, c, "create_terminal_session", map[string]any{"host": sshdtest.Host, "secrets": map[string]any{"API_KEY": "api"}})
	if res.IsError {
		close(stop)
		<-scanned
		t.Fatalf("create over ssh: %s", text)
	}
	id := sc["session_id"].(string)
	runDump(t, e, id)
	close(stop)
	if f := <-scanned; f != "" {
		t.Fatal(f)
	}
	call(t, c, "close_terminal_session", map[string]any{"session_id": id})
	scanLedger(t, e)
	if f := leaked(sd.Log()); f != "" {
		t.Fatalf("sshd's log holds %q", f)
	}
}

// inProcessRouter returns a router to one in-process SSH server, host
// "web1", which records every exec request's command line.
func inProcessRouter(t *testing.T, sc sshtest.Config) (*remote.Router, *sshtest.Server) {
	t.Helper()
	dir := t.TempDir()
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "id_ed25519")
	if err := key.Write(keyPath, ""); err != nil {
		t.Fatal(err)
	}
	s, err := sshtest.NewServer(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(s.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := remote.NewRouter(remote.RouterConfig{
		Hosts:          []remote.HostConfig{{Name: "web1", Address: s.Host(), Port: s.Port(), User: "agent", Key: keyPath}},
		KnownHostsFile: known, HostKeyPolicy: remote.HostKeyStrict, HomeDir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, s
}

// TestTerminalSecretsInProcessSSH: against the in-process server, which
// records every command line: the value reaches the remote shell (MATCH),
// comes back masked, and is on none of the lines.
func TestTerminalSecretsInProcessSSH(t *testing.T) {
	r, srv := inProcessRouter(t, sshtest.Config{})
	st := web1Store(t)
	l := rigouttest.OpenLedger(t)
	e := &env{m: newManager(t, l), router: r, dir: t.TempDir(), ledger: l, creds: st}
	c := e.connect(t, "alice", nil)
	res, text, sc := call(t, c, "create_terminal_session", map[string]any{"host": "web1", "secrets": map[string]any{"API_KEY": "api"}})
	if res.IsError {
		t.Fatalf("create over ssh: %s", text)
	}
	id := sc["session_id"].(string)
	runDump(t, e, id)
	call(t, c, "close_terminal_session", map[string]any{"session_id": id})
	cmds := srv.Commands()
	if len(cmds) == 0 {
		t.Fatal("the server recorded no command line")
	}
	for _, line := range cmds {
		if f := leaked(line); f != "" {
			t.Fatalf("a command line holds %q: %s", f, line)
		}
	}
	scanLedger(t, e)
}

func web1Store(t *testing.T) *credentials.Store {
	t.Helper()
	f := filepath.Join(t.TempDir(), "api")
	if err := os.WriteFile(f, []byte(secretValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{
		"api": {File: f, Hosts: []string{"web1"}, Tools: []string{"create_terminal_session"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTerminalSecretsEchoRefused: a remote terminal that keeps echoing
// (its stty does nothing) is found by the probe: the session is not
// created and says why; the probe comes before any export line, and
// neither the refusal nor the ledger holds a form of the value.
func TestTerminalSecretsEchoRefused(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "stty"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	remoteEnv := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	r, _ := inProcessRouter(t, sshtest.Config{Env: remoteEnv})
	l := rigouttest.OpenLedger(t)
	e := &env{m: newManager(t, l), router: r, dir: t.TempDir(), ledger: l, creds: web1Store(t)}
	c := e.connect(t, "alice", nil)
	res, text, _ := call(t, c, "create_terminal_session", map[string]any{"host": "web1", "secrets": map[string]any{"API_KEY": "api"}})
	if !res.IsError || !strings.Contains(text, "echoes its input") {
		t.Fatalf("an echoing terminal: %s", text)
	}
	// Without secrets the same host opens a session: only secrets need
	// the echo off.
	if res, text, _ := call(t, c, "create_terminal_session", map[string]any{"host": "web1"}); res.IsError {
		t.Fatalf("without secrets: %s", text)
	}
	if f := leaked(text); f != "" {
		t.Fatalf("the refusal holds %q", f)
	}
	for _, ev := range rigouttest.Events(t, l, audit.Filter{}) {
		b, _ := json.Marshal(ev)
		if f := leaked(string(b)); f != "" {
			t.Fatalf("ledger row holds %q: %s", f, b)
		}
	}
}
