package auth_test

import (
	"testing"

	"github.com/rigout/rigout/internal/doccheck"
)

// TestPackageDoc: one package comment, in doc.go, with # Overview and
// # Usage; every exported name documented, struct fields included.
func TestPackageDoc(t *testing.T) {
	doccheck.PackageDoc(t, ".", "github.com/rigout/rigout/auth")
}
