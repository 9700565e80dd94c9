package rigout_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/docker"
	"github.com/rigout/rigout/tools/packages"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/tools/system"
)

// TestFamiliesRefuseToRunUnsandboxed: a family or session manager with
// no local runner, or a Local without a Sandbox (directly or as its
// Router's), refuses at construction with exec.ErrNoSandbox, naming the
// fix; a Sandbox, UnsafeNoSandbox or a Router that does not run locally
// is accepted.
func TestFamiliesRefuseToRunUnsandboxed(t *testing.T) {
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	router := func(local exec.Runner) *remote.Router {
		r, err := remote.NewRouter(remote.RouterConfig{Local: local, HostKeyPolicy: remote.HostKeyStrict})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	unsafe := &exec.Local{UnsafeNoSandbox: true}
	type build func(local exec.Runner, r exec.Hosts) error
	families := map[string]build{
		"shell": func(l exec.Runner, r exec.Hosts) error {
			_, err := shell.New(shell.Config{Local: l, Hosts: r})
			return err
		},
		"docker": func(l exec.Runner, r exec.Hosts) error {
			_, err := docker.New(docker.Config{Local: l, Hosts: r})
			return err
		},
		"packages": func(l exec.Runner, r exec.Hosts) error {
			_, err := packages.New(packages.Config{Local: l, Hosts: r})
			return err
		},
		"system": func(l exec.Runner, r exec.Hosts) error {
			_, err := system.New(system.Config{Local: l, Hosts: r})
			return err
		},
		"sessions": func(l exec.Runner, r exec.Hosts) error {
			local, _ := l.(*exec.Local)
			m, err := sessions.New(sessions.Config{Local: local, SpoolDir: t.TempDir()})
			if err == nil {
				m.Close()
			}
			return err
		},
	}
	tests := []struct {
		name    string
		local   exec.Runner
		router  func() *remote.Router
		wantErr error
	}{
		{name: "zero config", wantErr: exec.ErrNoSandbox},
		{name: "Local without a sandbox", local: &exec.Local{}, wantErr: exec.ErrNoSandbox},
		{name: "Router whose Local has no sandbox", router: func() *remote.Router { return router(&exec.Local{}) }, wantErr: exec.ErrNoSandbox},
		{name: "Local with a sandbox", local: &exec.Local{Sandbox: sb}},
		{name: "Local with UnsafeNoSandbox", local: unsafe},
		{name: "Router with a sandboxed Local", router: func() *remote.Router { return router(&exec.Local{Sandbox: sb}) }},
		{name: "Router without a Local", router: func() *remote.Router { return router(nil) }},
	}
	for _, tt := range tests {
		for name, build := range families {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				var r exec.Hosts // nil, not a nil *remote.Router
				if tt.router != nil {
					if name == "sessions" {
						t.Skip("a Manager takes no Router")
					}
					r = tt.router()
				}
				err := build(tt.local, r)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("New: %v, want %v", err, tt.wantErr)
				}
				if err != nil && (!strings.Contains(err.Error(), "UnsafeNoSandbox") || !strings.Contains(err.Error(), "Sandbox (exec.NewSandbox")) {
					t.Errorf("the error does not name the fix: %v", err)
				}
			})
		}
	}
}

// TestUnsafeNoSandboxRuns: the explicit opt-in runs commands, unconfined,
// and says so in the result.
func TestUnsafeNoSandboxRuns(t *testing.T) {
	local := &exec.Local{UnsafeNoSandbox: true}
	sh, err := shell.New(shell.Config{Local: local})
	if err != nil {
		t.Fatal(err)
	}
	c := rigouttest.Connect(t, rigouttest.New(t, rigout.Config{Tools: sh.Tools()}))
	res := rigouttest.Call(t, c, "execute_command", map[string]any{"argv": []string{"echo", "ran-unconfined"}})
	if res.IsError || !strings.Contains(rigouttest.Text(res), "ran-unconfined") {
		t.Errorf("execute_command with UnsafeNoSandbox: %q", rigouttest.Text(res))
	}
	m, err := sessions.New(sessions.Config{Local: local, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	p, err := m.Start(context.Background(), "alice", exec.Command{Argv: []string{"echo", "bg-unconfined"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Wait(context.Background())
	if err != nil || !strings.Contains(string(r.Stdout.Data), "bg-unconfined") || r.Sandboxed {
		t.Errorf("a Manager's process with UnsafeNoSandbox: %+v, %v", r, err)
	}
}
