package validate_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps validate a leaf: it must not be able to run
// programs, open SSH connections or speak MCP.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/rigout/rigout/validate").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	forbidden := []string{"os/exec", "golang.org/x/crypto/ssh", "github.com/mark3labs/mcp-go"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("validate depends on %s", dep)
			}
		}
	}
}
