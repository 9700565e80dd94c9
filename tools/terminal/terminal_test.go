package terminal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/internal/proctest"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/activity"
	"github.com/rigout/rigout/tools/terminal"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(markers.Main(m, 5*time.Second)) }

func newManager(t *testing.T, rec audit.Recorder) *sessions.Manager {
	t.Helper()
	m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true, Grace: 200 * time.Millisecond}, SpoolDir: t.TempDir(), Audit: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

type env struct {
	m      *sessions.Manager
	router exec.Hosts
	ledger *sqlite.Ledger
	dir    string
	creds  *credentials.Store
	gate   *gate.Gate
}

// connect builds a gateway with the terminal family for principal (full
// scopes unless scopes is given) and connects to it.
func (e *env) connect(t *testing.T, principal string, scopes *auth.Scopes) *client.Client {
	t.Helper()
	tf, err := terminal.New(terminal.Config{Manager: e.m, Hosts: e.router, WorkDir: e.dir, DefaultTimeout: 5 * time.Second, Credentials: e.creds, Gate: e.gate})
	if err != nil {
		t.Fatal(err)
	}
	s := auth.FullScopes()
	if scopes != nil {
		s = *scopes
	}
	cfg := rigout.Config{Tools: tf.Tools(), Principal: &auth.Principal{Name: principal, Scopes: s}}
	if e.ledger != nil {
		cfg.Audit = e.ledger
		act, err := activity.New(activity.Config{Ledger: e.ledger})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = append(cfg.Tools, act.Tools()...)
	}
	return rigouttest.Connect(t, rigouttest.New(t, cfg))
}

func call(t *testing.T, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, string, map[string]any) {
	t.Helper()
	res := rigouttest.Call(t, c, name, args)
	return res, rigouttest.Text(res), rigouttest.Structured(t, res)
}

// markers marks the processes these tests start; none may outlive them.
var markers = proctest.NewMarkers()

func marker() string { return markers.Next() }

func create(t *testing.T, c *client.Client, args map[string]any) string {
	t.Helper()
	res, text, sc := call(t, c, "create_terminal_session", args)
	if res.IsError {
		t.Fatalf("create: %s", text)
	}
	return sc["session_id"].(string)
}

