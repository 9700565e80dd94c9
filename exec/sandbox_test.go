//go:build linux

package exec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/proctest"
	"golang.org/x/sys/unix"
)

// The containment suite runs each command as a dedicated unprivileged uid
// that owns nothing on the machine but the test's own processes and
// sentinel files, under a "gateway" that is the test binary re-executed as
// that uid (sandboxHelper). Nothing here ever runs a destructive command
// as root, and every destructive command aims at sentinels in a temporary
// directory.

// helperEnv marks a test binary started as the sandbox helper.
const helperEnv = "RIGOUT_SANDBOX_HELPER"

// requireEnv turns the suite's skips into failures (CI sets it).
const requireEnv = "RIGOUT_REQUIRE_SANDBOX"

func TestMain(m *testing.M) {
	exec.ServeSandboxSpawner()
	if os.Getenv(helperEnv) != "" {
		if keep := os.Getenv(readOnlyEnv); keep != "" {
			if err := readOnlyMachine(keep); err != nil {
				fmt.Fprintln(os.Stderr, "read-only machine:", err)
				os.Exit(3)
			}
		}
		os.Exit(sandboxHelper())
	}
	os.Exit(m.Run())
}

// sandboxStatus reports what a sandbox enforces on this kernel.
func sandboxStatus(t *testing.T) exec.SandboxStatus {
	t.Helper()
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	return sb.Status()
}

// skipOrFail skips the test with why, or fails it when RIGOUT_REQUIRE_SANDBOX=1.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s=1 and: %s", requireEnv, why)
	}
	t.Skip("SKIPPED, sandbox not verified: " + why)
}

// helperRequest is what the test sends the helper on stdin.
type helperRequest struct {
	Sandbox *exec.SandboxConfig // nil runs unsandboxed
	Shell   string
	Dir     string
	// Stdin is the command's standard input.
	Stdin string
	// Principal is who the command runs for, in a sandbox with views.
	Principal exec.Principal
	// Marker, if set, makes the helper count the processes still running
	// after the call whose command line holds it.
	Marker string
	// Files are file operations the helper performs in the view instead
	// of running Shell: "remove PATH", "write PATH", "read PATH",
	// "rename OLD NEW", "chmod PATH", "mkdir PATH", "list PATH".
	Files []string
	// Term, if set, starts Shell, sends it SIGTERM after 300ms and reports
	// how it ended.
	Term bool
	// PTY, if set, runs Shell in a bash session on a terminal and reports
	// what the terminal showed.
	PTY bool
}

// helperReply is what the helper prints.
type helperReply struct {
	Err         string
	ExitCode    int
	Stdout      string
	Stderr      string
	Sandboxed   bool
	Unsandboxed string
	Status      string
	HelperPID   int
	Survivors   int
	Signal      string
	WaitedMS    int64
	// FileResults holds, for each of Files, "ok", "ok <data>" or the error.
	FileResults []string
}

