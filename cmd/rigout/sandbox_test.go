package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sandboxcfg"
)

// TestE2EKernelHoldsWhatThePolicyCannotSee deletes a sentinel protected
// root through a path computed at run time, which no parser can see: the
// policy lets it through, and the kernel sandbox of `rigout stdio` must
// keep the root and its entries. Harmless if the sandbox fails: the
// worst it deletes is the sentinel.
func TestE2EKernelHoldsWhatThePolicyCannotSee(t *testing.T) {
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	st := sb.Status()
	sb.Close()
	if !st.Enforced || !st.Signals {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("the kernel sandbox is required here: %s", st)
		}
		t.Skipf("SKIP: no full Landlock sandbox on this kernel (%s); set RIGOUT_REQUIRE_SANDBOX=1 to fail instead", st)
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "protected")
	keep := filepath.Join(root, "keep")
	deep := filepath.Join(root, "sub", "work.txt")
	if err := os.MkdirAll(filepath.Dir(deep), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{keep, deep} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`{"policy": {"protected_roots_replace": ["/", %q]}}`, root)
	cfgPath := filepath.Join(dir, "rigout.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startStdio(t, "--config", cfgPath, "--no-ssh", "--require-sandbox")

	enc := base64.StdEncoding.EncodeToString([]byte(root))
	res := call(t, s.client, "execute_command", map[string]any{"command": "p=$(echo " + enc + " | base64 -d); rm -rf \"$p\"; ls \"$p\""})
	text := resultText(res)
	if strings.Contains(text, "refused by policy") {
		t.Fatalf("the policy saw through the computed path; the test no longer probes the kernel:\n%s", text)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the kernel let a protected root's entry be deleted: %v\n%s", err, text)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("the protected root is gone: %v", err)
	}
	// In the view, a protected root is read-only as a whole tree: nothing
	// two levels down goes either.
	if _, err := os.Stat(deep); err != nil {
		t.Errorf("a file two levels down was deleted: %v", err)
	}
	if !strings.Contains(text, "keep") {
		t.Errorf("ls of the root after rm -rf should still show keep:\n%s", text)
	}
}

// freeUID returns a uid no process on the machine runs as, so that a
// command run as it can reach nothing but the test's own processes.
func freeUID(t *testing.T) int {
	t.Helper()
	used := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
				for _, u := range f[1:] {
					if n, err := strconv.Atoi(u); err == nil {
						used[n] = true
					}
				}
			}
		}
	}
	for uid := 64200; uid < 65000; uid++ {
		if !used[uid] {
			return uid
		}
	}
	t.Fatal("no free uid in 64200-64999")
	return 0
}

// startStdioAs runs `rigout stdio` as an unprivileged uid through setpriv,
// with a state directory that uid owns.
func startStdioAs(t *testing.T, uid int, args ...string) *server {
	t.Helper()
	return startStdioAsEnv(t, uid, nil, args...)
}

// startStdioAsEnv is startStdioAs with extraEnv added to (or replacing)
// the gateway's environment.
func startStdioAsEnv(t *testing.T, uid int, extraEnv []string, args ...string) *server {
	t.Helper()
	setpriv, err := osexec.LookPath("setpriv")
	if err != nil {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatal("setpriv (util-linux) is required here")
		}
		t.Skip("SKIP: setpriv (util-linux) is not installed")
	}
	// The binary must be reachable by the uid: a copy in a 0755 directory.
	binDir, err := os.MkdirTemp("", "rigout-uid-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(binDir) })
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(rigoutBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "rigout")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(binDir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(state, uid, uid); err != nil {
		t.Fatal(err)
	}
	id := strconv.Itoa(uid)
	var cmd *osexec.Cmd
	tr := mcptransport.NewStdioWithOptions(setpriv, nil,
		append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups", "--", bin, "stdio"}, args...),
		mcptransport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*osexec.Cmd, error) {
			cmd = osexec.CommandContext(ctx, command, args...)
			cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "RIGOUT_STATE_DIR=" + state}, extraEnv...)
			cmd.Dir = binDir
			return cmd, nil
		}))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	t.Cleanup(func() { c.Close() })
	initialize(t, c, mcp.LATEST_PROTOCOL_VERSION)
	return &server{client: c, pid: cmd.Process.Pid}
}

