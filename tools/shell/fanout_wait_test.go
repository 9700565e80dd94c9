package shell_test

import (
	"strings"
	"testing"

	"github.com/rigout/rigout/tools/shell"
)

// A fan-out runs within its call, wait_seconds or not, and says so.
func TestFanOutSaysWaitSecondsDoesNotApply(t *testing.T) {
	f := newSSHFixture(t, 2, true)
	c := connect(t, newGateway(t, setup{SSH: &f.cfg, Shell: shell.Config{Processes: newManager(t)}}))
	res := callTool(t, c, "execute_command", map[string]any{"command": "echo hi", "hosts": []any{"web1", "web2"}, "wait_seconds": 1})
	if res.IsError || !strings.Contains(text(res), "wait_seconds does not apply to a fan-out") {
		t.Fatalf("%s", text(res))
	}
	res = callTool(t, c, "execute_command", map[string]any{"command": "echo hi", "hosts": []any{"web1", "web2"}})
	if strings.Contains(text(res), "wait_seconds") {
		t.Fatalf("noted without wait_seconds: %s", text(res))
	}
}
