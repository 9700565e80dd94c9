package exec_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/proctest"
)

// viewConfig is the sandbox of a view case: the case's directory is the
// work area, in which the root is read-only as a whole tree and the
// critical file read-only, the hidden state directory as in the Landlock
// suite, the principal's private /tmp kept in the state directory, and
// sock's sockets hidden.
func (s sentinels) viewConfig() *exec.SandboxConfig {
	cfg := s.config()
	cfg.Views = &exec.ViewConfig{
		Writable:    []string{s.dir},
		ReadOnly:    []string{s.root, s.crit},
		Hidden:      []string{s.hidden},
		HideSockets: []string{filepath.Join(s.dir, "sock")},
		TmpDir:      filepath.Join(s.hidden, "tmp"),
	}
	return cfg
}

// viewRun runs shell in s's view as principal p and checks that the view
// was used.
func (c *containment) viewRun(t *testing.T, s sentinels, p exec.Principal, shell, stdin string) helperReply {
	t.Helper()
	rep := c.run(t, helperRequest{Sandbox: s.viewConfig(), Shell: s.expand(shell), Stdin: s.expand(stdin), Dir: s.work, Principal: p, Marker: "7356812"})
	if !strings.Contains(rep.Status, "per-principal views") {
		skipOrFail(t, "no per-principal views: "+rep.Status)
	}
	if !rep.Sandboxed {
		t.Fatalf("not sandboxed: %s", rep.Unsandboxed)
	}
	return rep
}

// TestViewContainment runs, as an unprivileged uid, commands that try to
// get out of a principal's view: each must leave the sentinels as they
// were, and its check must hold.
func TestViewContainment(t *testing.T) {
	testViewContainment(t, newContainment(t))
}

// TestViewContainmentAsRoot runs the same cases with the gateway as root,
// as an embedder's gateway often is, where only the view and Landlock
// stand between a command and the machine (root's commands pass every
// permission check). It runs in a throwaway mount namespace in which the
// whole machine but the test's directory is read-only, so a regression
// meets a read-only machine, never the real one.
func TestViewContainmentAsRoot(t *testing.T) {
	testViewContainment(t, newRootContainment(t))
}

