package packages_test

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/fakecmd"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/packages"
)

func connect(t *testing.T, cfg packages.Config, rc *remote.RouterConfig) *client.Client {
	t.Helper()
	if rc != nil {
		c := *rc
		c.Local = &exec.Local{UnsafeNoSandbox: true}
		r, err := remote.NewRouter(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		cfg.Hosts = r
	}
	if cfg.Hosts == nil && cfg.Local == nil {
		cfg.Local = &exec.Local{UnsafeNoSandbox: true}
	}
	f, err := packages.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rigouttest.Connect(t, rigouttest.New(t, rigout.Config{Tools: f.Tools()}))
}

// expected is each manager's argv for the packages pkgs[manager].
var expected = map[string]struct {
	prog string // the program the fake stands for
	pkgs []any
	argv string
}{
	"apt":    {"apt-get", []any{"curl", "libssl3:amd64", "git=1:2.39.5-0+deb12u1"}, "apt-get install -y --no-install-recommends curl libssl3:amd64 git=1:2.39.5-0+deb12u1"},
	"dnf":    {"dnf", []any{"curl", "python3.11-devel"}, "dnf install -y curl python3.11-devel"},
	"yum":    {"yum", []any{"httpd"}, "yum install -y httpd"},
	"zypper": {"zypper", []any{"gcc-c++"}, "zypper --non-interactive install gcc-c++"},
	"pacman": {"pacman", []any{"base-devel", "python-pip"}, "pacman -S --noconfirm --needed base-devel python-pip"},
	"apk":    {"apk", []any{"curl", "py3-pip=23.1-r0"}, "apk add --no-progress curl py3-pip=23.1-r0"},
	"brew":   {"brew", []any{"wget", "hashicorp/tap/terraform"}, "brew install wget hashicorp/tap/terraform"},
	"pip":    {"python3", []any{"requests==2.32.3", "uvicorn[standard]>=0.30,<1"}, "python3 -m pip install --disable-pip-version-check --no-input -- requests==2.32.3 uvicorn[standard]>=0.30,<1"},
	"npm":    {"npm", []any{"@scope/pkg@^1.2.0", "typescript"}, "npm install --global --no-fund --no-audit @scope/pkg@^1.2.0 typescript"},
}

// onlyFakes sets PATH to a directory holding only the fakes (and env, which
// the apt argv runs through).
func onlyFakes(t *testing.T) *fakecmd.Dir {
	d := fakecmd.New(t)
	t.Setenv("PATH", d.Path)
	return d
}

func addFake(t *testing.T, d *fakecmd.Dir, prog string) {
	d.Add(t, prog, "", 0)
	if prog == "apt-get" {
		d.Link(t, "env", "/usr/bin/env")
	}
}

func TestEveryManagerArgv(t *testing.T) {
	for name, e := range expected {
		t.Run(name, func(t *testing.T) {
			fake := onlyFakes(t)
			addFake(t, fake, e.prog)
			c := connect(t, packages.Config{}, nil)
			res := rigouttest.Call(t, c, "install_software", map[string]any{"packages": e.pkgs, "package_manager": name})
			if res.IsError {
				t.Fatal(rigouttest.Text(res))
			}
			if got := fakecmd.Join(fake.Last(t)); got != e.argv {
				t.Errorf("argv\n got %s\nwant %s", got, e.argv)
			}
		})
	}
}

// TestAutoLocal: with only one system manager on PATH, auto finds it.
func TestAutoLocal(t *testing.T) {
	for _, m := range packages.Managers {
		if !m.System {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			fake := onlyFakes(t)
			e := expected[m.Name]
			addFake(t, fake, e.prog)
			c := connect(t, packages.Config{}, nil)
			res := rigouttest.Call(t, c, "install_software", map[string]any{"packages": e.pkgs})
			if res.IsError {
				t.Fatal(rigouttest.Text(res))
			}
			if got := fakecmd.Join(fake.Last(t)); got != e.argv {
				t.Errorf("argv\n got %s\nwant %s", got, e.argv)
			}
			if sc := rigouttest.Structured(t, res); sc["manager"] != m.Name {
				t.Errorf("manager %v", sc["manager"])
			}
		})
	}
	// None at all: a clear error.
	onlyFakes(t)
	res := rigouttest.Call(t, connect(t, packages.Config{}, nil), "install_software", map[string]any{"packages": []any{"curl"}})
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "no known package manager") {
		t.Errorf("no manager: %s", rigouttest.Text(res))
	}
}

// TestAutoSSH: the same detection on a real sshd's host, whose PATH (set by
// sshd's SetEnv) holds only the fakes; the fakes change between calls.
func TestAutoSSH(t *testing.T) {
	fake := fakecmd.New(t)
	d := sshdtest.Start(t, sshdtest.Options{SetEnv: map[string]string{"PATH": fake.Path}})
	c := connect(t, packages.Config{}, &d.Router)
	for _, m := range packages.Managers {
		if !m.System {
			continue
		}
		fake.Clear(t)
		e := expected[m.Name]
		addFake(t, fake, e.prog)
		res := rigouttest.Call(t, c, "install_software", map[string]any{"packages": e.pkgs, "host": "box"})
		if res.IsError {
			t.Fatalf("%s: %s", m.Name, rigouttest.Text(res))
		}
		if got := fakecmd.Join(fake.Last(t)); got != e.argv {
			t.Errorf("%s: argv\n got %s\nwant %s", m.Name, got, e.argv)
		}
		if sc := rigouttest.Structured(t, res); sc["manager"] != m.Name || !strings.HasPrefix(sc["route"].(string), "ssh(box") {
			t.Errorf("%s: %v", m.Name, sc)
		}
	}
}

