package exec_test

import (
	"bytes"
	"context"
	"fmt"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
)

// Compare side by side in one run:
//
//	go test -run '^$' -bench . ./exec

func BenchmarkFloorTrue(b *testing.B) {
	for b.Loop() {
		if err := osexec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloorTrueCaptured(b *testing.B) {
	for b.Loop() {
		var out, errb bytes.Buffer
		c := osexec.Command("true")
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLocalArgvTrue(b *testing.B) {
	var l exec.Local
	ctx := context.Background()
	for b.Loop() {
		if _, err := l.Run(ctx, exec.Command{Argv: []string{"true"}, Timeout: 30 * time.Second}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLocalShellTrue(b *testing.B) {
	var l exec.Local
	ctx := context.Background()
	for b.Loop() {
		if _, err := l.Run(ctx, exec.Command{Shell: "true", Timeout: 30 * time.Second}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLocalSandbox measures what the kernel sandbox and the call
// cgroup add to one local call of `true`. Compare sandbox=on with
// sandbox=off (both with a cgroup per call, the default), and
// cgroup=off with sandbox=off for the cost of tracking:
//
//	go test -run '^$' -bench LocalSandbox -count 5 ./exec
//
// On a shared machine, BenchmarkLocalSandboxPaired's ratio is steadier.
func BenchmarkLocalSandbox(b *testing.B) {
	sb := benchSandbox(b)
	for _, bb := range []struct {
		name string
		l    *exec.Local
	}{
		{"sandbox=off", &exec.Local{}},
		{"sandbox=on", &exec.Local{Sandbox: sb}},
		{"sandbox=off,cgroup=off", &exec.Local{LeaveDescendants: true}},
		{"sandbox=on,cgroup=off", &exec.Local{Sandbox: sb, LeaveDescendants: true}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := bb.l.Run(ctx, exec.Command{Argv: []string{"true"}, Timeout: 30 * time.Second}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLocalSandboxPaired runs `true` sandboxed and unsandboxed (both
// with a cgroup per call) alternately, each op one of each, so that both
// see the same machine load, and reports the median of each and their
// ratio (the target is ≤ 1.1):
//
//	go test -run '^$' -bench LocalSandboxPaired -benchtime 400x ./exec
func BenchmarkLocalSandboxPaired(b *testing.B) {
	sb := benchSandbox(b)
	on, off := &exec.Local{Sandbox: sb}, &exec.Local{}
	ctx := context.Background()
	run := func(l *exec.Local) time.Duration {
		t0 := time.Now()
		res, err := l.Run(ctx, exec.Command{Argv: []string{"true"}, Timeout: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if res.Sandboxed != (l == on) {
			b.Fatalf("Sandboxed %v with sandbox %v", res.Sandboxed, l == on)
		}
		return time.Since(t0)
	}
	var dOn, dOff []time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			dOn, dOff = append(dOn, run(on)), append(dOff, run(off))
		} else {
			dOff, dOn = append(dOff, run(off)), append(dOn, run(on))
		}
		i++
	}
	mOn, mOff := median(dOn), median(dOff)
	b.ReportMetric(float64(mOn.Microseconds()), "µs-on")
	b.ReportMetric(float64(mOff.Microseconds()), "µs-off")
	b.ReportMetric(float64(mOn)/float64(mOff), "ratio")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchSandbox returns a sandbox for benchmarks, or skips without
// Landlock.
func benchSandbox(b *testing.B) *exec.Sandbox {
	b.Helper()
	// Paths outside /tmp, which other processes change all the time: a
	// change to a directory the sandbox enumerated rebuilds it (~1ms).
	// Nothing is written; hiding /var/lib only affects `true`.
	sb, err := exec.NewSandbox(exec.SandboxConfig{
		Protected: []string{"/usr", "/etc"},
		Critical:  []string{"/etc/passwd"},
		Hidden:    []string{"/var/lib"},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sb.Close() })
	if st := sb.Status(); !st.Enforced {
		b.Skip("no Landlock: " + st.Reason)
	}
	return sb
}

// BenchmarkLocalViewPaired runs `true` in a principal's view (spawner
// warm), in the Landlock sandbox alone and unsandboxed, interleaved, and
// reports the medians and the ratios to unsandboxed.
func BenchmarkLocalViewPaired(b *testing.B) {
	ll := benchSandbox(b)
	dir := b.TempDir()
	vsb, err := exec.NewSandbox(exec.SandboxConfig{
		Protected: []string{"/usr", "/etc"},
		Critical:  []string{"/etc/passwd"},
		Views:     &exec.ViewConfig{TmpDir: filepath.Join(dir, "tmp"), Hidden: []string{"/var/lib"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { vsb.Close() })
	if st := vsb.Status(); !st.Views {
		b.Skip("SKIPPED: no per-principal views: " + st.ViewsReason)
	}
	view, land, off := &exec.Local{Sandbox: vsb}, &exec.Local{Sandbox: ll}, &exec.Local{}
	ctx := context.Background()
	run := func(l *exec.Local) time.Duration {
		t0 := time.Now()
		res, err := l.Run(ctx, exec.Command{Argv: []string{"true"}, Dir: "/", Timeout: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if res.ExitCode != 0 {
			b.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Data)
		}
		return time.Since(t0)
	}
	run(view) // the principal's first call starts its spawner
	var dView, dLand, dOff []time.Duration
	for b.Loop() {
		dView = append(dView, run(view))
		dLand = append(dLand, run(land))
		dOff = append(dOff, run(off))
	}
	mView, mLand, mOff := median(dView), median(dLand), median(dOff)
	b.ReportMetric(float64(mView.Microseconds()), "µs-view")
	b.ReportMetric(float64(mLand.Microseconds()), "µs-landlock")
	b.ReportMetric(float64(mOff.Microseconds()), "µs-off")
	b.ReportMetric(float64(mView)/float64(mOff), "view/off")
	b.ReportMetric(float64(mLand)/float64(mOff), "landlock/off")
}

// BenchmarkViewFirstCall measures a new principal's first command: its
// spawner's start and the building of its view, then the command.
func BenchmarkViewFirstCall(b *testing.B) {
	dir := b.TempDir()
	vsb, err := exec.NewSandbox(exec.SandboxConfig{Views: &exec.ViewConfig{TmpDir: filepath.Join(dir, "tmp"), MaxPrincipals: 1,
		Principal: func(ctx context.Context) exec.Principal { return exec.Principal{Name: ctx.Value(benchKey{}).(string)} }}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { vsb.Close() })
	if st := vsb.Status(); !st.Views {
		b.Skip("SKIPPED: no per-principal views: " + st.ViewsReason)
	}
	l := &exec.Local{Sandbox: vsb}
	i := 0
	for b.Loop() {
		i++
		ctx := context.WithValue(context.Background(), benchKey{}, fmt.Sprint("p", i))
		if _, err := l.Run(ctx, exec.Command{Argv: []string{"true"}, Dir: "/"}); err != nil {
			b.Fatal(err)
		}
	}
}

type benchKey struct{}
