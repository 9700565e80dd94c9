package sessions_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/sessions"
)

// BenchmarkTerminalTrue compares `true` in a warm terminal session with a
// one-shot run of the same command, locally (exec.Local.Run: fork/exec of
// bash -c) and over SSH to OpenSSH sshd on loopback (a new channel on the
// router's warm pooled connection per call). Compare the pairs as ratios.
func BenchmarkTerminalTrue(b *testing.B) {
	ctx := context.Background()
	local := &exec.Local{UnsafeNoSandbox: true}
	b.Run("local/session", func(b *testing.B) {
		m := benchManager(b, local)
		term, err := m.OpenTerminal(ctx, "bench", sessions.TerminalOptions{})
		if err != nil {
			b.Fatal(err)
		}
		benchExec(b, term)
	})
	b.Run("local/one-shot", func(b *testing.B) {
		for b.Loop() {
			if res, err := local.Run(ctx, exec.Command{Shell: "true"}); err != nil || res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		}
	})
	e := sshdtest.Start(b, sshdtest.Options{})
	r, err := remote.NewRouter(e.Router)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	tg, err := r.Resolve(ctx, sshdtest.Host, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ssh/session", func(b *testing.B) {
		m := benchManager(b, local)
		term, err := m.OpenTerminal(ctx, "bench", sessions.TerminalOptions{SSH: tg.Runner.(*remote.SSH)})
		if err != nil {
			b.Fatal(err)
		}
		benchExec(b, term)
	})
	b.Run("ssh/one-shot", func(b *testing.B) {
		if _, err := tg.Runner.Run(ctx, exec.Command{Shell: "true"}); err != nil { // warm the connection
			b.Fatal(err)
		}
		for b.Loop() {
			if res, err := tg.Runner.Run(ctx, exec.Command{Shell: "true"}); err != nil || res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		}
	})
}

func benchManager(b *testing.B, l *exec.Local) *sessions.Manager {
	m, err := sessions.New(sessions.Config{Local: l, SpoolDir: b.TempDir(), MaxTerminals: 200, MaxTerminalsPerPrincipal: 200})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

func benchExec(b *testing.B, term *sessions.Terminal) {
	ctx := context.Background()
	for b.Loop() {
		r, err := term.Exec(ctx, sessions.ExecRequest{Command: "true", Timeout: 10 * time.Second})
		if err != nil || !r.Done || r.ExitCode != 0 {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkTerminalIdleMemory opens 50 local sessions and reports what
// each costs the gateway while idle (Go heap and goroutine stacks,
// measured after a GC), beside the shell's own resident memory.
func BenchmarkTerminalIdleMemory(b *testing.B) {
	const n = 50
	ctx := context.Background()
	for b.Loop() {
		m := benchManager(b, &exec.Local{UnsafeNoSandbox: true})
		warm, err := m.OpenTerminal(ctx, "bench", sessions.TerminalOptions{})
		if err != nil {
			b.Fatal(err)
		}
		before := goMemory()
		terms := make([]*sessions.Terminal, n)
		for i := range terms {
			if terms[i], err = m.OpenTerminal(ctx, "bench", sessions.TerminalOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		after := goMemory()
		var rss int64
		for _, t := range terms {
			rss += vmRSS(t.Info().Pid)
		}
		b.ReportMetric(float64(after-before)/n, "gateway-B/session")
		b.ReportMetric(float64(rss)/n, "shell-RSS-B/session")
		warm.Close()
		m.Close()
	}
}

// goMemory is the Go heap in use plus goroutine stacks, after a GC.
func goMemory() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse + ms.StackInuse)
}

// vmRSS is pid's resident memory, in bytes.
func vmRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