func testViewContainment(t *testing.T, c *containment) {
	full := exec.Principal{Name: "full"}
	nothing := func(t *testing.T, s sentinels, rep helperReply) {}
	tests := []struct {
		name, shell, stdin string
		p                  exec.Principal
		check              func(t *testing.T, s sentinels, rep helperReply)
	}{
		{name: "depth-two delete under a protected root", shell: "rm -rf ROOT/sub/deep", check: func(t *testing.T, s sentinels, rep helperReply) {
			if _, err := os.Stat(filepath.Join(s.root, "sub", "deep", "f.txt")); err != nil {
				t.Errorf("ROOT/sub/deep/f.txt: %v (%s)", err, rep.Stderr)
			}
		}},
		{name: "rm -rf of a protected root fed on stdin", shell: "bash -s", stdin: "rm -rf ROOT\nrm -rf ROOT/sub/deep\n", check: func(t *testing.T, s sentinels, rep helperReply) {
			if _, err := os.Stat(filepath.Join(s.root, "sub", "deep", "f.txt")); err != nil {
				t.Errorf("ROOT/sub/deep/f.txt: %v", err)
			}
		}},
		{name: "find -delete of a protected root", shell: "find ROOT -mindepth 1 -delete", check: nothing},
		{name: "hidden state directory unreadable", shell: "cat HIDDEN/token; ls -a HIDDEN; grep -r TOKEN HIDDEN", check: func(t *testing.T, _ sentinels, rep helperReply) {
			if strings.Contains(rep.Stdout, tokenData) || strings.Contains(rep.Stdout, "token") {
				t.Errorf("the hidden token reached the command: %q", rep.Stdout)
			}
		}},
		{name: "kill -9 -1", shell: "kill -9 -1; echo still", check: nothing},
		{name: "no survivors", shell: "sleep 7356812 & setsid sleep 7356812 & env -i setsid sh -c 'sleep 7356812 &' ; nohup sleep 7356812 >/dev/null 2>&1 & disown; true", check: func(t *testing.T, _ sentinels, rep helperReply) {
			if rep.Survivors != 0 {
				t.Errorf("%d processes outlived the call", rep.Survivors)
			}
		}},
		{name: "no other process visible", shell: "ls /proc | grep -c '^[0-9]'; kill -0 HELPERPID && echo REACHED", check: func(t *testing.T, _ sentinels, rep helperReply) {
			if strings.Contains(rep.Stdout, "REACHED") {
				t.Errorf("the gateway's process was reachable: %q", rep.Stdout)
			}
			if n, _ := strconv.Atoi(strings.TrimSpace(strings.Split(rep.Stdout, "\n")[0])); n > 4 {
				t.Errorf("/proc lists %d processes: the call should see only its own", n)
			}
		}},
		{name: "own devpts", shell: "ls /dev/pts; ls /dev", check: func(t *testing.T, _ sentinels, rep helperReply) {
			for _, f := range strings.Fields(rep.Stdout) {
				if _, err := strconv.Atoi(f); err == nil {
					t.Errorf("another terminal is visible in the view's /dev/pts: %q", rep.Stdout)
				}
				if strings.HasPrefix(f, "sd") || strings.HasPrefix(f, "vd") || f == "mem" || f == "kmsg" {
					t.Errorf("host device %s in the view's /dev", f)
				}
			}
		}},
		{name: "cgroup move refused", shell: "echo $$ > /sys/fs/cgroup/cgroup.procs && echo MOVED; mkdir /sys/fs/cgroup/escape && echo MADE", check: func(t *testing.T, _ sentinels, rep helperReply) {
			if strings.Contains(rep.Stdout, "MOVED") || strings.Contains(rep.Stdout, "MADE") {
				t.Errorf("the command changed the cgroup tree: %q", rep.Stdout)
			}
		}},
		{name: "no new namespaces or mounts", shell: "unshare -r true && echo USERNS; unshare -m true && echo MNTNS; mount -t tmpfs x /tmp && echo MOUNTED; umount /tmp && echo UNMOUNTED", check: func(t *testing.T, _ sentinels, rep helperReply) {
			for _, w := range []string{"USERNS", "MNTNS", "MOUNTED", "UNMOUNTED"} {
				if strings.Contains(rep.Stdout, w) {
					t.Errorf("%s: %q", w, rep.Stdout)
				}
			}
		}},
		{name: "system directories read-only", shell: "touch /etc/rigout-view-probe /usr/rigout-view-probe 2>&1; echo done", check: func(t *testing.T, _ sentinels, rep helperReply) {
			for _, p := range []string{"/etc/rigout-view-probe", "/usr/rigout-view-probe"} {
				if _, err := os.Stat(p); err == nil {
					os.Remove(p)
					t.Errorf("%s was created through the view", p)
				}
			}
		}},
		{name: "work area writable", shell: "echo made > WORK/made && cat WORK/made", check: func(t *testing.T, s sentinels, rep helperReply) {
			if b, err := os.ReadFile(filepath.Join(s.work, "made")); err != nil || string(b) != "made\n" {
				t.Errorf("WORK/made = %q, %v (%s)", b, err, rep.Stderr)
			}
		}},
		{name: "read-only principal", p: exec.Principal{Name: "ro", ReadOnly: true}, shell: "echo x > WORK/ro-made; echo y > /tmp/ro-tmp && cat /tmp/ro-tmp", check: func(t *testing.T, s sentinels, rep helperReply) {
			if _, err := os.Stat(filepath.Join(s.work, "ro-made")); err == nil {
				t.Errorf("a read-only principal wrote WORK/ro-made")
			}
			if !strings.Contains(rep.Stdout, "y") {
				t.Errorf("a read-only principal's private /tmp is not writable: %q %q", rep.Stdout, rep.Stderr)
			}
		}},
		{name: "roots-scoped principal", p: exec.Principal{Name: "rooted", Roots: []string{"WORK/sub"}}, shell: "echo x > WORK/outside; echo y > WORK/sub/inside", check: func(t *testing.T, s sentinels, rep helperReply) {
			if _, err := os.Stat(filepath.Join(s.work, "outside")); err == nil {
				t.Errorf("a roots-scoped principal wrote outside its roots")
			}
			if b, err := os.ReadFile(filepath.Join(s.work, "sub", "inside")); err != nil || string(b) != "y\n" {
				t.Errorf("a roots-scoped principal could not write in its root: %q %v (%s)", b, err, rep.Stderr)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := c.sentinels(t, strings.ReplaceAll(tt.name, " ", "_"))
			p := tt.p
			if p.Name == "" {
				p = full
			}
			for i, r := range p.Roots {
				p.Roots[i] = s.expand(r)
				if err := os.MkdirAll(p.Roots[i], 0o755); err != nil {
					t.Fatal(err)
				}
				_ = os.Chown(p.Roots[i], c.uid, c.uid)
			}
			// The test process: a pid outside the call's namespace.
			shell := strings.ReplaceAll(tt.shell, "HELPERPID", strconv.Itoa(os.Getpid()))
			rep := c.viewRun(t, s, p, shell, tt.stdin)
			s.intact(t)
			if _, err := os.Stat(filepath.Join(s.root, "sub", "deep", "f.txt")); err != nil {
				t.Errorf("depth-two sentinel: %v", err)
			}
			tt.check(t, s, rep)
		})
	}
}

// TestViewPrivateTmp checks that one principal's /tmp is not another's,
// and lasts across its calls.
func TestViewPrivateTmp(t *testing.T) {
	c := newContainment(t)
	s := c.sentinels(t, "private_tmp")
	a, b := exec.Principal{Name: "alice"}, exec.Principal{Name: "bob"}
	c.viewRun(t, s, a, "echo alice-secret > /tmp/a.txt", "")
	if rep := c.viewRun(t, s, a, "cat /tmp/a.txt", ""); !strings.Contains(rep.Stdout, "alice-secret") {
		t.Errorf("alice's /tmp did not last across calls: %q %q", rep.Stdout, rep.Stderr)
	}
	if rep := c.viewRun(t, s, b, "cat /tmp/a.txt; ls /tmp", ""); strings.Contains(rep.Stdout, "alice") || strings.Contains(rep.Stdout, "a.txt") {
		t.Errorf("bob sees alice's /tmp: %q", rep.Stdout)
	}
}

// TestViewSockets checks that a same-user unix socket under a HideSockets
// directory, and an abstract socket, are out of a command's reach.
func TestViewSockets(t *testing.T) {
	c := newContainment(t)
	s := c.sentinels(t, "sockets")
	dir := filepath.Join(s.dir, "sock")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_ = os.Chown(path, c.uid, c.uid)
	abstract := "rigout-view-test-" + strconv.Itoa(os.Getpid())
	aln, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer aln.Close()
	accepted := make(chan struct{}, 2)
	for _, l := range []net.Listener{ln, aln} {
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				accepted <- struct{}{}
				conn.Close()
			}
		}()
	}
	py := `import socket,sys
for a in sys.argv[1:]:
    s=socket.socket(socket.AF_UNIX)
    try:
        s.connect(a.replace("@","\0",1)); print("CONNECTED", a)
    except OSError as e:
        print("refused", a, e)`
	rep := c.viewRun(t, s, exec.Principal{Name: "sock"}, "python3 -c '"+py+"' "+path+" @"+abstract, "")
	if strings.Contains(rep.Stdout, "CONNECTED") || len(accepted) > 0 {
		t.Errorf("a command reached a socket outside its view: %q %q", rep.Stdout, rep.Stderr)
	}
	if !strings.Contains(rep.Stdout, "refused") {
		t.Errorf("the probe did not run: %q %q", rep.Stdout, rep.Stderr)
	}
	// A principal that holds the socket (docker.sock for the docker
	// family's holder) reaches it; the others of the directory stay hidden.
	other := filepath.Join(dir, "other.sock")
	oln, err := net.Listen("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	defer oln.Close()
	_ = os.Chown(other, c.uid, c.uid)
	rep = c.viewRun(t, s, exec.Principal{Name: "docker", Sockets: []string{path}}, "python3 -c '"+py+"' "+path+" "+other, "")
	if !strings.Contains(rep.Stdout, "CONNECTED "+path) {
		t.Errorf("a principal holding %s could not reach it: %q %q", path, rep.Stdout, rep.Stderr)
	}
	if strings.Contains(rep.Stdout, "CONNECTED "+other) {
		t.Errorf("a principal reached a socket it does not hold: %q", rep.Stdout)
	}
}

