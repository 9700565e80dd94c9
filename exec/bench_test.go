package exec_test

import (
	"bytes"
	"context"
	osexec "os/exec"
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
func BenchmarkLocalSandbox(b *testing.B) {
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
