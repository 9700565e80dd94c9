//go:build linux

package exec_test

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
)

// hiddenSandbox returns a sandbox hiding a fresh state directory with a
// token in it, and that directory.
func hiddenSandbox(t *testing.T) (*exec.Sandbox, string) {
	t.Helper()
	if st := sandboxStatus(t); !st.Enforced {
		skipOrFail(t, "no Landlock: "+st.Reason)
	}
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "token"), []byte(tokenData), 0o600); err != nil {
		t.Fatal(err)
	}
	sb, err := exec.NewSandbox(exec.SandboxConfig{Hidden: []string{state}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb, state
}

// TestSandboxGatewayUnaffected checks that confining a thread for each
// command leaves the gateway itself unconfined: after many concurrent
// sandboxed runs, every thread of the test process can still read the
// hidden directory and none has no_new_privs.
func TestSandboxGatewayUnaffected(t *testing.T) {
	sb, state := hiddenSandbox(t)
	l := &exec.Local{Sandbox: sb}
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	for range 32 {
		wg.Go(func() {
			res, err := l.Run(context.Background(), exec.Command{Argv: []string{"cat", filepath.Join(state, "token")}})
			if err != nil {
				t.Error(err)
				return
			}
			if !res.Sandboxed || res.ExitCode == 0 || strings.Contains(string(res.Stdout.Data), tokenData) {
				t.Errorf("sandboxed cat of the token: %+v", res)
			}
		})
	}
	wg.Wait()
	for range 64 {
		wg.Go(func() {
			if b, err := os.ReadFile(filepath.Join(state, "token")); err != nil || string(b) != tokenData {
				t.Errorf("the gateway cannot read its own state after sandboxed runs: %q, %v", b, err)
			}
			if _, err := os.ReadDir(state); err != nil {
				t.Errorf("the gateway cannot list its own state: %v", err)
			}
		})
	}
	wg.Wait()
	// The one thread confined in advance for the next command is all
	// that may carry a domain, and it runs nothing else: the readers
	// above would have failed on it.
	if c := confinedThreads(t); len(c) > 1 {
		t.Errorf("%d gateway threads have no_new_privs (%v): only the one prepared for the next command may", len(c), c)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if c := confinedThreads(t); len(c) > 0 {
		t.Errorf("after Close, gateway threads have no_new_privs (a sandbox thread was kept): %v", c)
	}
	// The gateway itself can still start unconfined commands.
	res, err := (&exec.Local{}).Run(context.Background(), exec.Command{Argv: []string{"cat", filepath.Join(state, "token")}})
	if err != nil || string(res.Stdout.Data) != tokenData {
		t.Errorf("unsandboxed Local after sandboxed runs: %q, %v", res.Stdout.Data, err)
	}
}

// confinedThreads returns the threads of the test process that have
// no_new_privs, as every sandbox launch thread has.
func confinedThreads(t *testing.T) []string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("threads: %v", err)
	}
	var out []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		if strings.Contains(string(b), "NoNewPrivs:\t1") {
			out = append(out, filepath.Base(filepath.Dir(f)))
		}
	}
	return out
}

