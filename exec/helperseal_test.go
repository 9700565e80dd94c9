//go:build linux

package exec_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHelperSealed runs the built helper as the start line would (no
// sshd): with the right hash it re-executes itself from a sealed memfd and
// says so in its hello; with a wrong one, or claiming to be sealed while
// running from a file, it exits 86 without a hello.
func TestHelperSealed(t *testing.T) {
	bin := buildHelper(t)
	path := filepath.Join(t.TempDir(), "helper")
	if err := os.WriteFile(path, bin, 0o500); err != nil {
		t.Fatal(err)
	}
	other := sum256(append(bin[:len(bin):len(bin)], 0))
	tests := []struct {
		name   string
		args   []string
		code   int
		hello  string // HelperInfo.Runs
		stderr string
	}{
		{"sealed", []string{"serve", "-sha256", sum256(bin)}, 0, "sealed memfd", ""},
		{"wrong hash", []string{"serve", "-sha256", other}, 86, "", "sealed bytes hash to " + sum256(bin)},
		{"claims to be sealed", []string{"serve", "-sha256", sum256(bin), "-sealed"}, 86, "", "not a sealed memfd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := osexec.Command(path, tt.args...)
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Stdin = strings.NewReader("") // the input ends: a helper serving exits
			cmd.WaitDelay = 10 * time.Second
			err := cmd.Run()
			code := 0
			var ee *osexec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.stderr)
			}
			if tt.hello == "" {
				if stdout.Len() != 0 {
					t.Errorf("it served: %q", stdout.Bytes())
				}
				return
			}
			var n [4]byte
			if _, err := io.ReadFull(&stdout, n[:]); err != nil {
				t.Fatalf("no hello: %v", err)
			}
			var rep struct {
				Hello struct{ Runs string } `json:"hello"`
			}
			if err := json.Unmarshal(stdout.Next(int(binary.BigEndian.Uint32(n[:]))), &rep); err != nil || rep.Hello.Runs != tt.hello {
				t.Errorf("hello runs %q, %v; want %q", rep.Hello.Runs, err, tt.hello)
			}
		})
	}
}
