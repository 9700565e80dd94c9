package shell_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/shell"
)

// BenchmarkSSHStages measures, interleaved in one run against a real
// OpenSSH sshd on loopback, each layer a warm execute_command on an SSH
// host goes through, running `true`, and reports the median of each in
// µs (and each one's ratio to the router's warm call):
//
//   - router: remote.Router.Resolve and the target's Run, a new channel on
//     the pooled connection (bench scenario 7's "remote.Router warm call");
//   - manager: the same command through sessions.Manager.RunOn, as
//     execute_command runs it when the gateway can hand long commands off
//     (`rigout serve` always can);
//   - call: execute_command {host, argv} through the gateway in process,
//     no ledger, with the manager;
//   - call-audit: the same with a SQLite ledger at its default durability
//     (`true` on a host is read-only: one done row).
//
// Over HTTP a call costs what BenchmarkHTTPCall's noop shows on top.
//
//	go test -run '^$' -bench SSHStages -benchtime 300x ./tools/shell
func BenchmarkSSHStages(b *testing.B) {
	ctx := context.Background()
	d := sshdtest.Start(b, sshdtest.Options{})
	rc := d.Router
	local := &exec.Local{UnsafeNoSandbox: true}
	rc.Local = local
	r, err := remote.NewRouter(rc)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	procs, err := sessions.New(sessions.Config{Local: local, SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { procs.Close() })
	cmd := exec.Command{Argv: []string{"true"}, Timeout: 30 * time.Second}
	resolve := func() *remote.SSH {
		t, err := r.Resolve(ctx, sshdtest.Host, "bench")
		if err != nil {
			b.Fatal(err)
		}
		s, ok := t.Runner.(*remote.SSH)
		if !ok {
			b.Fatalf("route %s is not SSH", t.Route)
		}
		return s
	}
	gateway := func(audit bool) *client.Client {
		sh, err := shell.New(shell.Config{Local: local, Hosts: r, Processes: procs, WorkDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		cfg := rigout.Config{Tools: sh.Tools()}
		if audit {
			l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "audit.db")})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { l.Close() })
			cfg.Audit = l
		}
		return rigouttest.Connect(b, rigouttest.New(b, cfg))
	}
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"host": sshdtest.Host, "argv": []string{"true"}}
	call := func(c *client.Client) func() error {
		return func() error {
			res, err := c.CallTool(ctx, req)
			if err == nil && res.IsError {
				err = fmt.Errorf("error result: %s", rigouttest.Text(res))
			}
			return err
		}
	}
	stages := []struct {
		name string
		run  func() error
	}{
		{"router", func() error {
			res, err := resolve().Run(ctx, cmd)
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d", res.ExitCode)
			}
			return err
		}},
		{"manager", func() error {
			res, p, err := procs.RunOn(ctx, "bench", sessions.Remote("ssh", resolve()), cmd, 20*time.Second)
			if err == nil && (p != nil || res.ExitCode != 0) {
				err = fmt.Errorf("exit %d, handed off %v", res.ExitCode, p != nil)
			}
			return err
		}},
		{"call", call(gateway(false))},
		{"call-audit", call(gateway(true))},
	}
	for range 5 {
		for _, s := range stages {
			if err := s.run(); err != nil {
				b.Fatalf("warm-up %s: %v", s.name, err)
			}
		}
	}
	times := make([][]time.Duration, len(stages))
	i := 0
	for b.Loop() {
		for k := range stages {
			j := (i + k) % len(stages)
			t0 := time.Now()
			if err := stages[j].run(); err != nil {
				b.Fatalf("%s: %v", stages[j].name, err)
			}
			times[j] = append(times[j], time.Since(t0))
		}
		i++
	}
	med := func(ds []time.Duration) time.Duration {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	base := med(times[0])
	for j, s := range stages {
		m := med(times[j])
		b.ReportMetric(float64(m.Microseconds()), "µs-"+s.name)
		if j > 0 {
			b.ReportMetric(float64(m)/float64(base), "x-"+s.name)
		}
	}
}
