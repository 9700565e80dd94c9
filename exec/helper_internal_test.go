package exec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestHelperStartLine runs the start line with sh against a $HOME of the
// test's own: a missing helper exits 85, one whose bytes do not match the
// hash exits 86 without running, a matching one is executed.
func TestHelperStartLine(t *testing.T) {
	for _, bad := range []string{"", "abc", strings.Repeat("A", 64), strings.Repeat("g", 64), strings.Repeat("0", 63) + "'"} {
		if _, err := HelperStartLine(bad, ".cache/rigout", nil); err == nil {
			t.Errorf("hash %q accepted", bad)
		}
	}
	home := t.TempDir()
	mark := filepath.Join(home, "ran")
	good := []byte("#!/bin/sh\necho \"ran $*\" > " + mark + "\n")
	h := sha256.Sum256(good)
	sum := hex.EncodeToString(h[:])
	dir := filepath.Join(home, "cache dir")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "helper-"+sum)
	line, err := HelperStartLine(sum, "cache dir", []string{"it's hidden"})
	if err != nil {
		t.Fatal(err)
	}
	// A sha256sum that, once it has hashed the file, renames another one
	// over it: the race between the check and the exec, won every time.
	swapper := t.TempDir()
	swapped := filepath.Join(home, "swapped-ran")
	evil := filepath.Join(home, "evil")
	fake := "#!/bin/sh\n/usr/bin/env PATH=/usr/bin:/bin sha256sum\n[ -f " + evil + " ] && mv " + evil + " '" + file + "'\nexit 0\n"
	if err := os.WriteFile(filepath.Join(swapper, "sha256sum"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(swap bool) int {
		cmd := osexec.Command("/bin/sh", "-c", line)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		if swap {
			cmd.Env = []string{"HOME=" + home, "PATH=" + swapper + ":/usr/bin:/bin"}
		}
		err := cmd.Run()
		var ee *osexec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	tests := []struct {
		name    string
		content []byte // nil: no file
		swap    bool   // a file is renamed over it between the hash and the exec
		code    int
		ran     bool
	}{
		{"missing", nil, false, helperExitMissing, false},
		{"tampered", []byte("#!/bin/sh\ntouch " + mark + "\n"), false, helperExitMismatch, false},
		{"appended", append(append([]byte{}, good...), '#'), false, helperExitMismatch, false},
		{"verified", good, false, 0, true},
		{"renamed over after the hash", good, true, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(mark)
			os.Remove(file)
			if tt.content != nil {
				if err := os.WriteFile(file, tt.content, 0o500); err != nil {
					t.Fatal(err)
				}
			}
			os.Remove(swapped)
			if tt.swap {
				if err := os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+swapped+"\n"), 0o500); err != nil {
					t.Fatal(err)
				}
			}
			if code := run(tt.swap); code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			if _, err := os.Stat(swapped); err == nil {
				t.Fatalf("the file renamed over the verified one ran")
			}
			if tt.swap {
				if _, err := os.Stat(evil); err == nil {
					t.Fatalf("the swap did not happen: the test proves nothing")
				}
			}
			b, err := os.ReadFile(mark)
			if ran := err == nil; ran != tt.ran {
				t.Fatalf("ran = %v, want %v", ran, tt.ran)
			}
			if tt.ran && !strings.Contains(string(b), "serve -cache "+dir+" -sha256 "+sum+" -exe-fd 3 -hide it's hidden") {
				t.Errorf("arguments: %q", b)
			}
		})
	}
}

// TestHelperFrames: a frame round-trips; an oversized or short one is an
// error.
func TestHelperFrames(t *testing.T) {
	var b bytes.Buffer
	in := helperRequest{ID: 7, Op: "file", File: &helperFile{Op: "read", Root: "/r", Name: "a\x00b"}}
	if err := writeFrame(&b, in); err != nil {
		t.Fatal(err)
	}
	var out helperRequest
	if err := readFrame(bytes.NewReader(b.Bytes()), &out); err != nil || out.ID != 7 || out.File.Name != "a\x00b" {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	if err := readFrame(bytes.NewReader(b.Bytes()[:b.Len()-1]), &out); err == nil {
		t.Error("short frame accepted")
	}
	var big [4]byte
	binary.BigEndian.PutUint32(big[:], maxHelperFrame+1)
	if err := readFrame(bytes.NewReader(big[:]), &out); err == nil {
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
		op    helperFile
		data  string
		errno syscall.Errno
	}{
		{"read inside", helperFile{Op: "read", Name: "sub/in.txt"}, "inside", 0},
		{"read absolute inside", helperFile{Op: "read", Name: filepath.Join(root, "sub/in.txt")}, "inside", 0},
		{"read through an in-root link", helperFile{Op: "read", Name: "inlink"}, "inside", 0},
		{"read at an offset", helperFile{Op: "read", Name: "sub/in.txt", Offset: 2, Max: 3}, "sid", 0},
		{"dot-dot", helperFile{Op: "read", Name: "../canary"}, "", syscall.EXDEV},
		{"absolute outside", helperFile{Op: "read", Name: filepath.Join(base, "canary")}, "", syscall.EXDEV},
		{"relative link out", helperFile{Op: "read", Name: "rel-out/secret"}, "", syscall.EXDEV},
		{"absolute link out", helperFile{Op: "read", Name: "abs-out/secret"}, "", syscall.EXDEV},
		{"dots in a link", helperFile{Op: "read", Name: "dots"}, "", syscall.EXDEV},
		{"write through a link out", helperFile{Op: "write", Name: "rel-out/secret", Data: []byte("PWNED"), Flag: os.O_CREATE | os.O_TRUNC}, "", syscall.EXDEV},
		{"create through a link out", helperFile{Op: "write", Name: "abs-out/new", Data: []byte("PWNED"), Flag: os.O_CREATE}, "", syscall.EXDEV},
		{"chmod through a link out", helperFile{Op: "chmod", Name: "rel-out/secret", Perm: 0o777}, "", syscall.EXDEV},
		{"remove through a link out", helperFile{Op: "remove", Name: "abs-out/secret"}, "", syscall.EXDEV},
		{"rename out", helperFile{Op: "rename", Name: "sub/in.txt", Name2: "rel-out/moved"}, "", syscall.EXDEV},
		{"readdir out", helperFile{Op: "readdir", Name: "abs-out"}, "", syscall.EXDEV},
		{"lstat a link out itself", helperFile{Op: "lstat", Name: "abs-out"}, "", 0},
		{"readlink", helperFile{Op: "readlink", Name: "inlink"}, "", 0},
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
