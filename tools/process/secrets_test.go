package process_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote/sshtest"
	"github.com/rigout/rigout/internal/gwtest"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/process"
	"github.com/rigout/rigout/tools/shell"
)

// secretValue is the credential of these tests. No command line holds
// it: the commands compare its SHA-256.
const secretValue = "proc-5e4d3c2b1a0918-SECRET"

var secretSHA = func() string { h := sha256.Sum256([]byte(secretValue)); return hex.EncodeToString(h[:]) }()

// leaked returns the form of secretValue that text holds, or "".
func leaked(text string) string {
	return gwtest.Leaked(text, gwtest.SecretForms(secretValue, "5e4d3c2b1a0918"))
}

// procStore holds "api" for local, the in-process server's host "far"
// and execute_command (the tool that starts background processes).
func procStore(t *testing.T) *credentials.Store {
	return gwtest.SecretStore(t, secretValue, func(f string) map[string]credentials.Spec {
		return map[string]credentials.Spec{"api": {File: f, Hosts: []string{"local", "far"}}}
	})
}

// bgDump waits first, so that it is handed off, then prints the value
// every way the issue names, across a 64 KiB boundary, and split in time.
var bgDump = `sleep 0.5; env; printenv API_KEY; cat /proc/self/environ | tr '\0' '\n'; echo; ` +
	`echo $API_KEY | base64; printf %s "$API_KEY" | base64; echo; ` +
	`printf %s "$API_KEY" | od -An -tx1 | tr -d ' \n'; echo; (printf %s "$API_KEY" | xxd -p) 2>/dev/null; ` +
	`[ "$(printf %s "$API_KEY" | sha256sum | cut -c1-64)" = ` + secretSHA + ` ] && echo MATCH; ` +
	`echo BOUNDARY; head -c 65530 /dev/zero | tr '\0' a; printf '%s\n' "$API_KEY"; ` +
	`printf %s "${API_KEY:0:9}"; sleep 1; printf '%s\n' "${API_KEY:9}"; echo "$API_KEY" >&2; echo done`

// runBackground starts bgDump on host as a background process and reads
// it to its end with the process tool, page by page; it returns every
// result and the whole stdout read.
func runBackground(t *testing.T, c *client.Client, host string) (all, stdout, stderr string) {
	t.Helper()
	var b strings.Builder
	res := rigouttest.Call(t, c, "execute_command", map[string]any{"command": bgDump, "host": host, "wait_seconds": 0,
		"secrets": map[string]any{"API_KEY": "api"}})
	j, _ := json.Marshal(res)
	b.Write(j)
	sc := rigouttest.Structured(t, res)
	id, _ := sc["process_id"].(string)
	if id == "" || res.IsError {
		t.Fatalf("not handed off: %s", rigouttest.Text(res))
	}
	var out, errOut strings.Builder
	args := map[string]any{"action": "read", "id": id, "offset": 0, "stderr_offset": 0, "wait_seconds": 10}
	for range 200 {
		res := rigouttest.Call(t, c, "process", args)
		j, _ := json.Marshal(res)
		b.Write(j)
		sc := rigouttest.Structured(t, res)
		so, _ := sc["stdout"].(map[string]any)
		se, _ := sc["stderr"].(map[string]any)
		out.WriteString(so["text"].(string))
		errOut.WriteString(se["text"].(string))
		args["offset"], args["stderr_offset"] = so["next"], se["next"]
		if sc["running"] == false && so["next"] == so["total"] && se["next"] == se["total"] {
			break
		}
	}
	all = b.String()
	if !strings.Contains(out.String(), "MATCH") || !strings.HasSuffix(out.String(), "done\n") {
		t.Fatalf("the process did not get the value, or did not end:\n%s", out.String())
	}
	if f := leaked(all); f != "" {
		t.Fatalf("a result holds %q:\n%s", f, all)
	}
	o := out.String()
	if !strings.Contains(o, "API_KEY=***") {
		t.Errorf("env shows no masked API_KEY:\n%s", o)
	}
	if want := "BOUNDARY\n" + strings.Repeat("a", 65530) + "***\n***\n"; !strings.Contains(o, want) {
		i := strings.Index(o, "BOUNDARY")
		t.Errorf("across 64 KiB and split in time: %q", o[i:min(len(o), i+40)]+"…"+o[max(0, len(o)-60):])
	}
	if errOut.String() != "***\n" {
		t.Errorf("stderr = %q", errOut.String())
	}
	return all, o, errOut.String()
}

