package auth_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: the trust boundary stays a leaf. It must not be able to
// run programs, speak SSH or know MCP.
func TestDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{"os/exec", "golang.org/x/crypto/ssh", "github.com/mark3labs/mcp-go"}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("implausible dependency list: %v", deps)
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("auth depends on %s", d)
			}
		}
		if strings.HasPrefix(d, "github.com/rigout/rigout/") && d != "github.com/rigout/rigout/auth" {
			t.Errorf("auth depends on %s: it must stay a leaf", d)
		}
	}
}
