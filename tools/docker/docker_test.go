package docker_test

import (
	"context"
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/fakecmd"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/docker"
)

func connect(t *testing.T, rc *remote.RouterConfig, p *auth.Principal) *client.Client {
	t.Helper()
	cfg := docker.Config{}
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
	f, err := docker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rigouttest.Connect(t, rigouttest.New(t, rigout.Config{Tools: f.Tools(), Principal: p}))
}

// fakeDocker puts a recording docker first on PATH (and only it, with
// only: nothing else is found).
func fakeDocker(t *testing.T, name, stdout string, only bool) *fakecmd.Dir {
	d := fakecmd.New(t)
	d.Add(t, name, stdout, 0)
	path := d.Path
	if !only {
		path += ":" + os.Getenv("PATH")
	}
	t.Setenv("PATH", path)
	return d
}

func TestArgv(t *testing.T) {
	fake := fakeDocker(t, "docker", `{"ID":"abc","Names":"web"}`+"\n", false)
	c := connect(t, nil, nil)
	ctxDir := t.TempDir()
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"list", map[string]any{"operation": "list"}, "docker ps --all --no-trunc --format {{json .}}"},
		{"action, as every other tool", map[string]any{"action": "list"}, "docker ps --all --no-trunc --format {{json .}}"},
		{"action and its alias agreeing", map[string]any{"action": "inspect", "operation": "inspect", "image": "alpine:3"}, "docker inspect -- alpine:3"},
		{"run", map[string]any{"operation": "run", "image": "alpine:3.20", "command": []any{"echo", "hi there"}}, "docker run --rm -- alpine:3.20 echo hi there"},
		{"run options", map[string]any{"operation": "run", "image": "registry.local:5000/team/app@sha256:" + strings.Repeat("a", 64), "detach": true, "interactive": true, "remove": false, "container_name": "web_1"},
			"docker run --detach --interactive --name web_1 -- registry.local:5000/team/app@sha256:" + strings.Repeat("a", 64)},
		{"run option-like command", map[string]any{"operation": "run", "image": "alpine", "command": []any{"ls", "--privileged", "-v", "/:/host"}}, "docker run --rm -- alpine ls --privileged -v /:/host"},
		{"exec", map[string]any{"operation": "exec", "container_name": "web", "command": []any{"ls", "-la", "$(id)"}}, "docker exec -- web ls -la $(id)"},
		{"exec interactive", map[string]any{"operation": "exec", "container_name": "web", "interactive": true, "command": []any{"cat"}}, "docker exec --interactive -- web cat"},
		{"stop", map[string]any{"operation": "stop", "container_name": "web"}, "docker stop -- web"},
		{"remove", map[string]any{"operation": "remove", "container_name": "web"}, "docker rm -- web"},
		{"pull", map[string]any{"operation": "pull", "image": "alpine"}, "docker pull -- alpine"},
		{"logs", map[string]any{"operation": "logs", "container_name": "web"}, "docker logs --tail 200 -- web"},
		{"logs tail", map[string]any{"operation": "logs", "container_name": "web", "tail": 5000}, "docker logs --tail 5000 -- web"},
		{"logs all", map[string]any{"operation": "logs", "container_name": "web", "tail": "all"}, "docker logs --tail all -- web"},
		{"inspect", map[string]any{"operation": "inspect", "container_name": "web"}, "docker inspect -- web"},
		{"inspect image", map[string]any{"operation": "inspect", "image": "alpine:3"}, "docker inspect -- alpine:3"},
		{"build", map[string]any{"operation": "build", "path": ctxDir, "image": "app:1"}, "docker build --tag app:1 -- " + ctxDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.Reset(t)
			res := rigouttest.Call(t, c, "docker_operations", tt.args)
			if res.IsError {
				t.Fatalf("error: %s", rigouttest.Text(res))
			}
			if got := fakecmd.Join(fake.Last(t)); got != tt.want {
				t.Errorf("argv\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	// action and operation that disagree, or neither: refused, nothing run.
	fake.Reset(t)
	for _, args := range []map[string]any{{"action": "list", "operation": "stop", "container_name": "web"}, {"image": "alpine"}} {
		if res := rigouttest.Call(t, c, "docker_operations", args); !res.IsError || !strings.Contains(rigouttest.Text(res), "action") {
			t.Errorf("%v: %s", args, rigouttest.Text(res))
		}
	}
	// list parses the JSON lines docker prints.
	sc := rigouttest.Structured(t, rigouttest.Call(t, c, "docker_operations", map[string]any{"operation": "list"}))
	if cs, _ := sc["containers"].([]any); len(cs) != 1 || sc["engine"] != "docker" {
		t.Errorf("list: %v", sc)
	}
}

// TestSmuggling: names that try to pass options or shell syntax are
// refused before anything runs — not even the engine probe.
func TestSmuggling(t *testing.T) {
	fake := fakeDocker(t, "docker", "", false)
	c := connect(t, nil, nil)
	bad := []map[string]any{
		{"operation": "stop", "container_name": "--privileged"},
		{"operation": "stop", "container_name": "-v /:/host"},
		{"operation": "stop", "container_name": "-v"},
		{"operation": "stop", "container_name": "$(id)"},
		{"operation": "stop", "container_name": "web;rm -rf /"},
		{"operation": "stop", "container_name": "web && id"},
		{"operation": "stop", "container_name": "web`id`"},
		{"operation": "stop", "container_name": "a b"},
		{"operation": "stop", "container_name": ".hidden"},
		{"operation": "stop", "container_name": "web\n--privileged"},
		{"operation": "logs", "container_name": "--follow"},
		{"operation": "exec", "container_name": "--privileged", "command": []any{"id"}},
		{"operation": "exec", "container_name": "web"},
		{"operation": "run", "image": "--privileged"},
		{"operation": "run", "image": "-v"},
		{"operation": "run", "image": "alpine;id"},
		{"operation": "run", "image": "alpine $(id)"},
		{"operation": "run", "image": "a//b"},
		{"operation": "run", "image": "../../x"},
		{"operation": "run", "image": "alpine", "container_name": "--network=host"},
		{"operation": "run"},
		{"operation": "pull", "image": "-q"},
		{"operation": "inspect", "container_name": "--format={{.}}"},
		{"operation": "build", "path": "-"},
		{"operation": "build", "path": "https://example.com/repo.git"},
		{"operation": "build", "path": "/tmp", "image": "--pull"},
		{"operation": "logs", "container_name": "web", "tail": 0},
		{"operation": "logs", "container_name": "web", "tail": 5001},
		{"operation": "logs", "container_name": "web", "tail": "ALL"},
		{"operation": "logs", "container_name": "web", "tail": 1.5},
	}
	for _, args := range bad {
		res := rigouttest.Call(t, c, "docker_operations", args)
		if !res.IsError {
			t.Errorf("%v: not refused: %s", args, rigouttest.Text(res))
		}
	}
	if calls := fake.Calls(t); len(calls) != 0 {
		t.Errorf("refused calls ran: %v", calls)
	}
}

// TestGate: the container's command passes the command gate.
func TestGate(t *testing.T) {
	fake := fakeDocker(t, "docker", "", false)
	c := connect(t, nil, nil)
	for _, args := range []map[string]any{
		{"operation": "exec", "container_name": "web", "command": []any{"rm", "-rf", "/"}},
		{"operation": "run", "image": "alpine", "command": []any{"sh", "-c", "rm -rf --no-preserve-root /"}},
	} {
		res := rigouttest.Call(t, c, "docker_operations", args)
		if !res.IsError || !strings.Contains(rigouttest.Text(res), "refused by policy rule") {
			t.Errorf("%v: %s", args, rigouttest.Text(res))
		}
	}
	if calls := fake.Calls(t); len(calls) != 0 {
		t.Errorf("refused calls ran: %v", calls)
	}
}

// TestPodman: a host with podman and no docker gets podman.
func TestPodman(t *testing.T) {
	fake := fakeDocker(t, "podman", "", true)
	c := connect(t, nil, nil)
	res := rigouttest.Call(t, c, "docker_operations", map[string]any{"operation": "pull", "image": "alpine"})
	if res.IsError {
		t.Fatal(rigouttest.Text(res))
	}
	if got := fakecmd.Join(fake.Last(t)); got != "podman pull -- alpine" {
		t.Errorf("argv %s", got)
	}
	// Remembered per host: no second probe.
	rigouttest.Call(t, c, "docker_operations", map[string]any{"operation": "list"})
	probes := 0
	for _, c := range fake.Calls(t) {
		if slices.Equal(c, []string{"podman", "--version"}) {
			probes++
		}
	}
	if probes != 1 {
		t.Errorf("%d probes: %v", probes, fake.Calls(t))
	}
	// Neither engine: a clear error.
	t.Setenv("PATH", t.TempDir())
	res = rigouttest.Call(t, connect(t, nil, nil), "docker_operations", map[string]any{"operation": "list"})
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "neither docker nor podman") {
		t.Errorf("no engine: %s", rigouttest.Text(res))
	}
}

// TestReadOnlyScope: a read-only token may list, log and inspect, not
// run or stop.
func TestReadOnlyScope(t *testing.T) {
	fake := fakeDocker(t, "docker", "", false)
	p := auth.Principal{Name: "reader", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}}
	c := connect(t, nil, &p)
	for _, op := range []string{"list", "logs", "inspect"} {
		if res := rigouttest.Call(t, c, "docker_operations", map[string]any{"operation": op, "container_name": "web"}); res.IsError {
			t.Errorf("%s: %s", op, rigouttest.Text(res))
		}
	}
	fake.Reset(t)
	for _, args := range []map[string]any{
		{"operation": "run", "image": "alpine"},
		{"operation": "stop", "container_name": "web"},
		{"operation": "exec", "container_name": "web", "command": []any{"id"}},
	} {
		if res := rigouttest.Call(t, c, "docker_operations", args); !res.IsError {
			t.Errorf("%v allowed for a read-only token", args)
		}
	}
	if calls := fake.Calls(t); len(calls) != 0 {
		t.Errorf("ran: %v", calls)
	}
}