// sandboxHelper is the gateway side, running as the unprivileged uid: it
// runs one command through Local and reports. That it reports at all shows
// it survived the command.
func sandboxHelper() int {
	var req helperRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	rep := helperReply{HelperPID: os.Getpid()}
	l := &exec.Local{}
	if req.Sandbox != nil {
		if v := req.Sandbox.Views; v != nil {
			p := req.Principal
			v.Principal = func(context.Context) exec.Principal { return p }
		}
		sb, err := exec.NewSandbox(*req.Sandbox)
		if err != nil {
			rep.Err = err.Error()
			_ = json.NewEncoder(os.Stdout).Encode(rep)
			return 0
		}
		defer sb.Close()
		rep.Status = sb.Status().String()
		l.Sandbox = sb
	}
	if len(req.Files) > 0 {
		vf, err := l.Sandbox.Files(context.Background())
		if err != nil {
			rep.Err = err.Error()
			_ = json.NewEncoder(os.Stdout).Encode(rep)
			return 0
		}
		for _, op := range req.Files {
			rep.FileResults = append(rep.FileResults, fileOp(vf, op))
		}
		rep.Sandboxed = true
		_ = json.NewEncoder(os.Stdout).Encode(rep)
		return 0
	}
	if req.PTY {
		p, err := l.StartPTY(context.Background(), exec.Command{Argv: []string{"bash", "--norc", "-i"}, Dir: req.Dir, Timeout: 30 * time.Second}, exec.PTYSize{})
		if err != nil {
			rep.Err = err.Error()
			_ = json.NewEncoder(os.Stdout).Encode(rep)
			return 0
		}
		_, _ = p.Write([]byte(req.Shell + "\nexit\n"))
		out, _ := io.ReadAll(p)
		res, _ := p.Wait()
		_ = p.Close()
		rep.Stdout, rep.ExitCode, rep.Sandboxed = string(out), res.ExitCode, res.Sandboxed
		_ = json.NewEncoder(os.Stdout).Encode(rep)
		return 0
	}
	if req.Term {
		p, err := l.Start(context.Background(), exec.Command{Shell: req.Shell, Dir: req.Dir, Timeout: 60 * time.Second})
		if err != nil {
			rep.Err = err.Error()
		} else {
			time.Sleep(300 * time.Millisecond)
			t0 := time.Now()
			_ = p.Signal(syscall.SIGTERM)
			res, _ := p.Wait()
			rep.WaitedMS = time.Since(t0).Milliseconds()
			rep.Signal, rep.ExitCode, rep.Sandboxed = res.Signal, res.ExitCode, res.Sandboxed
		}
		_ = json.NewEncoder(os.Stdout).Encode(rep)
		return 0
	}
	var stdin io.Reader
	if req.Stdin != "" {
		stdin = strings.NewReader(req.Stdin)
	}
	res, err := l.Run(context.Background(), exec.Command{Shell: req.Shell, Dir: req.Dir, Stdin: stdin, Timeout: 20 * time.Second})
	if req.Marker != "" {
		rep.Survivors = countMarked(req.Marker)
	}
	if err != nil {
		rep.Err = err.Error()
	}
	rep.ExitCode, rep.Stdout, rep.Stderr = res.ExitCode, string(res.Stdout.Data), string(res.Stderr.Data)
	rep.Sandboxed, rep.Unsandboxed = res.Sandboxed, res.Unsandboxed
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 2
	}
	return 0
}

// containment is the suite's setting: the uid, the helper binary and a
// base directory both can reach.
type containment struct {
	// root runs the gateway side as root, in a mount namespace of its
	// own where the machine is read-only but base (readOnlyMachine).
	root   bool
	uid    int
	bin    string
	base   string
	secret string
}

// newContainment checks the prerequisites, picks a free uid and copies the
// test binary where that uid can run it.
func newContainment(t *testing.T) *containment {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "not root: cannot switch to an unprivileged uid to run the containment suite")
	}
	if st := sandboxStatus(t); !st.Enforced {
		skipOrFail(t, "no Landlock: "+st.Reason)
	}
	uid := proctest.FreeUID(64000+rand.IntN(900), 65000)
	if uid < 0 {
		skipOrFail(t, "no free uid in 64000..64999")
	}
	base, err := os.MkdirTemp("", "rigout-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "gateway.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return &containment{uid: uid, bin: bin, base: base, secret: fmt.Sprintf("secret-%d", rand.Int64())}
}

// newRootContainment is newContainment for a gateway running as root.
func newRootContainment(t *testing.T) *containment {
	t.Helper()
	c := newContainment(t)
	c.root, c.uid = true, 0
	return c
}

// readOnlyEnv tells the helper to make the machine read-only in its own
// mount namespace, all but the directory it names.
const readOnlyEnv = "RIGOUT_TEST_READ_ONLY_MACHINE"

// parentNSEnv names the mount namespace of the test that started the
// helper, which the helper's must not be.
const parentNSEnv = "RIGOUT_TEST_PARENT_MNTNS"

// readOnlyMachine makes every mount of this process's mount namespace,
// which must be its own, read-only, except keep (the test's directory)
// and /dev, /proc and /sys/fs/cgroup, which a gateway writes to set up
// views and cgroups. It checks the result: a root containment case must
// never run against a writable machine.
func readOnlyMachine(keep string) error {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return err
	}
	if parent := os.Getenv(parentNSEnv); parent == "" || self == parent {
		return fmt.Errorf("not in a mount namespace of its own (%s, the test's %q): refusing to touch the machine's mounts", self, parent)
	}
	if err := unix.Mount(keep, keep, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", keep, err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make / read-only: %w", err)
	}
	for _, p := range []string{keep, "/dev", "/proc", "/sys/fs/cgroup"} {
		err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
		if err != nil && p == keep {
			return fmt.Errorf("make %s writable: %w", keep, err)
		}
	}
	for p, ro := range map[string]bool{"/": true, "/etc": true, "/usr": true, "/tmp": true, keep: false} {
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return fmt.Errorf("statfs %s: %w", p, err)
		}
		if got := st.Flags&unix.ST_RDONLY != 0; got != ro {
			return fmt.Errorf("%s read-only = %v after the set-up, want %v", p, got, ro)
		}
	}
	return nil
}

