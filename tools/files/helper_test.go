package files_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/rigouttest"
)

// TestSwapRaceHelper is TestSwapRace against an SSH host through rigout's
// helper: a directory inside the root keeps being swapped for a symbolic
// link to a directory outside it while the tools read, write, edit, chmod
// and delete through it. The helper resolves each name with openat2
// beneath the root, so no swap timing reaches the canary (over plain SFTP
// the same loop does: exec's TestHelperSSHDSymlinkRace counts both).
func TestSwapRaceHelper(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := newCanary(t, filepath.Join(outside, "f.txt"))
	e := newEnv(t, helperSetup(t, setup{roots: []string{root}}))
	swap := filepath.Join(root, "swap")
	real := filepath.Join(root, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(real, "f.txt"), "inside\n")
	out := e.ok(map[string]any{"action": "read", "path": real + "/f.txt", "host": "sftp1"})
	if !strings.Contains(out, "rigout-helper") {
		t.Errorf("the read's route does not name the helper: %s", out)
	}

	swaps, stop := swapRace(t, root, swap, outside, false)
	ok := 0
	const rounds = 60
	for i := 0; i < rounds; i++ {
		for _, args := range []map[string]any{
			{"action": "read", "path": swap + "/f.txt"},
			{"action": "write", "path": swap + "/f.txt", "content": "PWNED\n"},
			{"action": "edit", "path": swap + "/f.txt", "old_string": "CANARY", "new_string": "PWNED"},
			{"action": "chmod", "path": swap + "/f.txt", "mode": "777"},
			{"action": "delete", "path": swap + "/f.txt"},
		} {
			args["host"] = "sftp1"
			res := e.call("file_operations", args)
			if !res.IsError {
				ok++
			}
			if text := rigouttest.Text(res); c.leaked(text) {
				stop()
				t.Fatalf("round %d %v: canary leaked: %s", i, args, text)
			}
		}
		c.check(t, "swap race through the helper")
	}
	stop()
	t.Logf("%d rounds, %d swaps, %d calls succeeded inside the root; canary intact", rounds, swaps.Load(), ok)
	if swaps.Load() < 10 {
		t.Fatalf("only %d swaps happened: the race did not run", swaps.Load())
	}
	if ok == 0 {
		t.Fatal("no call succeeded: the race proves nothing")
	}
}
