package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// sandboxCost is scenario 9: the same execute_command argv [true] over
// stdio, from a `rigout stdio` whose local commands run in the kernel
// sandbox (the default) and from one started with --unsafe-no-sandbox,
// interleaved call by call. The floor is the unsandboxed gateway, so the
// ratio is what the sandbox and the per-call cgroup cost.
func sandboxCost(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	n := pick(b, 200, 1000)
	on, err := b.rawStdioClient(ctx, filepath.Join(b.tmp, "sandbox-on"))
	if err != nil {
		return fmt.Errorf("rigout stdio: %w", err)
	}
	defer on.Close()
	off, err := b.rawStdioClient(ctx, filepath.Join(b.tmp, "sandbox-off"), "--unsafe-no-sandbox")
	if err != nil {
		return fmt.Errorf("rigout stdio --unsafe-no-sandbox: %w", err)
	}
	defer off.Close()
	argv := map[string]any{"argv": []string{"true"}}
	call := func(c rawClient) (time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		return c.callTool(cctx, "execute_command", argv)
	}
	for range pick(b, 20, 100) {
		if _, err := call(on); err != nil {
			return err
		}
		if _, err := call(off); err != nil {
			return err
		}
	}
	var sOn, sOff []float64
	b.logf("scenario 9: %d iterations", n)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		first, second := rawClient(on), rawClient(off)
		if i%2 == 1 {
			first, second = off, on
		}
		d1, err := call(first)
		if err != nil {
			return err
		}
		d2, err := call(second)
		if err != nil {
			return err
		}
		if i%2 == 1 {
			d1, d2 = d2, d1
		}
		sOn, sOff = append(sOn, ms(d1)), append(sOff, ms(d2))
	}
	b.res.AddSeries("9/sandbox-on", "ms", sOn)
	b.res.AddSeries("9/sandbox-off", "ms", sOff)
	b.res.AddRow(Row{Scenario: "9", Name: "stdio, argv [true], sandboxed (Landlock + cgroup per call), p50", Unit: "ms", Better: "lower",
		Stat: "median", Floor: "the same gateway with --unsafe-no-sandbox", Target: "≤ 1.1×", RigoutSeries: "9/sandbox-on", FloorSeries: "9/sandbox-off"})
	return nil
}
