package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// BenchmarkStdioStages splits a local `execute_command argv ["true"]`
// through the real binary over stdio into what each part adds, with every
// side measured in one loop, one call of each per iteration in a rotating
// order, so that the machine's load hits all of them alike:
//
//	go test -run '^$' -bench StdioStages -benchtime 500x ./cmd/rigout
//
// It reports the median of each side in µs: fork/exec of `true` from Go
// (the floor), one committed ledger row on the same disk (read-only
// calls commit one row; synchronous=FULL), the binary with
// --unsafe-no-sandbox, and the binary as it starts by default (Landlock and
// a cgroup per call); then the ratios the issue compares. "rest" is the
// unsandboxed call less the floor and the row: the transport, the chain,
// the policy, the process manager and the result.
func BenchmarkStdioStages(b *testing.B) {
	ctx := context.Background()
	sandboxed := startStdio(b)
	bare := startStdio(b, "--unsafe-no-sandbox")
	l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "audit.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"argv": []string{"true"}}
	call := func(s *server) func() {
		return func() {
			res, err := s.client.CallTool(ctx, req)
			if err != nil || res.IsError {
				b.Fatalf("%v %v", err, res)
			}
		}
	}
	row := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseDone, CallID: "c", Tool: "execute_command", Status: audit.StatusOK}
	sides := []struct {
		name string
		run  func()
		d    []time.Duration
	}{
		{name: "floor", run: func() {
			if err := osexec.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}},
		{name: "row", run: func() {
			if err := l.Record(ctx, row); err != nil {
				b.Fatal(err)
			}
		}},
		{name: "nosandbox", run: call(bare)},
		{name: "default", run: call(sandboxed)},
	}
	for range 20 { // warm up: lazy initialisation, pooled connections
		for _, s := range sides {
			s.run()
		}
	}
	cpu0s, cpu0b := procCPU(b, sandboxed.pid), procCPU(b, bare.pid)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		for k := range sides {
			s := &sides[(i+k)%len(sides)]
			t0 := time.Now()
			s.run()
			s.d = append(s.d, time.Since(t0))
		}
		i++
	}
	n := float64(len(sides[0].d))
	b.ReportMetric(float64((procCPU(b, sandboxed.pid)-cpu0s).Microseconds())/n, "cpu-µs-default")
	b.ReportMetric(float64((procCPU(b, bare.pid)-cpu0b).Microseconds())/n, "cpu-µs-nosandbox")
	med := map[string]float64{}
	for _, s := range sides {
		d := slices.Clone(s.d)
		slices.Sort(d)
		med[s.name] = float64(d[len(d)/2].Microseconds())
		b.ReportMetric(med[s.name], "µs-"+s.name)
	}
	b.ReportMetric(med["nosandbox"]-med["floor"]-med["row"], "µs-rest")
	b.ReportMetric(med["default"]/med["floor"], "default/floor")
	b.ReportMetric(med["nosandbox"]/med["floor"], "nosandbox/floor")
	b.ReportMetric(0, "ns/op")
}

// procCPU returns the CPU time the process pid has used itself (user and
// system, without its waited-for children), from /proc/PID/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
