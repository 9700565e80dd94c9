package system_test

import (
	"context"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/system"
)

// BenchmarkMemory compares one system_monitoring call for memory (no
// sampling wait) on this machine and over a warm SSH connection to a real
// sshd, with the floor: reading /proc/meminfo directly.
//
//	go test -run XXX -bench Memory -benchtime 200x ./tools/system
func BenchmarkMemory(b *testing.B) {
	b.Run("proc-read", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadFile("/proc/meminfo"); err != nil {
				b.Fatal(err)
			}
		}
	})
	call := func(b *testing.B, rc *remote.RouterConfig, host string) {
		cfg := system.Config{}
		if rc != nil {
			c := *rc
			c.Local = &exec.Local{UnsafeNoSandbox: true}
			r, err := remote.NewRouter(c)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { r.Close() })
			cfg.Hosts = r
		}
		if cfg.Hosts == nil {
			cfg.Local = &exec.Local{UnsafeNoSandbox: true}
		}
		f, _ := system.New(cfg)
		c := rigouttest.Connect(b, rigouttest.New(b, rigout.Config{Tools: f.Tools()}))
		var req mcp.CallToolRequest
		req.Params.Name = "system_monitoring"
		req.Params.Arguments = map[string]any{"metrics": []any{"memory"}, "host": host}
		for b.Loop() {
			res, err := c.CallTool(context.Background(), req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	}
	b.Run("tool-local", func(b *testing.B) { call(b, nil, "local") })
	b.Run("tool-sshd", func(b *testing.B) {
		d := sshdtest.Start(b, sshdtest.Options{})
		call(b, &d.Router, "box")
	})
}
