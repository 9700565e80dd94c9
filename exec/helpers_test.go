package exec_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// buildHelper builds cmd/rigout-helper without cgo and returns its bytes.
func buildHelper(t testing.TB) []byte {
	t.Helper()
	goBin := "go" // from PATH, as the README's test command runs it
	out := filepath.Join(t.TempDir(), "rigout-helper")
	cmd := osexec.Command(goBin, "build", "-o", out, "github.com/rigout/rigout/cmd/rigout-helper")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build rigout-helper: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sum256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// leakCheck fails the test if it leaves goroutines behind. Register it
// first: cleanups run in reverse order, so it runs after the others.
func leakCheck(t testing.TB) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		goleak.VerifyNone(t, opt)
	})
}
