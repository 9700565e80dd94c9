package process_test

import (
	"os/user"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec/remote/sshtest"
	"github.com/rigout/rigout/internal/sshdtest"
)

// TestSSHHandOffHelper is the hand-off suite on a real sshd with rigout's
// helper required there: commands handed off to the process manager run
// through the helper (SSH.Start), their output read as it comes, stopped,
// signalled and fed standard input as over plain SSH.
func TestSSHHandOffHelper(t *testing.T) {
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	d := sshdtest.Start(t, sshdtest.Options{Authorized: []*sshtest.Key{key}, SetEnv: map[string]string{"HOME": t.TempDir()}})
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, nil)
	c := connectSSH(t, m, sshHost{addr: "127.0.0.1", port: d.Port, user: u.Username, known: d.KnownHostsLine, key: key, helper: sshdtest.BuildHelper(t)})
	// The first call uploads and starts the helper (seconds, once per host
	// and version); the suite's timings are for warm calls.
	if res, text, sc := call(t, c, "execute_command", map[string]any{"command": "true", "host": "far"}); res.IsError || !strings.Contains(sc["route"].(string), "via rigout-helper") {
		t.Fatalf("warm-up: %s", text)
	}
	checkSSHHandOff(t, c)
}
