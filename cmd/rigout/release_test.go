package main

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// releaseCommand returns the release build command documented in the
// README (the sh block under "## Release build"), so the test builds what
// the README tells people to build.
func releaseCommand(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Release build\n")
	if i < 0 {
		t.Fatal("README has no ## Release build section")
	}
	rest := doc[i:]
	start := strings.Index(rest, "```sh\n")
	end := strings.Index(rest[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the Release build section has no sh block")
	}
	cmd := strings.TrimSpace(rest[start+6 : start+6+end])
	if !strings.Contains(cmd, "-o rigout ./cmd/rigout") || !strings.Contains(cmd, "-extldflags -static") {
		t.Fatalf("the README's release command changed shape: %q", cmd)
	}
	return cmd
}

// staticBinary builds the release binary once per test binary.
var static struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

func releaseBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped in -short mode: the release build compiles SQLite for static linking (about a minute)")
	}
	cmdline := releaseCommand(t)
	static.once.Do(func() {
		dir, err := os.MkdirTemp("", "rigout-release-")
		if err != nil {
			static.err = err
			return
		}
		static.path = filepath.Join(dir, "rigout")
		c := osexec.Command("sh", "-c", strings.Replace(cmdline, "-o rigout", `-o "$OUT"`, 1))
		c.Dir = "../.."
		c.Env = append(os.Environ(), "OUT="+static.path)
		static.out, static.err = c.CombinedOutput()
	})
	if static.err != nil {
		t.Fatalf("release build: %v\n%s", static.err, static.out)
	}
	return static.path
}

// TestReleaseBuildRunsInEmptyChroot builds the README's release command
// and runs the result in a directory that holds nothing but the binary (no
// libc, no /proc, no /dev): it reports its commit and answers initialize.
func TestReleaseBuildRunsInEmptyChroot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP (loud): chroot needs root; run as root to check the static release build (CI does)")
	}
	bin := releaseBinary(t)

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the release binary has a dynamic loader (PT_INTERP): it is not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the release binary needs shared libraries: %v", libs)
	}
	f.Close()

	root := t.TempDir()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "rigout"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Fatalf("the chroot holds %d entries, want only the binary", len(entries))
	}
	inChroot := func(ctx context.Context, args ...string) *osexec.Cmd {
		c := osexec.CommandContext(ctx, "/rigout", args...)
		c.Path = "/rigout"
		c.Dir = "/"
		c.Env = []string{"HOME=/", "RIGOUT_STATE_DIR=/state", "PATH=/"}
		c.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	head, err := osexec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	out, err := inChroot(ctx, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("rigout version in the chroot: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), strings.TrimSpace(string(head))) || !strings.Contains(string(out), "static") {
		t.Errorf("rigout version = %q, want the commit %s and \"static\"", out, head)
	}

	c := inChroot(ctx, "stdio", "--no-ssh")
	stdin, _ := c.StdinPipe()
	stdout, _ := c.StdoutPipe()
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	defer stdin.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"chroot-test","version":"1"}}}`+"\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to initialize: %v\nstderr:\n%s", err, stderr.String())
	}
	var resp struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result.ServerInfo.Name != "rigout" {
		t.Fatalf("initialize answer %q (%v)\nstderr:\n%s", line, err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(root, "state", "audit.db")); err != nil {
		t.Errorf("the ledger was not created inside the chroot: %v", err)
	}
}

// BenchmarkColdStart measures starting rigout stdio until it answers
// initialize, for the release (static) binary and the ordinary
// (dynamically linked) build, side by side:
//
//	go test -run '^$' -bench ColdStart ./cmd/rigout
func BenchmarkColdStart(b *testing.B) {
	for _, bc := range []struct {
		name string
		bin  func(testing.TB) string
	}{{"dynamic", rigoutBinary}, {"static", releaseBinary}} {
		b.Run(bc.name, func(b *testing.B) {
			bin := bc.bin(b)
			state := b.TempDir()
			b.ResetTimer()
			for b.Loop() {
				c := osexec.Command(bin, "stdio", "--no-ssh")
				c.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+state)
				stdin, _ := c.StdinPipe()
				stdout, _ := c.StdoutPipe()
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n")
				if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				b.StopTimer() // shutting down is not starting
				stdin.Close()
				c.Wait()
				b.StartTimer()
			}
		})
	}
}
