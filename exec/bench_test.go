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
