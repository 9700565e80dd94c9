package process_test

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/process"
	"github.com/rigout/rigout/tools/shell"
)

// sshHost is one SSH host for the hand-off tests: its address, login and
// known_hosts line.
type sshHost struct {
	addr  string
	port  int
	user  string
	known string
	key   *sshtest.Key
	// creds and ledger, if set, are the shell family's credential store
	// and the gateway's ledger.
	creds  *credentials.Store
	ledger audit.Recorder
	// helper, if set, is required on the host (rigout's helper).
	helper *remote.HelperConfig
}

// connectSSH builds a gateway whose shell family reaches h as host "far"
// and hands long commands off to m, for principal alice.
func connectSSH(t *testing.T, m *sessions.Manager, h sshHost) *client.Client {
	t.Helper()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "id_ed25519")
	if err := h.key.Write(keyPath, ""); err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(h.known+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mode := remote.HelperOff
	if h.helper != nil {
		mode = remote.HelperRequire
	}
	r, err := remote.NewRouter(remote.RouterConfig{
		Local:          &exec.Local{UnsafeNoSandbox: true},
		Helper:         h.helper,
		Hosts:          []remote.HostConfig{{Name: "far", Address: h.addr, Port: h.port, User: h.user, Key: keyPath, Helper: mode}},
		KnownHostsFile: known,
		HostKeyPolicy:  remote.HostKeyStrict,
		HomeDir:        dir,
		Grace:          300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	sh, err := shell.New(shell.Config{Processes: m, Hosts: r, Credentials: h.creds})
	if err != nil {
		t.Fatal(err)
	}
	pf, err := process.New(process.Config{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rigout.Config{
		Tools:     append(sh.Tools(), pf.Tools()...),
		Principal: &auth.Principal{Name: "alice", Scopes: auth.FullScopes()},
	}
	if h.ledger != nil {
		cfg.Audit = h.ledger
	}
	return rigouttest.Connect(t, rigouttest.New(t, cfg))
}

// checkSSHHandOff runs `sleep 5; echo done` on host far with
// wait_seconds 1: it must be handed off, keep running on its channel, and
// a later read must show done and exit 0; a second one is stopped.
func checkSSHHandOff(t *testing.T, c *client.Client) {
	t.Helper()
	start := time.Now()
	res, text, sc := call(t, c, "execute_command", map[string]any{"command": "sleep 5; echo done", "host": "far", "wait_seconds": 1})
	if res.IsError || sc["running"] != true || sc["process_id"] == nil {
		t.Fatalf("not handed off: %s", text)
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Fatalf("the call blocked for %v", el)
	}
	if r, _ := sc["route"].(string); !strings.HasPrefix(r, "ssh(") || !strings.Contains(text, "via ssh(") {
		t.Fatalf("route %q: %s", r, text)
	}
	args := nextArgs(t, sc["next"])
	var out strings.Builder
	for range 10 {
		res, text, sc = call(t, c, "process", args)
		if res.IsError {
			t.Fatal(text)
		}
		out.WriteString(sc["stdout"].(map[string]any)["text"].(string))
		if sc["running"] == false {
			break
		}
		args["offset"] = sc["next_offset"]
		args["stderr_offset"] = sc["next_stderr_offset"]
	}
	if out.String() != "done\n" || sc["exit_code"] != float64(0) || sc["running"] != false {
		t.Fatalf("read %q: %s", out.String(), text)
	}
	// It ran once: the remote pid seen during the run is the one reported.
	if pid, _ := sc["pid"].(float64); pid <= 1 {
		t.Errorf("remote pid %v", sc["pid"])
	}

	// A stop ends a handed-off remote command.
	mk := marker()
	res, text, sc = call(t, c, "execute_command", map[string]any{"argv": []string{"sleep", mk}, "host": "far", "wait_seconds": 0})
	if res.IsError || sc["running"] != true {
		t.Fatalf("not handed off: %s", text)
	}
	id := sc["process_id"].(string)
	res, text, _ = call(t, c, "process", map[string]any{"action": "signal", "id": id})
	if res.IsError {
		t.Fatal(text)
	}
	res, text, sc = call(t, c, "process", map[string]any{"action": "read", "id": id, "wait_seconds": 10})
	if res.IsError || sc["running"] != false || sc["stopped"] != "stopped" {
		t.Fatalf("stop: %s", text)
	}
	waitGone(t, mk)

	// A signal reaches it: TERM to the remote process group.
	mk = marker()
	_, text, sc = call(t, c, "execute_command", map[string]any{"command": "sleep " + mk + "; echo not reached", "host": "far", "wait_seconds": 0})
	id, _ = sc["process_id"].(string)
	if id == "" {
		t.Fatalf("not handed off: %s", text)
	}
	for survivors(mk) == 0 {
		time.Sleep(10 * time.Millisecond) // the remote shell starts sleep
	}
	if res, text, _ = call(t, c, "process", map[string]any{"action": "signal", "id": id, "signal": "TERM"}); res.IsError {
		t.Fatal(text)
	}
	_, text, sc = call(t, c, "process", map[string]any{"action": "read", "id": id, "wait_seconds": 10})
	if sc["running"] != false || sc["exit_code"] == float64(0) || strings.Contains(text, "not reached") {
		t.Fatalf("TERM: %s", text)
	}
	waitGone(t, mk)

	// Its standard input is the process's: write to a remote cat, then
	// close it with ctrl-d.
	_, text, sc = call(t, c, "execute_command", map[string]any{"argv": []string{"cat"}, "host": "far", "wait_seconds": 0})
	id, _ = sc["process_id"].(string)
	if id == "" {
		t.Fatalf("not handed off: %s", text)
	}
	if res, text, _ = call(t, c, "process", map[string]any{"action": "write", "id": id, "input": "over ssh", "keys": []string{"enter", "ctrl-d"}}); res.IsError {
		t.Fatal(text)
	}
	_, text, sc = call(t, c, "process", map[string]any{"action": "read", "id": id, "wait_seconds": 10})
	for sc["running"] == true {
		_, text, sc = call(t, c, "process", map[string]any{"action": "read", "id": id, "wait_seconds": 10})
	}
	if sc["exit_code"] != float64(0) || sc["stdout"].(map[string]any)["text"] != "over ssh\n" {
		t.Fatalf("cat: %s", text)
	}
}

// waitGone fails the test if a process with argument mk still runs 5s
// from now.
func waitGone(t *testing.T, mk string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for survivors(mk) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the remote process %s survived", mk)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSSHHandOffInProcessServer(t *testing.T) {
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sshtest.NewServer(sshtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	m := newManager(t, nil)
	c := connectSSH(t, m, sshHost{addr: s.Host(), port: s.Port(), user: "agent", known: s.KnownHostsLine(), key: key})
	checkSSHHandOff(t, c)
}

func TestSSHHandOffOpenSSH(t *testing.T) {
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	d := sshdtest.Start(t, sshdtest.Options{Authorized: []*sshtest.Key{key}})
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, nil)
	c := connectSSH(t, m, sshHost{addr: "127.0.0.1", port: d.Port, user: u.Username, known: d.KnownHostsLine, key: key})
	checkSSHHandOff(t, c)
}
