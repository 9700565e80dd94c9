package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rigout/rigout/internal/atomicfile"
)

func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "runtime.json")
	if err := atomicfile.Write(path, []byte(`{"pid": 42}`+"\n")); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output: {"pid": 42}
}

// TestWriteReplacesOwnerOnly: the new contents replace the old, the file
// is 0600 whatever it was, and no temporary file is left beside it.
func TestWriteReplacesOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old contents, longer than the new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new" {
		t.Fatalf("read back %q, %v; want %q", b, err, "new")
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after the write, want 1 (a temporary file left?): %v", len(entries), entries)
	}
}

// TestWriteFailureLeavesNothing: a write into a directory that is not
// there fails and changes nothing.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "f")
	if err := atomicfile.Write(path, []byte("x")); err == nil {
		t.Fatal("Write into a missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
}

// TestRenameFailureRemovesTheTemporaryFile: when the rename fails (path is
// a directory that is not empty), the temporary file written beside it is
// removed and the directory is untouched.
func TestRenameFailureRemovesTheTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("x")); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "f" || !entries[0].IsDir() {
		t.Errorf("directory holds %v after the failed write, want only the directory f", entries)
	}
}
