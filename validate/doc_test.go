package validate_test

import (
	"testing"

	"github.com/rigout/rigout/internal/doccheck"
)

// TestPackageDoc checks that the package comment lives in doc.go alone,
// with Overview and Usage sections, and that every exported name is
// documented.
func TestPackageDoc(t *testing.T) {
	doccheck.PackageDoc(t, ".", "github.com/rigout/rigout/validate")
}
