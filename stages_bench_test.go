package rigout_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/tools/shell"
)

// BenchmarkExecuteStages measures, side by side in one run, each stage an
// audited local execute_command goes through — the policy's check, one
// committed ledger row (synchronous=FULL), starting `true` (argv, bash -c,
// and the direct exec of a simple command line), rendering the result's
// JSON — and the whole call in process: read-only (one done row), and with
// an environment (not read-only: an intent row before and a done row
// after). Compare the whole with the sum of its stages
// (BenchmarkGatewayNoop is the chain alone).
func BenchmarkExecuteStages(b *testing.B) {
	ctx := context.Background()
	b.Run("policy", func(b *testing.B) {
		g, err := gate.New(gate.Config{})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if d := g.Judge(gate.Command{Shell: "true", Dir: "/tmp"}); !d.Allowed {
				b.Fatal(d)
			}
		}
	})
	b.Run("commit-row", func(b *testing.B) {
		l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "audit.db")})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		e := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseDone, CallID: "c", Tool: "execute_command", Status: audit.StatusOK}
		for b.Loop() {
			if err := l.Record(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
	})
	local := &exec.Local{UnsafeNoSandbox: true}
	for name, cmd := range map[string]exec.Command{
		"exec-argv":   {Argv: []string{"true"}},
		"exec-bash":   {Shell: "true"},
		"exec-direct": {Shell: "true", Direct: []string{"true"}},
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if r, err := local.Run(ctx, cmd); err != nil || r.ExitCode != 0 {
					b.Fatal(err, r.ExitCode)
				}
			}
		})
	}
	b.Run("json", func(b *testing.B) {
		res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("$ true\nhost: local (via local)\nexit code: 0 (1ms)\n(no output)\n")},
			StructuredContent: map[string]any{"host": "local", "route": "local", "exit_code": 0, "stdout": "", "stderr": ""}}
		for b.Loop() {
			if _, err := json.Marshal(res); err != nil {
				b.Fatal(err)
			}
		}
	})
	for name, args := range map[string]map[string]any{
		"call-readonly-argv":    {"argv": []string{"true"}},
		"call-readonly-command": {"command": "true"},
		"call-two-rows-argv":    {"argv": []string{"true"}, "environment": map[string]string{"X": "1"}},
	} {
		b.Run(name, func(b *testing.B) {
			sh, err := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}})
			if err != nil {
				b.Fatal(err)
			}
			l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "audit.db")})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			gw, err := rigout.New(rigout.Config{Tools: sh.Tools(), Audit: l})
			if err != nil {
				b.Fatal(err)
			}
			defer gw.Close()
			c := connect(b, gw)
			var req mcp.CallToolRequest
			req.Params.Name = "execute_command"
			req.Params.Arguments = args
			for b.Loop() {
				if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