// sentinels is one case's tree, owned by the uid, so that only the
// sandbox stands between the command and the files.
type sentinels struct {
	dir, root, crit, hidden, work string
}

const (
	keepData  = "keep me"
	critData  = "critical content"
	tokenData = "TOKEN-d41d8cd98f00"
)

func (c *containment) sentinels(t *testing.T, name string) sentinels {
	t.Helper()
	dir := filepath.Join(c.base, name)
	s := sentinels{
		dir:    dir,
		root:   filepath.Join(dir, "root"),
		crit:   filepath.Join(dir, "crit.conf"),
		hidden: filepath.Join(dir, "state"),
		work:   filepath.Join(dir, "work"),
	}
	files := map[string]string{
		filepath.Join(s.root, "keep.txt"):             keepData,
		filepath.Join(s.root, "sub", "deep", "f.txt"): "deep",
		s.crit:                              critData,
		filepath.Join(s.hidden, "token"):    tokenData,
		filepath.Join(s.work, "scratch"):    "scratch",
		filepath.Join(s.work, "newcontent"): "replaced",
	}
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(s.hidden, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, c.uid, c.uid)
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// fileOp performs one of helperRequest.Files.
func fileOp(vf *exec.ViewFiles, op string) string {
	f := strings.Fields(op)
	result := func(err error) string {
		if err != nil {
			return err.Error()
		}
		return "ok"
	}
	switch f[0] {
	case "remove":
		return result(vf.Remove("", f[1]))
	case "rename":
		return result(vf.Rename("", f[1], f[2]))
	case "chmod":
		return result(vf.Chmod("", f[1], 0o777))
	case "mkdir":
		return result(vf.Mkdir("", f[1], 0o755))
	case "write":
		w, err := vf.OpenFile("", f[1], os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
		if err != nil {
			return err.Error()
		}
		_, err = w.WriteString("overwritten")
		w.Close()
		return result(err)
	case "read":
		r, err := vf.OpenFile("", f[1], os.O_RDONLY, 0)
		if err != nil {
			return err.Error()
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			return err.Error()
		}
		return "ok " + string(b)
	case "list":
		fis, err := vf.ReadDir("", f[1])
		if err != nil {
			return err.Error()
		}
		var names []string
		for _, fi := range fis {
			names = append(names, fi.Name())
		}
		return "ok " + strings.Join(names, " ")
	}
	return "unknown op " + f[0]
}

// countMarked counts the processes whose command line holds marker.
func countMarked(marker string) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(marker)) {
			n++
		}
	}
	return n
}

func (s sentinels) config() *exec.SandboxConfig {
	return &exec.SandboxConfig{Protected: []string{s.root}, Critical: []string{s.crit}, Hidden: []string{s.hidden}}
}

// expand replaces ROOT, CRIT, HIDDEN and WORK in a command template.
func (s sentinels) expand(cmd string) string {
	return strings.NewReplacer("ROOT", s.root, "CRIT", s.crit, "HIDDEN", s.hidden, "WORK", s.work).Replace(cmd)
}

// run starts the helper as the uid and returns its reply.
func (c *containment) run(t *testing.T, req helperRequest) helperReply {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, c.bin, "-test.run=^$")
	cmd.Dir = c.base
	cmd.Env = []string{helperEnv + "=1", "RIGOUT_TEST_SECRET=" + c.secret, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + c.base, "LANG=C"}
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.uid), Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	if c.root {
		// A mount namespace of its own (Go makes its mounts private), in
		// which the helper makes the machine read-only first.
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
		parent, err := os.Readlink("/proc/self/ns/mnt")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, readOnlyEnv+"="+c.base, parentNSEnv+"="+parent)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v (stderr %q, stdout %q): the gateway side did not survive", err, stderr.String(), out)
	}
	var rep helperReply
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("helper reply %q: %v", out, err)
	}
	if rep.Err != "" {
		t.Fatalf("helper: %s", rep.Err)
	}
	return rep
}