// TestSudo: use_sudo runs the install through sudo -n, and only then.
func TestSudo(t *testing.T) {
	fake := onlyFakes(t)
	addFake(t, fake, "apt-get")
	fake.Add(t, "sudo", "", 0)
	c := connect(t, packages.Config{}, nil)
	rigouttest.Call(t, c, "install_software", map[string]any{"packages": []any{"curl"}, "package_manager": "apt", "use_sudo": true})
	want := "sudo -n -- env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends curl"
	if got := fakecmd.Join(fake.Last(t)); got != want {
		t.Errorf("argv\n got %s\nwant %s", got, want)
	}
	fake.Reset(t)
	rigouttest.Call(t, c, "install_software", map[string]any{"packages": []any{"curl"}, "package_manager": "apt"})
	if got := fake.Last(t); len(got) == 0 || got[0] != "apt-get" {
		t.Errorf("without use_sudo: %v", got)
	}
}

// TestNameSmuggling: names that are options, paths, URLs or shell syntax
// are refused before anything runs.
func TestNameSmuggling(t *testing.T) {
	fake := onlyFakes(t)
	for _, p := range []string{"apt-get", "dnf", "yum", "zypper", "pacman", "apk", "brew", "python3", "npm", "conda", "docker"} {
		addFake(t, fake, p)
	}
	c := connect(t, packages.Config{}, nil)
	bad := []string{"-y", "--allow-unauthenticated", "-o=APT::Get::AllowUnauthenticated=1", "--index-url=http://evil", "-r",
		"curl;id", "$(id)", "`id`", "a b", "curl\nvim", "../x", "/etc/passwd", "./local", "http://evil/x.whl",
		"git+https://evil/x", "file:///tmp/x", "a|b", "a&b", "*", ""}
	for _, m := range packages.Managers {
		for _, n := range bad {
			res := rigouttest.Call(t, c, "install_software", map[string]any{"packages": []any{"ok", n}, "package_manager": m.Name})
			if !res.IsError {
				t.Errorf("%s %q: not refused", m.Name, n)
			}
		}
	}
	ws := filepath.Join(t.TempDir(), "ws")
	for _, kind := range []string{"python", "node", "conda", "docker"} {
		for _, n := range []string{"-e", "--index-url=http://evil", "$(id)", "a b", "../x"} {
			res := rigouttest.Call(t, c, "environment_setup", map[string]any{"environment_type": kind, "workspace_path": ws, "requirements": []any{n}})
			if !res.IsError {
				t.Errorf("%s %q: not refused", kind, n)
			}
		}
	}
	for _, p := range []string{"relative/dir", "-rf", "/"} {
		res := rigouttest.Call(t, c, "environment_setup", map[string]any{"environment_type": "custom", "workspace_path": p})
		if !res.IsError {
			t.Errorf("workspace_path %q: not refused", p)
		}
	}
	for _, call := range fake.Calls(t) {
		if len(call) != 2 || call[1] != "--version" {
			t.Errorf("ran: %v", call)
		}
	}
	if _, err := os.Stat(ws); err == nil {
		t.Errorf("workspace %s was created by a refused call", ws)
	}
}

// TestEnvironmentArgv: each environment type's steps, with recording fakes.
func TestEnvironmentArgv(t *testing.T) {
	fake := fakecmd.New(t)
	for _, p := range []string{"python3", "npm", "conda", "docker"} {
		fake.Add(t, p, "", 0)
	}
	t.Setenv("PATH", fake.Path+":"+os.Getenv("PATH"))
	c := connect(t, packages.Config{}, nil)
	base := t.TempDir()
	tests := []struct {
		kind string
		reqs []any
		want []string
	}{
		{"node", []any{"express@4"}, []string{"npm init -y", "npm install --no-fund --no-audit express@4"}},
		{"conda", []any{"numpy=1.26", "python>=3.11"}, []string{"conda create --yes --prefix WS/env numpy=1.26 python>=3.11"}},
		{"docker", []any{"alpine:3.20", "redis"}, []string{"docker pull -- alpine:3.20", "docker pull -- redis"}},
		{"python", nil, []string{"python3 -m venv -- WS/venv"}},
	}
	for _, tt := range tests {
		fake.Reset(t)
		ws := filepath.Join(base, tt.kind)
		args := map[string]any{"environment_type": tt.kind, "workspace_path": ws}
		if tt.reqs != nil {
			args["requirements"] = tt.reqs
		}
		res := rigouttest.Call(t, c, "environment_setup", args)
		if res.IsError {
			t.Fatalf("%s: %s", tt.kind, rigouttest.Text(res))
		}
		if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
			t.Errorf("%s: workspace not created: %v", tt.kind, err)
		}
		var got []string
		for _, c := range fake.Calls(t) {
			if len(c) != 2 || c[1] != "--version" {
				got = append(got, strings.ReplaceAll(fakecmd.Join(c), ws, "WS"))
			}
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tt.kind, got, tt.want)
		}
	}
	res := rigouttest.Call(t, c, "environment_setup", map[string]any{"environment_type": "custom", "workspace_path": filepath.Join(base, "c"), "requirements": []any{"x"}})
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "execute_command") {
		t.Errorf("custom with requirements: %s", rigouttest.Text(res))
	}
}

