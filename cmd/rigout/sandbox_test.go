package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec"
)

// TestE2EKernelHoldsWhatThePolicyCannotSee deletes a sentinel protected
// root through a path computed at run time, which no parser can see: the
// policy lets it through, and the kernel sandbox of `rigout stdio` must
// keep the root and its entries. Harmless if the sandbox fails: the
// worst it deletes is the sentinel.
func TestE2EKernelHoldsWhatThePolicyCannotSee(t *testing.T) {
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	st := sb.Status()
	sb.Close()
	if !st.Enforced || !st.Signals {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("the kernel sandbox is required here: %s", st)
		}
		t.Skipf("SKIP: no full Landlock sandbox on this kernel (%s); set RIGOUT_REQUIRE_SANDBOX=1 to fail instead", st)
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "protected")
	keep := filepath.Join(root, "keep")
	deep := filepath.Join(root, "sub", "work.txt")
	if err := os.MkdirAll(filepath.Dir(deep), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{keep, deep} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`{"policy": {"protected_roots": ["/", %q]}}`, root)
	cfgPath := filepath.Join(dir, "rigout.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startStdio(t, "--config", cfgPath, "--no-ssh", "--require-sandbox")

	enc := base64.StdEncoding.EncodeToString([]byte(root))
	res := call(t, s.client, "execute_command", map[string]any{"command": "p=$(echo " + enc + " | base64 -d); rm -rf \"$p\"; ls \"$p\""})
	text := resultText(res)
	if strings.Contains(text, "refused by policy") {
		t.Fatalf("the policy saw through the computed path; the test no longer probes the kernel:\n%s", text)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the kernel let a protected root's entry be deleted: %v\n%s", err, text)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("the protected root is gone: %v", err)
	}
	// Work two levels down stays possible: rm -rf emptied sub/.
	if _, err := os.Stat(deep); !os.IsNotExist(err) {
		t.Errorf("a file two levels down was not deletable: %v", err)
	}
	if !strings.Contains(text, "keep") {
		t.Errorf("ls of the root after rm -rf should still show keep:\n%s", text)
	}
}