// scanKept: no ledger row, no byte of the ledger's files and no spool
// file holds a form of the value; a row names the alias.
func scanKept(t *testing.T, l interface {
	audit.Querier
	Path() string
}, spool string) {
	t.Helper()
	evs := rigouttest.Events(t, l, audit.Filter{})
	named := false
	for _, ev := range evs {
		b, _ := json.Marshal(ev)
		if f := leaked(string(b)); f != "" {
			t.Fatalf("ledger row holds %q: %s", f, b)
		}
		named = named || strings.Contains(ev.Detail, "api as API_KEY")
	}
	if !named {
		t.Fatalf("no ledger row (of %d) names the alias used", len(evs))
	}
	matches, _ := filepath.Glob(l.Path() + "*")
	for _, p := range matches {
		b, _ := os.ReadFile(p)
		if f := leaked(string(b)); f != "" {
			t.Fatalf("%s holds %q", p, f)
		}
	}
	n := 0
	filepath.Walk(spool, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			n += len(b)
			if f := leaked(string(b)); f != "" {
				t.Errorf("spool file %s holds %q", p, f)
			}
		}
		return nil
	})
	if n < 65530 {
		t.Fatalf("the spool held only %d bytes: the scan proves nothing", n)
	}
}

// procEnv is a gateway with the shell and process families, a credential
// store and a ledger, whose Manager spools under spool and keeps finished
// processes (so that their spool files are there to scan).
func procEnv(t *testing.T) (*client.Client, *sessions.Manager, *sqlite.Ledger) {
	t.Helper()
	l := rigouttest.OpenLedger(t)
	m := newManager(t, l)
	sh, err := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}, Processes: m, Credentials: procStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	pf, err := process.New(process.Config{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	c := rigouttest.Connect(t, rigouttest.New(t, rigout.Config{Tools: append(sh.Tools(), pf.Tools()...), Audit: l,
		Principal: &auth.Principal{Name: "alice", Scopes: auth.FullScopes()}}))
	return c, m, l
}

// TestBackgroundSecretsLocal: a handed-off process gets the value; its
// spool, every later read and the ledger see only the mask.
func TestBackgroundSecretsLocal(t *testing.T) {
	c, m, l := procEnv(t)
	runBackground(t, c, "local")
	scanKept(t, l, m.SpoolDir())
}

// TestBackgroundSecretsTask: a task's command is a background process
// too; its result is masked.
func TestBackgroundSecretsTask(t *testing.T) {
	l := rigouttest.OpenLedger(t)
	m := newManager(t, l)
	alice := taskClient(t, serveTasksWith(t, l, m, procStore(t)), "alice-token")
	task := callAsTask(t, alice, "execute_command", map[string]any{"command": bgDump, "secrets": map[string]any{"API_KEY": "api"}}, nil)
	var got *mcp.GetTaskResult
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		if got, err = getTask(alice, task.TaskId); err != nil {
			t.Fatal(err)
		}
		if got.Status.IsTerminal() || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var rr mcp.TaskResultRequest
	rr.Params.TaskId = task.TaskId
	res, err := alice.TaskResult(context.Background(), rr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if !bytes.Contains(b, []byte("MATCH")) || !bytes.Contains(b, []byte("API_KEY=***")) {
		t.Fatalf("task result: %.2000s", b)
	}
	if f := leaked(string(b)); f != "" {
		t.Fatalf("the task result holds %q", f)
	}
	scanKept(t, l, m.SpoolDir())
}

// TestBackgroundSecretsInProcessSSH: over the in-process server, which
// records every command line: none holds a form of the value.
func TestBackgroundSecretsInProcessSSH(t *testing.T) {
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sshtest.NewServer(sshtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l := rigouttest.OpenLedger(t)
	m := newManager(t, l)
	c := connectSSH(t, m, sshHost{addr: s.Host(), port: s.Port(), user: "agent", known: s.KnownHostsLine(), key: key,
		creds: procStore(t), ledger: l})
	runBackground(t, c, "far")
	cmds := s.Commands()
	if len(cmds) == 0 {
		t.Fatal("the server recorded no command line")
	}
	for _, line := range cmds {
		if f := leaked(line); f != "" {
			t.Fatalf("a command line holds %q: %s", f, line)
		}
	}
	scanKept(t, l, m.SpoolDir())
}

// TestBackgroundSecretsOpenSSH: against a real sshd; every
// /proc/*/cmdline is scanned while the process runs, and sshd's log.
func TestBackgroundSecretsOpenSSH(t *testing.T) {
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	d := sshdtest.Start(t, sshdtest.Options{Authorized: []*sshtest.Key{key}})
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	l := rigouttest.OpenLedger(t)
	m := newManager(t, l)
	c := connectSSH(t, m, sshHost{addr: "127.0.0.1", port: d.Port, user: u.Username, known: d.KnownHostsLine, key: key,
		creds: procStore(t), ledger: l})
	stop, found := make(chan struct{}), make(chan string, 1)
	go func() {
		scans, hit := 0, ""
		for {
			paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range paths {
				b, _ := os.ReadFile(p)
				if f := leaked(string(b)); f != "" && hit == "" {
					hit = p + " holds " + f
				}
			}
			scans++
			select {
			case <-stop:
				if hit == "" && scans < 3 {
					hit = "too few scans of the process list"
				}
				found <- hit
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	runBackground(t, c, "far")
	close(stop)
	if hit := <-found; hit != "" {
		t.Fatal(hit)
	}
	if f := leaked(d.Log()); f != "" {
		t.Fatalf("sshd's log holds %q", f)
	}
	scanKept(t, l, m.SpoolDir())
}
