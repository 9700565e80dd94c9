package sessions_test

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
)

// spoolBytes is what each spool benchmark's process writes to stdout.
const spoolBytes = 256 << 20

// BenchmarkSpool measures spool write throughput: a background process
// writing 256 MiB to stdout, every byte spooled to its file (bytes/s in
// MB/s), against the same bytes piped through cat into a file by the
// shell, and against exec.Local alone (read and capped, nothing spooled).
// Run them side by side and read the ratios:
//
//	go test -run '^$' -bench Spool -benchtime 5x ./sessions/
func BenchmarkSpool(b *testing.B) {
	produce := fmt.Sprintf("head -c %d /dev/zero", spoolBytes)
	b.Run("cat-to-file", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "out")
		b.SetBytes(spoolBytes)
		for b.Loop() {
			if err := osexec.Command("sh", "-c", produce+" | cat > "+out).Run(); err != nil {
				b.Fatal(err)
			}
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() != spoolBytes {
			b.Fatalf("cat wrote %v (%v)", fi, err)
		}
	})
	b.Run("exec-local-no-spool", func(b *testing.B) {
		l := &exec.Local{UnsafeNoSandbox: true}
		b.SetBytes(spoolBytes)
		for b.Loop() {
			res, err := l.Run(context.Background(), exec.Command{Shell: produce})
			if err != nil || res.Stdout.Total != spoolBytes {
				b.Fatalf("%v %d", err, res.Stdout.Total)
			}
		}
	})
	b.Run("sessions-spooled", func(b *testing.B) {
		m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true}, SpoolDir: b.TempDir(), SpoolMax: spoolBytes, SpoolTotal: 2 * spoolBytes})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		ctx := context.Background()
		b.SetBytes(spoolBytes)
		for b.Loop() {
			p, err := m.Start(ctx, "bench", exec.Command{Shell: produce})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Wait(ctx); err != nil {
				b.Fatal(err)
			}
			rr, err := p.Read(ctx, sessions.ReadRequest{Offset: spoolBytes - 10, Max: 10})
			if err != nil || rr.Info.StdoutBytes != spoolBytes || rr.Stdout.Skipped != 0 || len(rr.Stdout.Data) != 10 {
				b.Fatalf("spooled %+v %v", rr.Info, err)
			}
			if err := m.Forget("bench", p.ID()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
