package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
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
