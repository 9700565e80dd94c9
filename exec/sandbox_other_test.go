//go:build !linux

package exec_test

import (
	"os"
	"testing"

	"github.com/rigout/rigout/exec"
)

// sandboxStatus reports what a sandbox enforces on this system: outside
// Linux, nothing yet, so the sandbox tests skip (or fail under
// RIGOUT_REQUIRE_SANDBOX=1).
func sandboxStatus(t *testing.T) exec.SandboxStatus {
	t.Helper()
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	return sb.Status()
}

// skipOrFail skips the test with why, or fails it when RIGOUT_REQUIRE_SANDBOX=1.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
		t.Fatalf("RIGOUT_REQUIRE_SANDBOX=1 and: %s", why)
	}
	t.Skip("SKIPPED, sandbox not verified: " + why)
}
