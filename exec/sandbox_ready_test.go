package exec_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rigout/rigout/exec"
)

// TestSandboxReadyFirstCommand: NewSandbox returns before its ruleset is
// built, and a command started at once still runs inside it: it cannot
// write a critical file. A path that cannot be resolved is still refused
// by NewSandbox itself, and Ready reports the first build, after which
// Status lists the missing paths.
func TestSandboxReadyFirstCommand(t *testing.T) {
	if st := sandboxStatus(t); !st.Enforced {
		skipOrFail(t, st.Reason)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "critical")
	if err := os.WriteFile(file, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.NewSandbox(exec.SandboxConfig{Protected: []string{filepath.Join(file, "below-a-file")}}); err == nil {
		t.Fatal("NewSandbox accepted a path below a regular file")
	}
	for i := range 5 { // the race between the build and the first command, several times
		missing := filepath.Join(dir, "not-yet")
		sb, err := exec.NewSandbox(exec.SandboxConfig{Critical: []string{file}, Protected: []string{missing}})
		if err != nil {
			t.Fatal(err)
		}
		firstCommandConfined(t, sb, file, missing, fmt.Sprintf("round %d", i))
		if err := sb.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var none *exec.Sandbox
	if err := none.Ready(); err != nil {
		t.Fatalf("nil Sandbox: Ready = %v", err)
	}
}

// TestSandboxBuildLater: with BuildLater nothing is built until something
// needs it, Status answers meanwhile, and a first command (or Ready, or
// Close) starts the build itself and waits for it, so that it still runs
// inside the ruleset. Start may be called any number of times.
func TestSandboxBuildLater(t *testing.T) {
	if st := sandboxStatus(t); !st.Enforced {
		skipOrFail(t, st.Reason)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "critical")
	if err := os.WriteFile(file, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "not-yet")
	if _, err := exec.NewSandbox(exec.SandboxConfig{Protected: []string{filepath.Join(file, "below-a-file")}, BuildLater: true}); err == nil {
		t.Fatal("NewSandbox with BuildLater accepted a path below a regular file")
	}
	for _, how := range []string{"command", "start", "close"} {
		sb, err := exec.NewSandbox(exec.SandboxConfig{Critical: []string{file}, Protected: []string{missing}, BuildLater: true})
		if err != nil {
			t.Fatal(err)
		}
		if st := sb.Status(); !st.Enforced || len(st.Missing) != 0 {
			t.Fatalf("%s: Status before any build = %+v, want enforced and nothing listed missing yet", how, st)
		}
		switch how {
		case "close":
			if err := sb.Close(); err != nil {
				t.Fatalf("Close before any build: %v", err)
			}
			continue
		case "start":
			sb.Start()
			sb.Start()
		}
		firstCommandConfined(t, sb, file, missing, how)
		sb.Start() // after the build: nothing to do
		if err := sb.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// firstCommandConfined runs a command that tries to overwrite the critical
// file as sb's first, checks that it ran confined and failed, then that the
// build, once Ready, reports missing among the missing paths.
func firstCommandConfined(t *testing.T, sb *exec.Sandbox, file, missing, label string) {
	t.Helper()
	res, err := (&exec.Local{Sandbox: sb}).Run(context.Background(), exec.Command{Shell: "echo overwritten > " + file})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "original\n" || !res.Sandboxed || res.ExitCode == 0 {
		t.Fatalf("%s: first command: sandboxed %v, exit %d, file now %q", label, res.Sandboxed, res.ExitCode, b)
	}
	if err := sb.Ready(); err != nil {
		t.Fatal(err)
	}
	if m := sb.Status().Missing; !slices.Contains(m, missing) {
		t.Fatalf("%s: Status().Missing = %v after Ready, want %s in it", label, m, missing)
	}
}
