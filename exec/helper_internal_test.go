package exec

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestHelperFrames: a frame round-trips; an oversized or short one is an
// error.
func TestHelperFrames(t *testing.T) {
	var b bytes.Buffer
	in := HelperRequest{ID: 7, Op: "file", File: &HelperFile{Op: "read", Root: "/r", Name: "a\x00b"}}
	if err := WriteHelperFrame(&b, in); err != nil {
		t.Fatal(err)
	}
	var out HelperRequest
	if err := ReadHelperFrame(bytes.NewReader(b.Bytes()), &out); err != nil || out.ID != 7 || out.File.Name != "a\x00b" {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	if err := ReadHelperFrame(bytes.NewReader(b.Bytes()[:b.Len()-1]), &out); err == nil {
		t.Error("short frame accepted")
	}
	var big [4]byte
	binary.BigEndian.PutUint32(big[:], maxHelperFrame+1)
	if err := ReadHelperFrame(bytes.NewReader(big[:]), &out); err == nil {
		t.Error("oversized frame accepted")
	}
}

// TestHelperFileOp resolves names beneath a root: links that stay inside
// are followed, every way out fails with EXDEV, whatever the operation.
func TestHelperFileOp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("openat2 is Linux only")
	}
	base := t.TempDir()
	root := filepath.Join(base, "root")
	for _, d := range []string{root, filepath.Join(root, "sub"), filepath.Join(base, "out")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range map[string]string{"root/sub/in.txt": "inside", "out/secret": "SECRET", "canary": "CANARY"} {
		if err := os.WriteFile(filepath.Join(base, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"inlink": "sub/in.txt", "rel-out": "../out", "abs-out": filepath.Join(base, "out"), "dots": "sub/../../canary"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		op    HelperFile
		data  string
		errno syscall.Errno
	}{
		{"read inside", HelperFile{Op: "read", Name: "sub/in.txt"}, "inside", 0},
		{"read absolute inside", HelperFile{Op: "read", Name: filepath.Join(root, "sub/in.txt")}, "inside", 0},
		{"read through an in-root link", HelperFile{Op: "read", Name: "inlink"}, "inside", 0},
		{"read at an offset", HelperFile{Op: "read", Name: "sub/in.txt", Offset: 2, Max: 3}, "sid", 0},
		{"dot-dot", HelperFile{Op: "read", Name: "../canary"}, "", syscall.EXDEV},
		{"absolute outside", HelperFile{Op: "read", Name: filepath.Join(base, "canary")}, "", syscall.EXDEV},
		{"relative link out", HelperFile{Op: "read", Name: "rel-out/secret"}, "", syscall.EXDEV},
		{"absolute link out", HelperFile{Op: "read", Name: "abs-out/secret"}, "", syscall.EXDEV},
		{"dots in a link", HelperFile{Op: "read", Name: "dots"}, "", syscall.EXDEV},
		{"write through a link out", HelperFile{Op: "write", Name: "rel-out/secret", Data: []byte("PWNED"), Flag: os.O_CREATE | os.O_TRUNC}, "", syscall.EXDEV},
		{"create through a link out", HelperFile{Op: "write", Name: "abs-out/new", Data: []byte("PWNED"), Flag: os.O_CREATE}, "", syscall.EXDEV},
		{"chmod through a link out", HelperFile{Op: "chmod", Name: "rel-out/secret", Perm: 0o777}, "", syscall.EXDEV},
		{"remove through a link out", HelperFile{Op: "remove", Name: "abs-out/secret"}, "", syscall.EXDEV},
		{"rename out", HelperFile{Op: "rename", Name: "sub/in.txt", Name2: "rel-out/moved"}, "", syscall.EXDEV},
		{"readdir out", HelperFile{Op: "readdir", Name: "abs-out"}, "", syscall.EXDEV},
		{"lstat a link out itself", HelperFile{Op: "lstat", Name: "abs-out"}, "", 0},
		{"readlink", HelperFile{Op: "readlink", Name: "inlink"}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := tt.op
			op.Root = root
			rep := helperFileOp(&op)
			if syscall.Errno(rep.Errno) != tt.errno {
				t.Fatalf("errno %v (%s), want %v", syscall.Errno(rep.Errno), rep.Err, tt.errno)
			}
			if tt.errno == 0 && rep.Err != "" {
				t.Fatalf("error %s", rep.Err)
			}
			if string(rep.Data) != tt.data {
				t.Errorf("data %q, want %q", rep.Data, tt.data)
			}
		})
	}
	for p, c := range map[string]string{"out/secret": "SECRET", "canary": "CANARY"} {
		if b, err := os.ReadFile(filepath.Join(base, p)); err != nil || string(b) != c {
			t.Errorf("%s changed: %q, %v", p, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "out", "new")); err == nil {
		t.Error("a file was created outside the root")
	}
}