func TestTerminalToolsLocal(t *testing.T) {
	e := &env{m: newManager(t, nil), dir: t.TempDir()}
	c := e.connect(t, "alice", nil)
	id := create(t, c, map[string]any{"session_name": "dev"})

	res, text, sc := call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "mkdir sub && cd sub && V=42"})
	if res.IsError || sc["cwd"] != filepath.Join(e.dir, "sub") {
		t.Fatalf("cd: %s %v", text, sc)
	}
	// Colour, a progress bar redrawn with carriage returns, a backspace:
	// the model reads the screen, not the escapes.
	res, text, sc = call(t, c, "execute_in_terminal", map[string]any{"session_id": id,
		"command": `printf '\033[31mred\033[0m\n10%%\r50%%\r100%%\nab\bc\n\033]0;title\007'; echo "V=$V"; (exit 3)`})
	if !res.IsError || sc["output"] != "red\n100%\nac\nV=42\n" || sc["exit_code"] != float64(3) || !strings.Contains(text, "exit code: 3") {
		t.Errorf("cleaned output: %q %v", text, sc)
	}

	// A timeout returns the output so far and says the command runs on;
	// an empty command waits for it.
	// The command runs until the test creates its gate file; a busy
	// machine may print "begin" only after the first timeout, so empty
	// commands read on until it is there.
	gate := filepath.Join(t.TempDir(), "gate")
	res, text, sc = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "echo begin; until [ -e " + gate + " ]; do sleep 0.02; done; echo finish", "timeout": 1})
	if res.IsError || sc["running"] != true || !strings.Contains(text, "may still be running") {
		t.Fatalf("timeout: %s", text)
	}
	out, _ := sc["output"].(string)
	for range 10 {
		if out == "begin\n" {
			break
		}
		res, text, sc = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "", "timeout": 1})
		if res.IsError || sc["running"] != true {
			t.Fatalf("waiting for begin: %s", text)
		}
		more, _ := sc["output"].(string)
		out += more
	}
	if out != "begin\n" {
		t.Fatalf("output before the gate %q, want begin", out)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, text, sc = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": ""})
	if res.IsError || sc["done"] != true || sc["output"] != "finish\n" {
		t.Errorf("wait: %s", text)
	}

	// Ctrl-C stops a running command.
	arg := marker()
	call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "sleep " + arg, "timeout": 1})
	_, text, sc = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "interrupt": true})
	if sc["exit_code"] != float64(130) || sc["signal"] != "SIGINT" {
		t.Errorf("interrupt: %s", text)
	}

	// send_keys types into the program reading the terminal.
	call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "read -r line; echo got:$line", "timeout": 1})
	res, text, sc = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "typed words\n", "send_keys": true})
	if res.IsError || sc["done"] != true || sc["output"] != "got:typed words\n" {
		t.Errorf("send_keys: %s", text)
	}

	// With nothing running, keys would be a command line for the shell
	// itself, which only the gate may let through.
	res, text, _ = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "touch keyed\n", "send_keys": true})
	if !res.IsError || !strings.Contains(text, "no command is running") {
		t.Errorf("send_keys to an idle shell: %s", text)
	}
	call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "true"}) // after what the shell read
	if _, err := os.Stat(filepath.Join(e.dir, "sub", "keyed")); err == nil {
		t.Error("keys reached the shell's command line")
	}

	res, text, sc = call(t, c, "list_terminal_sessions", nil)
	if l, _ := sc["sessions"].([]any); res.IsError || len(l) != 1 || !strings.Contains(text, id+" dev on local") {
		t.Errorf("list: %s", text)
	}
	res, text, _ = call(t, c, "close_terminal_session", map[string]any{"session_id": id})
	if res.IsError || !strings.Contains(text, "closed") {
		t.Errorf("close: %s", text)
	}
	res, text, _ = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "true"})
	if !res.IsError || !strings.Contains(text, "no such session "+id) {
		t.Errorf("after close: %s", text)
	}
}

func TestTerminalToolsNameTaken(t *testing.T) {
	e := &env{m: newManager(t, nil), dir: t.TempDir()}
	c := e.connect(t, "alice", nil)
	id := create(t, c, map[string]any{"session_name": "build"})
	res, text, _ := call(t, c, "create_terminal_session", map[string]any{"session_name": "build"})
	if !res.IsError || !strings.Contains(text, `named "build" is already open: `+id) {
		t.Errorf("same name: %s", text)
	}
}

// TestTerminalToolsOtherPrincipal: bob can neither list, use nor close
// alice's session, and is told it does not exist, as for any unknown ID.
func TestTerminalToolsOtherPrincipal(t *testing.T) {
	e := &env{m: newManager(t, nil), dir: t.TempDir()}
	alice, bob := e.connect(t, "alice", nil), e.connect(t, "bob", nil)
	id := create(t, alice, nil)
	_, text, sc := call(t, bob, "list_terminal_sessions", nil)
	if l, _ := sc["sessions"].([]any); len(l) != 0 || strings.Contains(text, id) {
		t.Errorf("bob lists %s", text)
	}
	for _, tool := range []string{"execute_in_terminal", "close_terminal_session"} {
		res, text, _ := call(t, bob, tool, map[string]any{"session_id": id, "command": "echo bob"})
		_, unknown, _ := call(t, bob, tool, map[string]any{"session_id": "t000000000000", "command": "echo bob"})
		if !res.IsError || text != strings.ReplaceAll(unknown, "t000000000000", id) {
			t.Errorf("%s by bob: %q (unknown ID: %q)", tool, text, unknown)
		}
	}
	if _, text, sc := call(t, alice, "execute_in_terminal", map[string]any{"session_id": id, "command": "echo mine"}); sc["output"] != "mine\n" {
		t.Errorf("alice after bob: %s", text)
	}
}