// TestRoots: a token confined to file roots builds only inside them.
func TestRoots(t *testing.T) {
	fake := fakeDocker(t, "docker", "", false)
	root := t.TempDir()
	p := auth.Principal{Name: "confined", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, Roots: []string{root}}}
	c := connect(t, nil, &p)
	for _, args := range []map[string]any{
		{"operation": "build"},
		{"operation": "build", "path": "/etc"},
		{"operation": "build", "path": root + "/../.."},
		{"operation": "build", "path": "."},
	} {
		if res := rigouttest.Call(t, c, "docker_operations", args); !res.IsError {
			t.Errorf("%v allowed outside the roots", args)
		}
	}
	if calls := fake.Calls(t); len(calls) != 0 {
		t.Errorf("ran: %v", calls)
	}
	if res := rigouttest.Call(t, c, "docker_operations", map[string]any{"operation": "build", "path": root}); res.IsError {
		t.Errorf("inside the root: %s", rigouttest.Text(res))
	}
}

// TestOverSSH: the argv reaches a real sshd's host, where a recording
// docker is first on PATH.
func TestOverSSH(t *testing.T) {
	fake := fakecmd.New(t)
	fake.Add(t, "docker", "", 0)
	d := sshdtest.Start(t, sshdtest.Options{SetEnv: map[string]string{"PATH": fake.Path + ":/usr/bin:/bin"}})
	c := connect(t, &d.Router, nil)
	res := rigouttest.Call(t, c, "docker_operations", map[string]any{"operation": "logs", "container_name": "web", "tail": "all", "host": "box"})
	if res.IsError {
		t.Fatal(rigouttest.Text(res))
	}
	if got := fakecmd.Join(fake.Last(t)); got != "docker logs --tail all -- web" {
		t.Errorf("argv %s", got)
	}
	if sc := rigouttest.Structured(t, res); !strings.HasPrefix(sc["route"].(string), "ssh(box") {
		t.Errorf("route %v", sc["route"])
	}
}

