package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
)

// spoolThroughput is scenario 10: bytes per second a background process's
// stdout is spooled to its file by sessions.Manager (a process writing
// 32 / 256 MiB of zeros with head -c, every byte kept in the 0600 spool
// file), against the floor of the same bytes piped through cat into a file
// by sh. Rounds alternate the two, rotating the order.
func spoolThroughput(ctx context.Context, b *bench) error {
	size := int64(pick(b, 32<<20, 256<<20))
	rounds := pick(b, 3, 7)
	dir := filepath.Join(b.tmp, "spool10")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true}, SpoolDir: dir, SpoolMax: size, SpoolTotal: 2 * size})
	if err != nil {
		return err
	}
	defer m.Close()
	produce := fmt.Sprintf("head -c %d /dev/zero", size)
	out := filepath.Join(dir, "cat.out")

	spool := func() (float64, error) {
		start := time.Now()
		p, err := m.Start(ctx, "bench", exec.Command{Shell: produce})
		if err != nil {
			return 0, err
		}
		if _, err := p.Wait(ctx); err != nil {
			return 0, err
		}
		el := time.Since(start)
		in := p.Info()
		if in.StdoutBytes != size {
			return 0, fmt.Errorf("spooled %d bytes, want %d", in.StdoutBytes, size)
		}
		if err := m.Forget("bench", p.ID()); err != nil {
			return 0, err
		}
		return float64(size) / el.Seconds() / (1 << 20), nil
	}
	cat := func() (float64, error) {
		start := time.Now()
		if err := osexec.CommandContext(ctx, "sh", "-c", produce+" | cat > "+out).Run(); err != nil {
			return 0, err
		}
		el := time.Since(start)
		if fi, err := os.Stat(out); err != nil || fi.Size() != size {
			return 0, fmt.Errorf("cat wrote %v (%v)", fi, err)
		}
		return float64(size) / el.Seconds() / (1 << 20), nil
	}
	sides := []struct {
		key string
		f   func() (float64, error)
	}{{"10/spool", spool}, {"10/cat", cat}}
	samples := map[string][]float64{}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		for i := range sides {
			s := sides[(i+r)%len(sides)]
			v, err := s.f()
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				return fmt.Errorf("%s: %w", s.key, err)
			}
			samples[s.key] = append(samples[s.key], v)
		}
	}
	n := min(len(samples["10/spool"]), len(samples["10/cat"]))
	if n == 0 {
		return errors.New("time ran out before one round completed")
	}
	for k, v := range samples {
		b.res.AddSeries(k, "MiB/s", v[:n])
	}
	b.res.AddRow(Row{Scenario: "10", Name: fmt.Sprintf("background process stdout spooled by sessions.Manager, %d MiB", size>>20),
		Unit: "MiB/s", Better: "higher", Stat: "median", Floor: "the same bytes through `cat > file`",
		RigoutSeries: "10/spool", FloorSeries: "10/cat"})
	return nil
}