// intact checks that the protected root, its direct entries, the
// critical file and the hidden token are as they were.
func (s sentinels) intact(t *testing.T) {
	t.Helper()
	for path, want := range map[string]string{
		filepath.Join(s.root, "keep.txt"): keepData,
		s.crit:                            critData,
		filepath.Join(s.hidden, "token"):  tokenData,
	} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("sentinel %s = %q, %v; want %q", path, b, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(s.root, "sub")); err != nil || !fi.IsDir() {
		t.Errorf("protected root's entry sub: %v", err)
	}
}

func TestSandboxContainment(t *testing.T) {
	c := newContainment(t)
	python, _ := osexec.LookPath("/usr/bin/python3")
	perl, _ := osexec.LookPath("perl")
	tests := []struct {
		name  string
		shell string
		// check runs after the command, besides the sentinel check.
		check func(t *testing.T, s sentinels, rep helperReply)
	}{
		{name: "rm -rf root", shell: "rm -rf ROOT"},
		{name: "rm -rf root contents", shell: "rm -rf ROOT/*"},
		{name: "python rmtree", shell: `python3 -c 'import shutil; shutil.rmtree("ROOT")'`},
		{name: "perl rmtree", shell: `perl -e 'use File::Path; rmtree("ROOT")'`},
		{name: "find -delete", shell: "find ROOT -delete"},
		{name: "mv root", shell: "mv ROOT WORK/x"},
		{name: "mv entry", shell: "mv ROOT/keep.txt WORK/x"},
		{name: "rm entry", shell: "rm -f ROOT/keep.txt"},
		{name: "echo over critical", shell: "sh -c 'echo x > CRIT'"},
		{name: "cp /dev/null critical", shell: "cp /dev/null CRIT"},
		{name: "truncate critical", shell: "truncate -s0 CRIT"},
		{name: "python open critical", shell: `python3 -c 'open("CRIT", "w")'`},
		{name: "rm critical", shell: "rm -f CRIT"},
		{name: "rename over critical", shell: "mv -f WORK/newcontent CRIT"},
		{name: "hard link critical", shell: "ln CRIT WORK/link && echo x > WORK/link"},
		{name: "cat hidden token", shell: "cat HIDDEN/token", check: func(t *testing.T, _ sentinels, rep helperReply) {
			if strings.Contains(rep.Stdout, tokenData) || rep.ExitCode == 0 {
				t.Errorf("token read: exit %d, stdout %q", rep.ExitCode, rep.Stdout)
			}
		}},
		// Names may be listed (so that ls / and find / work); contents not.
		{name: "copy out of hidden", shell: "ls HIDDEN && cp HIDDEN/token WORK/stolen; cat WORK/stolen", check: func(t *testing.T, _ sentinels, rep helperReply) {
			if strings.Contains(rep.Stdout, tokenData) {
				t.Errorf("hidden copied: exit %d, stdout %q", rep.ExitCode, rep.Stdout)
			}
		}},
		{name: "write into hidden", shell: "echo x > HIDDEN/token; echo y > HIDDEN/new", check: func(t *testing.T, s sentinels, _ helperReply) {
			if _, err := os.Lstat(filepath.Join(s.hidden, "new")); err == nil {
				t.Error("a file was created in the hidden directory")
			}
		}},
		{name: "gateway environ", shell: "cat /proc/$PPID/environ; tr '\\0' '\\n' < /proc/$PPID/environ", check: func(t *testing.T, _ sentinels, rep helperReply) {
			if strings.Contains(rep.Stdout, "secret-") {
				t.Errorf("gateway environment read: %q", rep.Stdout)
			}
		}},
		{name: "gateway mem, fd and root", shell: "head -c1 /proc/$PPID/mem; ls /proc/$PPID/fd; cat /proc/$PPID/root/HIDDEN/token", check: func(t *testing.T, _ sentinels, rep helperReply) {
			if strings.Contains(rep.Stdout, tokenData) || strings.Contains(rep.Stdout, "0\n1\n2") {
				t.Errorf("gateway's /proc entries read: %q", rep.Stdout)
			}
		}},
		{name: "work beneath a root", shell: "mkdir -p ROOT/sub/a && echo v1 > ROOT/sub/a/f && echo v2 >> ROOT/sub/a/f && cat ROOT/sub/a/f && rm ROOT/sub/a/f && rmdir ROOT/sub/a && rm ROOT/sub/deep/f.txt && echo edited >> ROOT/keep.txt && cat CRIT",
			check: func(t *testing.T, s sentinels, rep helperReply) {
				if rep.ExitCode != 0 || rep.Stdout != "v1\nv2\n"+critData {
					t.Errorf("ordinary work failed: exit %d, stdout %q, stderr %q", rep.ExitCode, rep.Stdout, rep.Stderr)
				}
				if _, err := os.Stat(filepath.Join(s.root, "sub", "deep", "f.txt")); err == nil {
					t.Error("a file two levels down could not be deleted")
				}
				if b, _ := os.ReadFile(filepath.Join(s.root, "keep.txt")); string(b) != keepData+"edited\n" {
					t.Errorf("a file in the root could not be edited: %q", b)
				}
			}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.shell, "python3") && python == "" || strings.Contains(tt.shell, "perl") && perl == "" {
				skipOrFail(t, "the command's interpreter is not installed")
			}
			s := c.sentinels(t, fmt.Sprintf("case%d", i))
			rep := c.run(t, helperRequest{Sandbox: s.config(), Shell: s.expand(tt.shell), Dir: s.work})
			if !rep.Sandboxed {
				t.Fatalf("not sandboxed: %s", rep.Unsandboxed)
			}
			t.Logf("exit %d, stderr %q", rep.ExitCode, rep.Stderr)
			if tt.name != "work beneath a root" {
				s.intact(t)
			}
			if tt.check != nil {
				tt.check(t, s, rep)
			}
		})
	}
}

