package doccheck_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rigout/rigout/internal/doccheck"
)

// errorsTB records a test's errors instead of failing it.
type errorsTB struct {
	testing.TB
	errs []string
}

func (r *errorsTB) Helper() {}
func (r *errorsTB) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

func TestPackageDocFindings(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"doc.go":    "// Package p does things.\n//\n// # Overview\n//\n// It is small.\npackage p\n",
		"p.go":      "// Package p again.\npackage p\n\n// Good is documented.\nfunc Good() {}\n\nfunc Bare() {}\n\ntype T struct{}\n\n// M is documented.\nfunc (T) M() {}\n\nfunc (T) N() {}\n",
		"s.go":      "package p\n\n// S is documented.\ntype S struct {\n\t// A and B are covered by one comment.\n\tA int\n\tB int\n\n\tC int\n\tD int // trailing\n\tx int\n}\n",
		"x_test.go": "package p\n\nfunc Untested() {}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &errorsTB{TB: t}
	doccheck.PackageDoc(r, dir, "example.com/p")
	want := []string{
		`example.com/p: package comment lacks "# Usage"`,
		"field S.C is not documented",
		"func Bare is not documented",
		"method T.N is not documented",
		"p.go has a package comment; only doc.go should",
		"type T is not documented",
	}
	slices.Sort(r.errs)
	if !slices.Equal(r.errs, want) {
		t.Errorf("findings:\n%q\nwant:\n%q", r.errs, want)
	}
}