// TestRealPipInstall makes a real venv with environment_setup and installs
// a real package into it with pip. PyPI is out of reach here (and in
// tests on principle), so the test builds a tiny wheel in a temp dir and
// the operator's PipOptions point pip at it: --no-index --find-links DIR.
func TestRealPipInstall(t *testing.T) {
	skip := func(why string) {
		if os.Getenv("RIGOUT_REQUIRE_VENV") == "1" {
			t.Fatalf("%s, and RIGOUT_REQUIRE_VENV=1", why)
		}
		t.Skipf("SKIPPING REAL PIP TEST: %s (apt-get install python3-venv; RIGOUT_REQUIRE_VENV=1 makes this a failure)", why)
	}
	if _, err := osexec.LookPath("python3"); err != nil {
		skip("python3 is not installed")
	}
	wheels := t.TempDir()
	writeWheel(t, wheels, "rigout_tiny", "0.1.0")
	c := connect(t, packages.Config{PipOptions: []string{"--no-index", "--find-links", wheels}}, nil)
	ws := filepath.Join(t.TempDir(), "proj")
	res := rigouttest.Call(t, c, "environment_setup", map[string]any{"environment_type": "python", "workspace_path": ws, "requirements": []any{"rigout-tiny==0.1.0"}})
	if res.IsError {
		if strings.Contains(rigouttest.Text(res), "ensurepip") {
			skip("python3 cannot make a venv here: " + rigouttest.Text(res))
		}
		t.Fatal(rigouttest.Text(res))
	}
	out, err := osexec.Command(filepath.Join(ws, "venv", "bin", "python"), "-c", "import rigout_tiny; print(rigout_tiny.VALUE)").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "tiny 0.1.0" {
		t.Fatalf("import from the venv: %v: %s", err, out)
	}
	// Not installed outside the venv.
	if err := osexec.Command("python3", "-c", "import rigout_tiny").Run(); err == nil {
		t.Error("rigout_tiny is importable by the system python")
	}
}

// writeWheel writes a pure-Python wheel holding one module that sets VALUE.
func writeWheel(t *testing.T, dir, name, version string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%s-py3-none-any.whl", name, version)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	info := fmt.Sprintf("%s-%s.dist-info", name, version)
	files := [][2]string{
		{name + "/__init__.py", fmt.Sprintf("VALUE = 'tiny %s'\n", version)},
		{info + "/METADATA", fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", strings.ReplaceAll(name, "_", "-"), version)},
		{info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: rigout-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	for _, fl := range files {
		w, err := zw.Create(fl[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(fl[1]))
		sum := sha256.Sum256([]byte(fl[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", fl[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(fl[1]))
	}
	record.WriteString(info + "/RECORD,,\n")
	w, err := zw.Create(info + "/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHandOff: a local install still running after wait_seconds becomes a
// background process of the caller, read with the process tool; one that
// ends in time is an ordinary result.
func TestHandOff(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho installing \"$@\"\nsleep 3\necho done\n"
	if err := os.WriteFile(filepath.Join(dir, "apk"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	local := &exec.Local{UnsafeNoSandbox: true, Grace: 200 * time.Millisecond}
	m, err := sessions.New(sessions.Config{Local: local, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	c := connect(t, packages.Config{Local: local, Processes: m}, nil)
	res := rigouttest.Call(t, c, "install_software", map[string]any{"packages": []any{"curl"}, "package_manager": "apk", "wait_seconds": 1})
	sc := rigouttest.Structured(t, res)
	id, _ := sc["process_id"].(string)
	if res.IsError || id == "" || !strings.Contains(sc["next_call"].(string), id) {
		t.Fatalf("no hand-off: %s", rigouttest.Text(res))
	}
	p, err := m.Get("local", id)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	rr, err := p.Read(context.Background(), sessions.ReadRequest{})
	if err != nil || !strings.Contains(string(rr.Stdout.Data), "installing add --no-progress curl\ndone") {
		t.Errorf("background output %q, %v", rr.Stdout.Data, err)
	}
	// In time: no process.
	res = rigouttest.Call(t, c, "install_software", map[string]any{"packages": []any{"curl"}, "package_manager": "apk", "wait_seconds": 10})
	if sc := rigouttest.Structured(t, res); res.IsError || sc["process_id"] != nil {
		t.Errorf("in time: %s", rigouttest.Text(res))
	}
}