// TestTerminalToolsGate: a refused command never reaches the shell; the
// refused command is harmless if it ran (it decodes and runs `echo hi`),
// and its trailing touch would show it did. send_keys needs the terminals
// capability.
func TestTerminalToolsGate(t *testing.T) {
	l := rigouttest.OpenLedger(t)
	e := &env{m: newManager(t, l), dir: t.TempDir(), ledger: l}
	none := auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}}
	res, text, _ := call(t, e.connect(t, "alice", &none), "create_terminal_session", nil)
	if !res.IsError || !strings.Contains(text, "terminals") {
		t.Fatalf("create_terminal_session without the terminals capability: %s", text)
	}
	narrow := auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, Terminals: true}
	c := e.connect(t, "alice", &narrow)
	id := create(t, c, nil)
	res, text, _ = call(t, c, "execute_in_terminal", map[string]any{"session_id": id,
		"command": "echo ZWNobyBoaQ== | base64 -d | sh; touch ran"})
	if !res.IsError || !strings.Contains(text, "refused by policy rule remote-script") {
		t.Errorf("refused command: %s", text)
	}
	res, text, _ = call(t, c, "execute_in_terminal", map[string]any{"session_id": id,
		"command": "echo ZWNobyBoaQ== | base64 -d | sh; touch ran", "bypass_security": true})
	if !res.IsError || !strings.Contains(text, "refused by policy") {
		t.Errorf("bypass without the scope: %s", text)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "ran")); err == nil {
		t.Fatal("a refused command reached the shell")
	}
	_, text, _ = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "ls"})
	if strings.Contains(text, "ran") {
		t.Errorf("ls: %s", text)
	}
	// The ledger has the session's events and the refusal.
	var kinds []string
	for _, ev := range rigouttest.Events(t, l, audit.Filter{}) {
		switch {
		case ev.CallID == id:
			kinds = append(kinds, string(ev.Type))
		case ev.Tool == "execute_in_terminal" && ev.Phase == audit.PhaseDone:
			kinds = append(kinds, string(ev.Status))
		case ev.Tool == "execute_in_terminal" && ev.Type == audit.TypeToolDenied:
			kinds = append(kinds, string(ev.Type))
		}
	}
	if got := strings.Join(kinds, " "); got != "session.open denied denied session.command ok" {
		t.Errorf("ledger: %s", got)
	}
	_, text, _ = call(t, c, "get_server_activity", nil)
	if !strings.Contains(text, "session.open") || !strings.Contains(text, "session.command") {
		t.Errorf("get_server_activity: %s", text)
	}
}

func TestTerminalToolsSSH(t *testing.T) {
	sd := sshdtest.Start(t, sshdtest.Options{})
	r, err := remote.NewRouter(sd.Router)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	e := &env{m: newManager(t, nil), router: r, dir: t.TempDir()}
	c := e.connect(t, "alice", nil)
	res, text, sc := call(t, c, "create_terminal_session", map[string]any{"host": sshdtest.Host})
	if res.IsError || !strings.HasPrefix(sc["route"].(string), "ssh(") || !strings.Contains(text, "not sandboxed: remote host") {
		t.Fatalf("create over ssh: %s", text)
	}
	id := sc["session_id"].(string)
	dir := t.TempDir()
	call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "cd " + dir + "; X=remote"})
	_, text, sc = call(t, c, "execute_in_terminal", map[string]any{"session_id": id, "command": "echo $X $PWD; (exit 7)"})
	if sc["output"] != "remote "+dir+"\n" || sc["exit_code"] != float64(7) || sc["cwd"] != dir {
		t.Errorf("ssh session: %s", text)
	}
	if res, text, _ := call(t, c, "close_terminal_session", map[string]any{"session_id": id}); res.IsError {
		t.Errorf("close: %s", text)
	}
}

func TestScreen(t *testing.T) {
	for in, want := range map[string]string{
		"plain\n":             "plain\n",
		"a\r\nb\r\n":          "a\nb\n",
		"10%\r20%\r30%\ndone": "30%\ndone",
		"end\r":               "end",
		"abc\b\bX\n":          "aX\n",
		"\bstart":             "start",
		"ü\bx":                "x",
		"line1\nab\rc":        "line1\nc",
	} {
		if got := string(terminal.Screen([]byte(in))); got != want {
			t.Errorf("Screen(%q) = %q, want %q", in, got, want)
		}
	}
}
