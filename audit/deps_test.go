package audit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: package audit, and the fake in audittest, carry no
// database. An embedder that brings its own backend, or tests with the
// fake, must not need cgo or the SQLite driver; those belong to
// audit/sqlite.
func TestDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	self := map[string]bool{"github.com/rigout/rigout/audit": true, "github.com/rigout/rigout/audit/audittest": true}
	for _, pkg := range []string{".", "./audittest"} {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("%s: implausible dependency list: %v", pkg, deps)
		}
		forbidden := []string{"github.com/mattn/go-sqlite3", "database/sql", "runtime/cgo"}
		for _, d := range deps {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
			if strings.HasPrefix(d, "github.com/rigout/rigout/") && !self[d] {
				t.Errorf("%s depends on %s: audit stays a leaf", pkg, d)
			}
		}
	}
}
