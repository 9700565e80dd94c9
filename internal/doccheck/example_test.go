package doccheck_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rigout/rigout/internal/doccheck"
)

func Example() {
	root, _ := os.MkdirTemp("", "doccheck-example-")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "x.go"), []byte("package x\n\nfunc Serve() {}\n"), 0o644)
	os.WriteFile(filepath.Join(root, "doc.md"), []byte("`x.go:Serve` answers; `x.go:Listen` was renamed.\n"), 0o644)
	problems, _, _ := doccheck.Check(root, filepath.Join(root, "doc.md"))
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// line 1: `x.go:Listen`: x.go declares no Listen
}