// waitPrepared waits until the sandbox has confined a thread for the next
// command (it does so after each start) and returns its id.
func waitPrepared(t *testing.T) string {
	t.Helper()
	// The previous command's launch thread may still be on its way out
	// on a busy machine: wait for the prepared one to be the only one.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := confinedThreads(t)
		if len(c) == 1 {
			return c[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d confined threads after 10s, want 1 (the one prepared for the next command): %v", len(c), c)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSandboxLaunchThread probes the moment right after exec with a
// static C program that tries to signal (signal 0) every thread of the
// gateway: the thread that started the command shares its Landlock
// domain, so it must be gone before the command runs.
func TestSandboxLaunchThread(t *testing.T) {
	sb, _ := hiddenSandbox(t)
	probe := buildThreadProbe(t)
	l := &exec.Local{Sandbox: sb}
	unconfined, err := (&exec.Local{}).Run(context.Background(), exec.Command{Argv: []string{probe}})
	if err != nil || strings.HasPrefix(string(unconfined.Stdout.Data), "0 ") {
		t.Fatalf("the probe cannot signal the gateway even unconfined (%q, %v): it proves nothing", unconfined.Stdout.Data, err)
	}
	hits := 0
	for range 300 {
		res, err := l.Run(context.Background(), exec.Command{Argv: []string{probe}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(res.Stdout.Data), "0 ") {
			hits++
		}
	}
	if hits > 0 {
		t.Errorf("in %d of 300 calls the command could signal a gateway thread", hits)
	}
}

// TestSandboxPreparedThread checks that the thread the sandbox confines
// in advance for the next command is out of reach of the commands
// running meanwhile: it is in a domain of its own, which theirs do not
// contain. The probe waits until that thread exists, then tries to
// signal every gateway thread.
func TestSandboxPreparedThread(t *testing.T) {
	sb, _ := hiddenSandbox(t)
	if !sb.Status().Signals {
		skipOrFail(t, "no Landlock signal scoping (ABI < 6): commands can signal every gateway thread")
	}
	probe := buildThreadProbe(t)
	l := &exec.Local{Sandbox: sb}
	for i := range 20 {
		goAhead := filepath.Join(t.TempDir(), fmt.Sprint("go", i))
		p, err := l.Start(context.Background(), exec.Command{Argv: []string{probe, goAhead}})
		if err != nil {
			t.Fatal(err)
		}
		// The probe's own launch thread is gone by now; the one
		// waiting for the next command is the only confined thread.
		tid := waitPrepared(t)
		if err := os.WriteFile(goAhead, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := p.Wait()
		if err != nil {
			t.Fatal(err)
		}
		var hits, tries int
		if _, err := fmt.Sscanf(string(res.Stdout.Data), "%d %d", &hits, &tries); err != nil || tries == 0 {
			t.Fatalf("probe output %q: %v", res.Stdout.Data, err)
		}
		if hits > 0 {
			t.Fatalf("a sandboxed command could signal %d of %d gateway threads, with thread %s confined for the next command", hits, tries, tid)
		}
	}
}

// buildThreadProbe compiles testdata/threadprobe.c, or skips.
func buildThreadProbe(t *testing.T) string {
	t.Helper()
	cc, err := osexec.LookPath("cc")
	if err != nil {
		skipOrFail(t, "launch-thread probe not run: no C compiler (cc) to build testdata/threadprobe.c")
	}
	probe := filepath.Join(t.TempDir(), "threadprobe")
	if _, err := osexec.Command(cc, "-O2", "-static", "-o", probe, "testdata/threadprobe.c").CombinedOutput(); err != nil {
		if out, err := osexec.Command(cc, "-O2", "-o", probe, "testdata/threadprobe.c").CombinedOutput(); err != nil {
			skipOrFail(t, fmt.Sprintf("cannot build the launch-thread probe: %v: %s", err, out))
		}
	}
	return probe
}

func TestSandboxSudoRunsOutside(t *testing.T) {
	sb, _ := hiddenSandbox(t)
	// A stand-in sudo that runs its command: the real one may be absent,
	// and must not run here.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "sudo"), []byte("#!/bin/sh\nshift 2\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	l := &exec.Local{Sandbox: sb}
	res, err := l.Run(context.Background(), exec.Command{Argv: []string{"true"}, Sudo: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sandboxed || !strings.Contains(res.Unsandboxed, "sudo") {
		t.Errorf("sudo call: Sandboxed %v, Unsandboxed %q; want it said to run outside", res.Sandboxed, res.Unsandboxed)
	}
	res, err = l.Run(context.Background(), exec.Command{Argv: []string{"true"}})
	if err != nil || !res.Sandboxed || res.Unsandboxed != "" {
		t.Errorf("plain call: %+v, %v", res, err)
	}
	res, err = (&exec.Local{}).Run(context.Background(), exec.Command{Argv: []string{"true"}})
	if err != nil || res.Sandboxed || res.Unsandboxed != "no sandbox configured" {
		t.Errorf("no sandbox: %+v, %v", res, err)
	}
}

func TestSandboxPlan(t *testing.T) {
	d := t.TempDir()
	for _, p := range []string{"srv/data/sub/deep", "srv/other", "etc", "var/lib/rigout", "var/log"} {
		if err := os.MkdirAll(filepath.Join(d, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"srv/data/file", "etc/passwd", "etc/hosts", "var/lib/rigout/token"} {
		if err := os.WriteFile(filepath.Join(d, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(d, "var/lib/rigout"), filepath.Join(d, "etc/link-to-state")); err != nil {
		t.Fatal(err)
	}
	d, _ = filepath.EvalSymlinks(d)
	cfg := exec.SandboxConfig{
		Protected: []string{filepath.Join(d, "srv/data")},
		Critical:  []string{filepath.Join(d, "etc/passwd")},
		Hidden:    []string{filepath.Join(d, "var/lib/rigout")},
	}
	rules, err := exec.PlanSandbox(cfg, 6)
	if err != nil {
		t.Fatal(err)
	}
	noRemove := "execute,write_file,read_file,read_dir,make_char,make_dir,make_reg,make_sock,make_fifo,make_block,make_sym,refer,truncate,ioctl_dev"
	want := map[string]string{
		"/srv":                  noRemove,
		"/srv/data":             noRemove,
		"/srv/data/sub":         "all",
		"/srv/data/sub/deep":    "all",
		"/srv/data/file":        "all-file",
		"/srv/other":            "all",
		"/etc":                  "execute,read_file,read_dir,make_char,make_dir,make_reg,make_sock,make_fifo,make_block,make_sym,refer,ioctl_dev",
		"/etc/passwd":           "execute,read_file,ioctl_dev",
		"/etc/hosts":            "all-file",
		"":                      "read_dir", // the temporary directory, on the way to the hidden one
		"/var":                  "read_dir",
		"/var/lib":              "read_dir",
		"/var/lib/rigout":       "read_dir", // names only: hidden
		"/var/lib/rigout/token": "",
		"/var/log":              "all",
	}
	var paths []string
	for p := range want {
		paths = append(paths, d+p)
	}
	got, err := exec.EffectiveRights(cfg, 6, append(paths, "/")...)
	if err != nil {
		t.Fatal(err)
	}
	for path, rights := range want {
		if got[d+path] != rights {
			t.Errorf("%s: rights %q, want %q", path, got[d+path], rights)
		}
	}
	if got["/"] != "read_dir" {
		t.Errorf("/, an ancestor of the hidden directory: rights %q, want read_dir only", got["/"])
	}
	ruled := map[string]bool{}
	for _, r := range rules {
		path, _, _ := strings.Cut(r, " ")
		ruled[path] = true
		if strings.HasPrefix(path, d+"/var/lib/rigout/") {
			t.Errorf("a rule inside the hidden directory: %s", path)
		}
	}
	if ruled[d+"/etc/link-to-state"] {
		t.Error("a symbolic link got a rule: that would grant on its target")
	}
	// Rules that grant nothing beyond the directories above are left
	// out: the kernel copies every rule into each call's domain.
	for _, p := range []string{"/srv/data", "/srv/data/file", "/etc/passwd", "/var/lib/rigout"} {
		if ruled[d+p] {
			t.Errorf("%s has a rule that grants nothing its parent does not", p)
		}
	}
	// A read-only tree: it and the directories on the way get read rights
	// only; the rest of its parent stays free.
	cfg = exec.SandboxConfig{ReadOnly: []string{filepath.Join(d, "srv/other")}}
	got, err = exec.EffectiveRights(cfg, 6, d+"/srv/other", d+"/srv", d+"/srv/data", d+"/srv/data/file")
	if err != nil {
		t.Fatal(err)
	}
	for path, rights := range map[string]string{"/srv/other": "execute,read_file,read_dir", "/srv": "execute,read_file,read_dir", "/srv/data": "all", "/srv/data/file": "all-file"} {
		if got[d+path] != rights {
			t.Errorf("read-only plan: %s: rights %q, want %q", path, got[d+path], rights)
		}
	}
}

// TestSandboxPlanSmall checks that the files directly in a protected root
// cost no rule each, while its directories and the files next to a
// critical file do (they need rights their parent lacks).
func TestSandboxPlanSmall(t *testing.T) {
	d, _ := filepath.EvalSymlinks(t.TempDir())
	for _, dir := range []string{"bin", "etc"} {
		if err := os.Mkdir(filepath.Join(d, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			if err := os.WriteFile(filepath.Join(d, dir, fmt.Sprint("f", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 5 {
		if err := os.Mkdir(filepath.Join(d, "bin", fmt.Sprint("dir", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := exec.SandboxConfig{
		Protected: []string{filepath.Join(d, "bin"), filepath.Join(d, "etc")},
		Critical:  []string{filepath.Join(d, "etc", "f0")},
	}
	rules, err := exec.PlanSandbox(cfg, 6)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, r := range rules {
		path, _, _ := strings.Cut(r, " ")
		if rel, err := filepath.Rel(d, path); err == nil && !strings.HasPrefix(rel, "..") {
			n[strings.SplitN(rel, "/", 2)[0]]++
		}
	}
	// bin: the root and its 5 directories; etc: its 49 files other
	// than the critical one, which stay writable (etc itself gets what
	// the directories above it get, as they lead to the critical file).
	if n["bin"] != 6 || n["etc"] != 49 {
		t.Errorf("rules under bin: %d, want 6; under etc: %d, want 49", n["bin"], n["etc"])
	}
}

// TestSandboxRebuilds checks that entries created after the sandbox was
// built get their rights at the next call (the sandbox notices the
// changed directory), and that SetConfig takes effect.
func TestSandboxRebuilds(t *testing.T) {
	if st := sandboxStatus(t); !st.Enforced {
		skipOrFail(t, "no Landlock: "+st.Reason)
	}
	root := filepath.Join(t.TempDir(), "root")
	if err := os.MkdirAll(filepath.Join(root, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := exec.NewSandbox(exec.SandboxConfig{Protected: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	l := &exec.Local{Sandbox: sb}
	// Made by the gateway between calls: the next call rebuilds first.
	if err := os.MkdirAll(filepath.Join(root, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := l.Run(context.Background(), exec.Command{Shell: "cd " + root + " && touch new/f old/f && rm new/f old/f"})
	if err != nil || res.ExitCode != 0 || !res.Sandboxed {
		t.Fatalf("work in a directory created after the build: %+v, %v (stderr %q)", res, err, res.Stderr.Data)
	}
	// Unprotect the root: it can then be removed.
	if err := sb.SetConfig(exec.SandboxConfig{}); err != nil {
		t.Fatal(err)
	}
	res, err = l.Run(context.Background(), exec.Command{Argv: []string{"rm", "-r", root}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("rm after SetConfig: %+v, %v (stderr %q)", res, err, res.Stderr.Data)
	}
}

// TestSandboxSealed checks a sealed directory on the kernel: its own files
// can be read but not written, truncated, deleted or renamed, nothing can
// be created in it, and its subdirectories stay free; all for a rule per
// subdirectory, none per file.
func TestSandboxSealed(t *testing.T) {
	if st := sandboxStatus(t); !st.Enforced {
		skipOrFail(t, "no Landlock: "+st.Reason)
	}
	d, _ := filepath.EvalSymlinks(t.TempDir())
	lib := filepath.Join(d, "lib")
	if err := os.MkdirAll(filepath.Join(lib, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := os.WriteFile(filepath.Join(lib, fmt.Sprint("f", i)), []byte("sentinel\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(lib, "sub", "g"), []byte("sentinel\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := exec.SandboxConfig{Sealed: []string{lib}}
	rules, err := exec.PlanSandbox(cfg, 6)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rules {
		if path, _, _ := strings.Cut(r, " "); strings.HasPrefix(path, lib) {
			n++
		}
	}
	// The directory gets only what the directories above it get, which
	// lead to it: its subdirectory's rule is all it costs.
	if n != 1 {
		t.Errorf("%d rules for the sealed directory, want 1 (its subdirectory)", n)
	}
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	l := &exec.Local{Sandbox: sb}
	run := func(script string) exec.Result {
		t.Helper()
		res, err := l.Run(context.Background(), exec.Command{Shell: script, Dir: d})
		if err != nil || !res.Sandboxed {
			t.Fatalf("%s: %+v, %v", script, res, err)
		}
		return res
	}
	for _, script := range []string{
		"echo x >> lib/f0", "truncate -s 0 lib/f1", "rm lib/f2", "mv lib/f3 lib/sub/", "mv lib/f4 lib/f5",
		"touch lib/new", "mkdir lib/newdir", "ln -s f0 lib/link",
	} {
		if res := run(script); res.ExitCode == 0 {
			t.Errorf("%q succeeded in a sealed directory", script)
		}
	}
	for _, f := range []string{"f0", "f1", "f2", "f3", "f4", "f5"} {
		if b, err := os.ReadFile(filepath.Join(lib, f)); err != nil || string(b) != "sentinel\n" {
			t.Errorf("lib/%s after the attempts: %q, %v", f, b, err)
		}
	}
	for _, f := range []string{"new", "newdir", "link"} {
		if _, err := os.Lstat(filepath.Join(lib, f)); err == nil {
			t.Errorf("lib/%s was created in a sealed directory", f)
		}
	}
	for _, script := range []string{
		"cat lib/f0 >/dev/null", "echo x >> lib/sub/g", "touch lib/sub/h", "mkdir lib/sub/d", "rm lib/sub/h", "rmdir lib/sub/d",
	} {
		if res := run(script); res.ExitCode != 0 {
			t.Errorf("%q failed: %s", script, res.Stderr.Data)
		}
	}
}