// TestSandboxContainmentControl runs some of the same commands without the
// sandbox, to show that the suite's commands do what it guards against:
// only the sandbox stops them.
func TestSandboxContainmentControl(t *testing.T) {
	c := newContainment(t)
	s := c.sentinels(t, "control")
	rep := c.run(t, helperRequest{Shell: s.expand("cat HIDDEN/token; tr '\\0' '\\n' < /proc/$PPID/environ; echo x > CRIT; rm -rf ROOT"), Dir: s.work})
	if rep.Sandboxed || rep.Unsandboxed != "no sandbox configured" {
		t.Errorf("unsandboxed run: Sandboxed %v, Unsandboxed %q", rep.Sandboxed, rep.Unsandboxed)
	}
	if !strings.Contains(rep.Stdout, tokenData) || !strings.Contains(rep.Stdout, c.secret) {
		t.Errorf("without the sandbox the token and the gateway's environment should be readable: %q", rep.Stdout)
	}
	if _, err := os.Stat(s.root); err == nil {
		t.Error("without the sandbox rm -rf should remove the root: the suite proves nothing")
	}
	if b, _ := os.ReadFile(s.crit); string(b) == critData {
		t.Error("without the sandbox the critical file should be writable: the suite proves nothing")
	}
}

// TestSandboxKillAll runs `kill -9 -1` as the uid: without signal scoping
// it would kill every process of that uid, the gateway and a sentinel
// process included. Both must survive.
func TestSandboxKillAll(t *testing.T) {
	c := newContainment(t)
	if st := sandboxStatus(t); !st.Signals {
		skipOrFail(t, fmt.Sprintf("Landlock ABI %d has no signal scoping (needs 6)", st.ABI))
	}
	marker := fmt.Sprintf("1000.%d", rand.IntN(1e6))
	sentinel := osexec.Command("sleep", marker)
	sentinel.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.uid), Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	if err := sentinel.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- sentinel.Wait() }()
	t.Cleanup(func() {
		_ = sentinel.Process.Kill()
		<-exited
	})
	s := c.sentinels(t, "kill")
	// The helper replying proves the gateway side survived.
	rep := c.run(t, helperRequest{Sandbox: s.config(), Shell: "kill -9 -1; echo rc=$?", Dir: s.work})
	if !rep.Sandboxed {
		t.Fatalf("not sandboxed: %s", rep.Unsandboxed)
	}
	t.Logf("exit %d, stdout %q, stderr %q", rep.ExitCode, rep.Stdout, rep.Stderr)
	select {
	case err := <-exited:
		t.Fatalf("the sentinel process of the same uid was killed: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := sentinel.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("sentinel: %v", err)
	}
}