// TestViewFiles performs, as an unprivileged uid, file operations through
// the view's spawner that the kernel must refuse exactly as it refuses the
// same through a command, and checks the ones it must allow.
func TestViewFiles(t *testing.T) {
	c := newContainment(t)
	s := c.sentinels(t, "view_files")
	ops := []struct {
		op     string
		refuse bool
	}{
		{"remove ROOT/sub/deep/f.txt", true},
		{"remove ROOT/keep.txt", true},
		{"write ROOT/keep.txt", true},
		{"write CRIT", true},
		{"rename ROOT/keep.txt WORK/moved", true},
		{"chmod ROOT/keep.txt", true},
		{"mkdir ROOT/new", true},
		{"read HIDDEN/token", true},
		{"list HIDDEN", true},
		{"write /etc/rigout-view-probe", true},
		{"write WORK/written", false},
		{"read ROOT/keep.txt", false},
		{"mkdir WORK/dir", false},
		{"remove WORK/scratch", false},
		{"write /tmp/private", false},
	}
	req := helperRequest{Sandbox: s.viewConfig(), Dir: s.work, Principal: exec.Principal{Name: "files"}}
	for _, o := range ops {
		req.Files = append(req.Files, s.expand(o.op))
	}
	rep := c.run(t, req)
	if !strings.Contains(rep.Status, "per-principal views") {
		skipOrFail(t, "no per-principal views: "+rep.Status)
	}
	if len(rep.FileResults) != len(ops) {
		t.Fatalf("got %d results for %d operations", len(rep.FileResults), len(ops))
	}
	for i, o := range ops {
		got := rep.FileResults[i]
		ok := strings.HasPrefix(got, "ok")
		if o.refuse && ok {
			t.Errorf("%s: allowed (%q), want refused", o.op, got)
		}
		if !o.refuse && !ok {
			t.Errorf("%s: %s, want allowed", o.op, got)
		}
		if o.op == "read HIDDEN/token" && strings.Contains(got, tokenData) {
			t.Errorf("the hidden token was read: %q", got)
		}
	}
	s.intact(t)
	if _, err := os.Stat(filepath.Join(s.root, "sub", "deep", "f.txt")); err != nil {
		t.Errorf("depth-two sentinel: %v", err)
	}
	if _, err := os.Stat("/etc/rigout-view-probe"); err == nil {
		os.Remove("/etc/rigout-view-probe")
		t.Errorf("/etc/rigout-view-probe was written through the view")
	}
	if b, err := os.ReadFile(filepath.Join(s.work, "written")); err != nil || string(b) != "overwritten" {
		t.Errorf("WORK/written = %q, %v", b, err)
	}
}