// TestRealEngine runs against a real docker or podman when one is
// running; none runs on most CI machines, so it skips loudly unless
// RIGOUT_REQUIRE_DOCKER=1.
func TestRealEngine(t *testing.T) {
	engine := ""
	for _, e := range docker.Engines {
		if err := osexec.CommandContext(context.Background(), e, "info").Run(); err == nil {
			engine = e
			break
		}
	}
	if engine == "" {
		if os.Getenv("RIGOUT_REQUIRE_DOCKER") == "1" {
			t.Fatal("no docker or podman engine runs and RIGOUT_REQUIRE_DOCKER=1")
		}
		t.Skip("SKIPPING REAL ENGINE TEST: no docker or podman engine runs here (`docker info` fails); set RIGOUT_REQUIRE_DOCKER=1 to make this a failure")
	}
	c := connect(t, nil, nil)
	res := rigouttest.Call(t, c, "docker_operations", map[string]any{"operation": "list"})
	if res.IsError {
		t.Fatalf("list: %s", rigouttest.Text(res))
	}
	res = rigouttest.Call(t, c, "docker_operations", map[string]any{"operation": "inspect", "container_name": "rigout-test-no-such-container"})
	if !res.IsError {
		t.Errorf("inspect of a missing container: %s", rigouttest.Text(res))
	}
}
