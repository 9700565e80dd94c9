package family_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/fakecmd"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/docker"
	"github.com/rigout/rigout/tools/internal/family"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/tools/system"
)

// TestEveryFamilyRecordsUnsandboxed: a command that ran on this machine
// outside the kernel sandbox says so in its done row, whichever family
// ran it (docker and system once did not).
func TestEveryFamilyRecordsUnsandboxed(t *testing.T) {
	fake := fakecmd.New(t)
	fake.Add(t, "docker", "", 0)
	fake.Add(t, "nvidia-smi", "", 0)
	t.Setenv("PATH", fake.Path+":"+os.Getenv("PATH"))
	local := &exec.Local{UnsafeNoSandbox: true}
	tests := []struct {
		name  string
		tools func() ([]rigout.Tool, error)
		tool  string
		args  map[string]any
	}{
		{"shell", func() ([]rigout.Tool, error) {
			f, err := shell.New(shell.Config{Local: local, WorkDir: t.TempDir()})
			if err != nil {
				return nil, err
			}
			return f.Tools(), nil
		}, "execute_command", map[string]any{"command": "true"}},
		{"docker", func() ([]rigout.Tool, error) {
			f, err := docker.New(docker.Config{Local: local})
			if err != nil {
				return nil, err
			}
			return f.Tools(), nil
		}, "docker_operations", map[string]any{"operation": "list"}},
		{"system", func() ([]rigout.Tool, error) {
			f, err := system.New(system.Config{Local: local})
			if err != nil {
				return nil, err
			}
			return f.Tools(), nil
		}, "get_hardware_info", map[string]any{"refresh": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools, err := tt.tools()
			if err != nil {
				t.Fatal(err)
			}
			rec := &audittest.Recorder{}
			c := rigouttest.Connect(t, rigouttest.New(t, rigout.Config{Tools: tools, Audit: rec}))
			if res := rigouttest.Call(t, c, tt.tool, tt.args); res.IsError {
				t.Fatalf("%s: %s", tt.tool, rigouttest.Text(res))
			}
			var done []audit.Event
			for _, e := range rec.Events() {
				if e.Tool == tt.tool && e.Phase == audit.PhaseDone {
					done = append(done, e)
				}
			}
			if len(done) != 1 || !strings.Contains(done[0].Detail, `"unsandboxed":"no sandbox configured"`) {
				t.Errorf("done rows = %+v, want one whose detail says it ran unsandboxed", done)
			}
		})
	}
}

func TestResolveWithoutRouter(t *testing.T) {
	local := &exec.Local{UnsafeNoSandbox: true}
	r := family.Hosts(local, nil)
	for _, host := range []string{"", "local", "SELF", "localhost", "127.0.0.1", "::1"} {
		tgt, err := r.Resolve(context.Background(), host, "p")
		if err != nil || !tgt.Local || tgt.Runner != local || tgt.Route != "local" {
			t.Errorf("Resolve(%q) = %+v, %v, want this machine", host, tgt, err)
		}
	}
	for _, host := range []string{"web1", "user@localhost", "127.0.0.2"} {
		if _, err := r.Resolve(context.Background(), host, "p"); err == nil || !strings.Contains(err.Error(), host) {
			t.Errorf("Resolve(%q) err = %v, want one naming the host", host, err)
		}
	}
}