// TestE2EContainmentAsAnUnprivilegedUser runs `rigout stdio` as a uid of
// its own against a sentinel protected root and a sentinel critical file
// that uid owns, and sends what the policy lets through but the kernel must
// hold: deletions through paths computed at run time, in a shell and in
// interpreters, writes to the critical file, and `kill -9 -1` spelled so the
// parser cannot see it. Harmless if the sandbox fails: the uid owns only the
// sentinels and the test's own processes.
func TestE2EContainmentAsAnUnprivilegedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to switch to an unprivileged uid")
	}
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	st := sb.Status()
	sb.Close()
	if !st.Enforced || !st.Signals {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("the kernel sandbox is required here: %s", st)
		}
		t.Skipf("SKIP: no full Landlock sandbox on this kernel (%s)", st)
	}
	uid := freeUID(t)
	base, err := os.MkdirTemp("", "rigout-uid-sentinels-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	root := filepath.Join(base, "protected")
	crit := filepath.Join(base, "critical.conf")
	for _, d := range []string{root, filepath.Join(root, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{filepath.Join(root, "keep"): "keep", crit: "original"}
	for f, content := range files {
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{base, root, filepath.Join(root, "sub"), filepath.Join(root, "keep"), crit} {
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"policy": {"protected_roots_replace": ["/", %q], "critical_files": [%q]}, "work_areas": [%q]}`, root, crit, base)
	cfgPath := filepath.Join(base, "rigout.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStdioAs(t, uid, "--config", cfgPath, "--no-ssh", "--require-sandbox")

	r := base64.StdEncoding.EncodeToString([]byte(root))
	c := base64.StdEncoding.EncodeToString([]byte(crit))
	dec := func(v, b64 string) string { return v + "=$(echo " + b64 + " | base64 -d); " }
	for _, cmd := range []string{
		dec("p", r) + `rm -rf "$p"`,
		dec("p", r) + `find "$p" -delete`,
		dec("p", r) + `mv "$p" "$p.moved"`,
		dec("p", r) + `python3 -c 'import shutil,sys; shutil.rmtree(sys.argv[1])' "$p"`,
		dec("p", r) + `perl -MFile::Path=rmtree -e 'rmtree($ARGV[0])' "$p"`,
		dec("f", c) + `echo changed > "$f"`,
		dec("f", c) + `truncate -s0 "$f"; cp /dev/null "$f"; rm -f "$f"`,
		dec("f", c) + `python3 -c 'import sys; open(sys.argv[1], "w").write("changed")' "$f"`,
		`n=$(echo LTE= | base64 -d); kill -9 $n`, // kill -9 -1
	} {
		res := call(t, s.client, "execute_command", map[string]any{"command": cmd})
		if strings.Contains(resultText(res), "refused by policy") {
			t.Errorf("the policy saw through %q; the test no longer probes the kernel", cmd)
		}
	}
	// The gateway survived `kill -9 -1` and still serves.
	if res := call(t, s.client, "execute_command", map[string]any{"argv": []any{"echo", "alive"}}); !strings.Contains(resultText(res), "alive") {
		t.Fatalf("the gateway stopped serving: %s", resultText(res))
	}
	for f, content := range files {
		if b, err := os.ReadFile(f); err != nil || string(b) != content {
			t.Errorf("%s: %q, %v; want %q intact", f, b, err, content)
		}
	}
	// In the uid's view the protected root is read-only as a whole tree;
	// work in the work area around it stays possible.
	res := call(t, s.client, "execute_command", map[string]any{"command": "echo x > " + root + "/sub/new && echo WROTE"})
	if strings.Contains(resultText(res), "stdout:\nWROTE") {
		t.Errorf("a file was created two levels down a protected root: %s", resultText(res))
	}
	res = call(t, s.client, "execute_command", map[string]any{"command": "echo x > " + base + "/new && rm " + base + "/new && echo ok"})
	if !strings.Contains(resultText(res), "stdout:\nok") {
		t.Errorf("work in the work area: %s", resultText(res))
	}
}

// BenchmarkSandboxedLocal runs `true` through exec.Local with the kernel
// sandbox the binary builds from the default policy (about 1,800 Landlock
// rules on a Debian-like system) and without it, alternately, and reports
// the median of each and their ratio. The exec package's own benchmark
// uses a small ruleset; this one shows what the default policy costs:
//
//	go test -run '^$' -bench SandboxedLocal -benchtime 400x ./cmd/rigout
func BenchmarkSandboxedLocal(b *testing.B) {
	cfg, _ := sandboxcfg.Derive(nil, "/var/lib/rigout-bench-nonexistent")
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sb.Close() })
	if st := sb.Status(); !st.Enforced {
		b.Skip("no Landlock: " + st.Reason)
	}
	on, off := &exec.Local{Sandbox: sb}, &exec.Local{UnsafeNoSandbox: true}
	run := func(l *exec.Local) time.Duration {
		t0 := time.Now()
		res, err := l.Run(context.Background(), exec.Command{Argv: []string{"true"}, Timeout: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if res.Sandboxed != (l == on) {
			b.Fatalf("Sandboxed %v with sandbox %v", res.Sandboxed, l == on)
		}
		return time.Since(t0)
	}
	var dOn, dOff []time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			dOn, dOff = append(dOn, run(on)), append(dOff, run(off))
		} else {
			dOff, dOn = append(dOff, run(off)), append(dOn, run(on))
		}
		i++
	}
	med := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	mOn, mOff := med(dOn), med(dOff)
	b.ReportMetric(float64(mOn.Microseconds()), "µs-on")
	b.ReportMetric(float64(mOff.Microseconds()), "µs-off")
	b.ReportMetric(float64(mOn)/float64(mOff), "ratio")
}

// TestSandboxConfigSeals checks that critical programs and libraries seal
// their directories (one rule, not one per sibling file), that other
// critical files stay critical, and that a root gateway gets /proc
// read-only.
func TestSandboxConfigSeals(t *testing.T) {
	for dir, want := range map[string]bool{
		"/usr/bin": true, "/bin": true, "/usr/sbin": true, "/usr/lib": true, "/lib64": true, "/usr/libexec": true,
		"/usr/lib/x86_64-linux-gnu": true, "/lib/aarch64-linux-gnu": true,
		"/etc": false, "/usr/local/bin": false, "/usr/share": false, "/usr/lib/x86_64-linux-gnu/perl": false,
		"/usr/lib/python3": false, "/opt/bin": false, "/usr": false, "/": false,
	} {
		if got := sandboxcfg.ProgramDir(dir); got != want {
			t.Errorf("programDir(%s) = %v, want %v", dir, got, want)
		}
	}
	cfg, _ := sandboxcfg.Derive(nil, "/var/lib/rigout-test-nonexistent")
	if !slices.Contains(cfg.Critical, "/etc/passwd") {
		t.Errorf("/etc/passwd is not critical: %v", cfg.Critical)
	}
	for _, f := range cfg.Critical {
		if real, err := filepath.EvalSymlinks(f); err == nil && sandboxcfg.ProgramDir(filepath.Dir(real)) {
			t.Errorf("critical %s (%s) is in a program directory, which should be sealed instead", f, real)
		}
	}
	if real, err := filepath.EvalSymlinks("/bin/sh"); err == nil && sandboxcfg.ProgramDir(filepath.Dir(real)) {
		if !slices.Contains(cfg.Sealed, filepath.Dir(real)) {
			t.Errorf("/bin/sh is %s, but %s is not sealed: %v", real, filepath.Dir(real), cfg.Sealed)
		}
	}
	if os.Geteuid() == 0 && (!slices.Contains(cfg.ReadOnly, "/proc") || slices.Contains(cfg.ReadOnly, "/proc/sys")) {
		t.Errorf("a root gateway's read-only paths: %v, want /proc (all of it)", cfg.ReadOnly)
	}
}

// TestE2ENonRootGatewayDefaultPolicy runs `rigout stdio` as an
// unprivileged uid with the default policy, whose protected roots include
// directories that uid cannot read (/root): commands must run, inside the
// uid's view of the machine, and the gateway's state must stay out of
// their sight.
func TestE2ENonRootGatewayDefaultPolicy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to switch to an unprivileged uid")
	}
	uid := freeUID(t)
	s := startStdioAs(t, uid, "--no-ssh")
	res := call(t, s.client, "execute_command", map[string]any{"command": "echo ran-$(id -u); ls / >/dev/null && echo listed; ls /root 2>&1 | head -1"})
	text := resultText(res)
	if res.IsError || !strings.Contains(text, "ran-") || !strings.Contains(text, "listed") {
		t.Fatalf("a non-root gateway with the default policy did not run the command:\n%s", text)
	}
	// In a view, a command sees its own processes only.
	res = call(t, s.client, "execute_command", map[string]any{"command": "ls /proc | grep -c '^[0-9]'"})
	sc, _ := res.StructuredContent.(map[string]any)
	n, _ := strconv.Atoi(strings.TrimSpace(fmt.Sprint(sc["stdout"])))
	if n == 0 || n > 5 {
		if os.Getenv("RIGOUT_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("no per-principal view for a non-root gateway's command (it sees %d processes):\n%s", n, resultText(res))
		}
		t.Skipf("SKIP: no per-principal views here (%d processes visible)", n)
	}
}

// TestE2EViewEveryRoute sends the same depth-three delete under a
// protected root through every route a local command or file operation
// takes — a command, a shell fed on its standard input, a handed-off
// process, a terminal session, the file tools — with `rigout stdio`
// running as a uid of its own, and the path spelled so that the policy
// cannot see it: only the view (read-only as a whole tree) stands in the
// way. Harmless if it fails: the uid owns only the sentinels.
func TestE2EViewEveryRoute(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to switch to an unprivileged uid")
	}
	uid := freeUID(t)
	base, err := os.MkdirTemp("", "rigout-view-routes-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	root := filepath.Join(base, "protected")
	deep := filepath.Join(root, "sub", "deep")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	sentinel := filepath.Join(deep, "f.txt")
	if err := os.WriteFile(sentinel, []byte("deep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{base, root, filepath.Join(root, "sub"), deep, sentinel} {
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"policy": {"protected_roots_replace": ["/", %q]}, "work_areas": [%q]}`, root, base)
	cfgPath := filepath.Join(base, "rigout.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStdioAs(t, uid, "--config", cfgPath, "--no-ssh", "--require-sandbox")
	if res := call(t, s.client, "execute_command", map[string]any{"argv": []any{"true"}}); res.IsError {
		t.Fatalf("a plain command: %s", resultText(res))
	}
	hidden := `"$(echo ` + base64.StdEncoding.EncodeToString([]byte(deep)) + ` | base64 -d)"`
	del := "rm -rf " + hidden + "; rm -f " + hidden + "/f.txt; ls " + hidden
	intact := func(route string, res *mcp.CallToolResult) {
		t.Helper()
		if strings.Contains(resultText(res), "refused by policy") {
			t.Errorf("%s: the policy saw through the delete; the test no longer probes the view: %s", route, resultText(res))
		}
		if b, err := os.ReadFile(sentinel); err != nil || string(b) != "deep" {
			t.Errorf("%s changed the sentinel three levels under a protected root (%q, %v): %s", route, b, err, resultText(res))
			// Put it back, so that each route is judged on its own.
			_ = os.MkdirAll(deep, 0o755)
			_ = os.WriteFile(sentinel, []byte("deep"), 0o644)
			for _, p := range []string{filepath.Join(root, "sub"), deep, sentinel} {
				_ = os.Chown(p, uid, uid)
			}
		}
	}
	intact("execute_command", call(t, s.client, "execute_command", map[string]any{"command": del}))
	intact("a shell fed on stdin", call(t, s.client, "execute_command", map[string]any{"command": "bash -s", "stdin": del + "\n"}))

	res := call(t, s.client, "execute_command", map[string]any{"command": "sleep 0.5; " + del + "; echo HANDED-OFF-DONE", "wait_seconds": 0})
	sc, _ := res.StructuredContent.(map[string]any)
	id, _ := sc["id"].(string)
	if id == "" {
		if n, _ := sc["next"].(map[string]any); n != nil {
			a, _ := n["arguments"].(map[string]any)
			id, _ = a["id"].(string)
		}
	}
	if id == "" {
		t.Fatalf("the command was not handed off: %s", resultText(res))
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res = call(t, s.client, "process", map[string]any{"action": "read", "id": id})
		if strings.Contains(resultText(res), "HANDED-OFF-DONE") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the handed-off process did not finish: %s", resultText(res))
		}
	}
	intact("a handed-off process", res)

	res = call(t, s.client, "create_terminal_session", map[string]any{})
	if res.IsError {
		t.Fatalf("create_terminal_session: %s", resultText(res))
	}
	sid := res.StructuredContent.(map[string]any)["session_id"].(string)
	intact("a terminal session", call(t, s.client, "execute_in_terminal", map[string]any{"session_id": sid, "command": del}))
	call(t, s.client, "close_terminal_session", map[string]any{"session_id": sid})

	intact("file_operations delete", call(t, s.client, "file_operations", map[string]any{"action": "delete", "path": sentinel}))
	intact("file_operations write", call(t, s.client, "file_operations", map[string]any{"action": "write", "path": sentinel, "content": "changed"}))

	// Work in the work area still goes through every route.
	w := filepath.Join(base, "made.txt")
	if res := call(t, s.client, "file_operations", map[string]any{"action": "write", "path": w, "content": "x"}); res.IsError {
		t.Errorf("file_operations write in the work area: %s", resultText(res))
	}
	if res := call(t, s.client, "execute_command", map[string]any{"command": "rm " + w + " && echo REMOVED"}); !strings.Contains(resultText(res), "REMOVED") {
		t.Errorf("rm in the work area: %s", resultText(res))
	}
}

// TestE2EViewHidesSecretFiles: with rigout stdio as an unprivileged uid
// whose home is a work area, a command cannot read the SSH identity file,
// ~/.pgpass, nor an alias's credential file, though the uid owns them and
// the directories around them stay usable; each path spelled plainly, so
// only the view stands in the way (the redactor would hide a known value,
// so the command only says whether it could read the sentinel).
func TestE2EViewHidesSecretFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to switch to an unprivileged uid")
	}
	uid := freeUID(t)
	base, err := os.MkdirTemp("", "rigout-view-secrets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	home := filepath.Join(base, "home")
	files := map[string]string{
		filepath.Join(home, ".ssh", "id_ed25519"): "SENTINEL-KEY",
		filepath.Join(home, ".pgpass"):            "SENTINEL-PG",
		filepath.Join(base, "creds", "deploy"):    "SENTINEL-CRED",
		filepath.Join(home, "notes.txt"):          "SENTINEL-OPEN",
	}
	for f, v := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.Walk(base, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Chown(p, uid, uid)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"work_areas": [%q], "credentials": {"deploy": {"file": %q}}}`, base, filepath.Join(base, "creds", "deploy"))
	cfgPath := filepath.Join(base, "rigout.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStdioAsEnv(t, uid, []string{"HOME=" + home}, "--config", cfgPath, "--no-ssh", "--require-sandbox")
	probe := ""
	for f := range files {
		probe += fmt.Sprintf("grep -q SENTINEL %q 2>/dev/null && echo READ:%s; ", f, filepath.Base(f))
	}
	res := call(t, s.client, "execute_command", map[string]any{"command": probe + "echo done"})
	text := resultText(res)
	_, out, ok := strings.Cut(text, "stdout:\n") // not the command line, which names every file
	if !ok || !strings.Contains(out, "done") {
		t.Fatalf("the probe did not run: %s", text)
	}
	if !strings.Contains(out, "READ:notes.txt") {
		t.Errorf("an ordinary file of the home was not readable: the probe proves nothing: %s", out)
	}
	for _, name := range []string{"id_ed25519", ".pgpass", "deploy"} {
		if strings.Contains(out, "READ:"+name) {
			t.Errorf("the command read %s through the view: %s", name, out)
		}
	}
}