// TestViewTerminate checks that SIGTERM ends a command in a view that has
// no handler for it, although the command is the first process of its PID
// namespace (which the kernel spares signals it does not handle).
func TestViewTerminate(t *testing.T) {
	c := newContainment(t)
	s := c.sentinels(t, "terminate")
	rep := c.run(t, helperRequest{Sandbox: s.viewConfig(), Shell: "exec sleep 30", Dir: s.work, Principal: exec.Principal{Name: "term"}, Term: true})
	if !strings.Contains(rep.Status, "per-principal views") {
		skipOrFail(t, "no per-principal views: "+rep.Status)
	}
	if rep.Signal == "" || rep.WaitedMS > 3000 {
		t.Errorf("SIGTERM did not end the command: signal %q, exit %d, %d ms", rep.Signal, rep.ExitCode, rep.WaitedMS)
	}
}

// TestViewTerminal runs, in a terminal session in a view, what must not
// get out of it: a delete two levels down a protected root, a read of the
// hidden state and of a hidden key file, and a look at other terminals.
func TestViewTerminal(t *testing.T) {
	c := newContainment(t)
	s := c.sentinels(t, "terminal")
	key := filepath.Join(s.dir, "id_ed25519")
	if err := os.WriteFile(key, []byte("PRIVATE-KEY-d41d8cd9"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chown(key, c.uid, c.uid)
	cfg := s.viewConfig()
	cfg.Views.Hidden = append(cfg.Views.Hidden, key)
	shell := s.expand("rm -rf ROOT/sub/deep; cat HIDDEN/token; cat " + key + "; echo pts:$(ls /dev/pts | tr '\\n' ,); tty")
	rep := c.run(t, helperRequest{Sandbox: cfg, Shell: shell, Dir: s.work, Principal: exec.Principal{Name: "pty"}, PTY: true})
	if !strings.Contains(rep.Status, "per-principal views") {
		skipOrFail(t, "no per-principal views: "+rep.Status)
	}
	if !rep.Sandboxed {
		t.Fatalf("the terminal ran outside the sandbox: %q", rep.Stdout)
	}
	s.intact(t)
	if _, err := os.Stat(filepath.Join(s.root, "sub", "deep", "f.txt")); err != nil {
		t.Errorf("depth-two sentinel: %v", err)
	}
	for _, secret := range []string{tokenData, "PRIVATE-KEY"} {
		if strings.Contains(rep.Stdout, secret) {
			t.Errorf("the terminal showed %q:\n%s", secret, rep.Stdout)
		}
	}
	if !strings.Contains(rep.Stdout, "pts:0,ptmx,") && !strings.Contains(rep.Stdout, "pts:0,") {
		t.Errorf("the terminal's own devpts should hold its terminal alone:\n%s", rep.Stdout)
	}
	if !strings.Contains(rep.Stdout, "/dev/pts/0") {
		t.Errorf("tty does not name the session's terminal in the view:\n%s", rep.Stdout)
	}
}

// TestViewFilesDescriptorsSurviveGC opens files through a view, collects
// garbage between each open and its use, and checks every write and close
// works: a descriptor passed from the spawner must have one owner only.
// Harmless as root: it writes files in its own temporary directory.
func TestViewFilesDescriptorsSurviveGC(t *testing.T) {
	dir := t.TempDir()
	sb, err := exec.NewSandbox(exec.SandboxConfig{Views: &exec.ViewConfig{Writable: []string{dir}, TmpDir: filepath.Join(dir, "state")}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if st := sb.Status(); !st.Views {
		skipOrFail(t, "no per-principal views: "+st.ViewsReason)
	}
	vf, err := sb.Files(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		name := filepath.Join(dir, fmt.Sprintf("f%d", i))
		f, err := vf.OpenFile("", name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.GC()
		if _, err := f.WriteString("data"); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
		if err := f.Close(); err != nil {
			t.Fatalf("close %s: %v", name, err)
		}
		if f.Name() != name {
			t.Errorf("Name() = %q, want %q", f.Name(), name)
		}
	}
}

// TestViewConfigNeedsTmpDir: views without a place for the principals'
// private /tmp are a configuration error, not a silent fallback.
func TestViewConfigNeedsTmpDir(t *testing.T) {
	for _, dir := range []string{"", "relative/tmp"} {
		if sb, err := exec.NewSandbox(exec.SandboxConfig{Views: &exec.ViewConfig{TmpDir: dir}}); err == nil {
			sb.Close()
			t.Errorf("TmpDir %q: NewSandbox accepted it", dir)
		}
	}
}

// TestViewSharedProc runs views as on a kernel without procfs's pidns=
// option (before Linux 6.18): each call still has a PID namespace of its
// own, so nothing outlives it, but sees its principal's /proc; the status
// says so. The commands are harmless: they only look and sleep.
func TestViewSharedProc(t *testing.T) {
	dir := t.TempDir()
	vc := &exec.ViewConfig{TmpDir: filepath.Join(dir, "tmp")}
	exec.ViewsWithSharedProc(vc)
	sb, err := exec.NewSandbox(exec.SandboxConfig{Views: vc})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	st := sb.Status()
	if !st.Views {
		skipOrFail(t, "no per-principal views: "+st.ViewsReason)
	}
	if !strings.Contains(strings.Join(st.Unenforced, "; "), "pidns=") {
		t.Errorf("status does not say what the kernel lacks: %v", st.Unenforced)
	}
	l := &exec.Local{Sandbox: sb}
	marker := fmt.Sprintf("7356%d", os.Getpid())
	res, err := l.Run(context.Background(), exec.Command{Dir: "/",
		Shell: "echo pid=$$; ls /proc | grep -c '^[0-9]'; for p in /proc/[0-9]*; do cat $p/environ >/dev/null 2>&1 || echo unreadable $p; done; " +
			"sleep " + marker + " & setsid sleep " + marker + " & true"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !res.Sandboxed {
		t.Fatalf("exit %d, sandboxed %v: %s", res.ExitCode, res.Sandboxed, res.Stderr.Data)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout.Data)), "\n")
	if len(lines) < 2 || lines[0] != "pid=1" {
		t.Fatalf("the call is not the first process of a PID namespace of its own: %q", res.Stdout.Data)
	}
	// The principal's namespace: its spawner and the call (with the ls
	// and grep of the pipeline), nothing of the host.
	if n, _ := strconv.Atoi(lines[1]); n < 2 || n > 8 {
		t.Errorf("/proc lists %d processes: want the principal's few", n)
	}
	// The spawner (the namespace's first process, holding capabilities in
	// it) must not be readable by the call.
	if !strings.Contains(string(res.Stdout.Data), "unreadable /proc/1\n") {
		t.Errorf("the call could read its spawner's environment: %q", res.Stdout.Data)
	}
	if left := proctest.WithArg(marker); len(left) > 0 {
		t.Errorf("%d processes outlived the call: %v", len(left), left)
	}
}