func TestCheckSandboxed(t *testing.T) {
	tests := []struct {
		name string
		r    exec.Hosts
		want error
	}{
		{"no runner", family.Hosts(nil, nil), exec.ErrNoSandbox},
		{"unconfined without a sandbox", family.Hosts(&exec.Local{}, nil), exec.ErrNoSandbox},
		{"unsafe, said so", family.Hosts(&exec.Local{UnsafeNoSandbox: true}, nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.r.CheckSandboxed(); !errors.Is(err, tt.want) {
				t.Errorf("CheckSandboxed() = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestSetup: a family's constructor refuses an unsandboxed runner with an
// error that names the family, and otherwise gets the hosts and the
// default gate.
func TestSetup(t *testing.T) {
	_, _, err := family.Setup("shell", &exec.Local{}, nil, nil)
	if !errors.Is(err, exec.ErrNoSandbox) || !strings.HasPrefix(err.Error(), "shell: Config.Local: ") {
		t.Errorf("Setup with an unsandboxed runner: err = %v, want ErrNoSandbox named \"shell: Config.Local: \"", err)
	}
	h, g, err := family.Setup("shell", &exec.Local{UnsafeNoSandbox: true}, nil, nil)
	if err != nil || h == nil || g == nil {
		t.Fatalf("Setup(unsafe runner) = %v, %v, %v; want hosts, the default gate and no error", h, g, err)
	}
	if tgt, err := h.Resolve(context.Background(), "local", "alice"); err != nil || !tgt.Local {
		t.Errorf("Resolve(local) = %+v, %v; want this machine", tgt, err)
	}
}

// TestInvalid: a family's refusal of its arguments is recorded invalid and
// carries the same structured refusal as the chain's schema check.
func TestInvalid(t *testing.T) {
	call := &rigout.Call{Tool: &rigout.Tool{Name: "execute_command"}}
	res, err := family.Invalid(call, "timeout %ds exceeds this gateway's maximum of %ds", 7200, 3600)
	if err != nil || !res.IsError {
		t.Fatalf("Invalid = %+v, %v; want an error result", res, err)
	}
	if call.Outcome.Status != audit.StatusInvalid {
		t.Errorf("status %q, want %q", call.Outcome.Status, audit.StatusInvalid)
	}
	const why = "timeout 7200s exceeds this gateway's maximum of 3600s"
	if got := rigouttest.Text(res); got != why {
		t.Errorf("text %q, want %q", got, why)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	r, ok := sc["refused"].(rigout.Refusal)
	if !ok || r.Kind != rigout.RefusedArgument || r.Why != why || !strings.Contains(r.Instead, "call execute_command again") {
		t.Errorf("structuredContent %#v, want an argument refusal saying %q", res.StructuredContent, why)
	}
}

func TestRan(t *testing.T) {
	res := exec.Result{ExitCode: 3, Signal: "", Unsandboxed: "no sandbox configured"}
	res.Stdout.Total, res.Stderr.Total = 5, 7
	var o rigout.Outcome
	family.Ran(&o, true, res)
	family.Ran(&o, true, res)
	if o.ExitCode == nil || *o.ExitCode != 3 || o.StdoutBytes != 10 || o.StderrBytes != 14 || o.Unsandboxed != "no sandbox configured" {
		t.Errorf("after two runs: %+v", o)
	}
	var remote rigout.Outcome
	family.Ran(&remote, false, res)
	if remote.Unsandboxed != "" {
		t.Errorf("an SSH run recorded unsandboxed: %q", remote.Unsandboxed)
	}
}

func TestWorkDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want, err string }{
		{"", wd, ""},
		{"/srv/work", "/srv/work", ""},
		{"work", "", `shell: WorkDir "work" is not absolute`},
	} {
		got, err := family.WorkDir("shell", c.dir)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("WorkDir(%q) = %q, %v; want %q, %q", c.dir, got, err, c.want, c.err)
		}
	}
}

func TestTimeouts(t *testing.T) {
	for _, c := range []struct {
		timeout, max, wantTimeout, wantMax time.Duration
		err                                string
	}{
		{0, 0, time.Minute, time.Hour, ""},
		{-1, -1, time.Minute, time.Hour, ""},
		{5 * time.Second, 0, 5 * time.Second, time.Hour, ""},
		{0, 30 * time.Second, time.Minute, 30 * time.Second, "docker: DefaultTimeout 1m0s exceeds MaxTimeout 30s"},
		{2 * time.Hour, 0, 2 * time.Hour, time.Hour, "docker: DefaultTimeout 2h0m0s exceeds MaxTimeout 1h0m0s"},
	} {
		timeout, max := c.timeout, c.max
		err := family.Timeouts("docker", &timeout, &max, time.Minute, time.Hour)
		if timeout != c.wantTimeout || max != c.wantMax || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("Timeouts(%v, %v) = %v, %v, %v; want %v, %v, %q", c.timeout, c.max, timeout, max, err, c.wantTimeout, c.wantMax, c.err)
		}
	}
}
