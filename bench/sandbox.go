package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// baselineEnv names another rigout binary (say, built from main) for
// scenario 9 to measure in the same run, interleaved with this one, so
// that a change to the sandbox is compared before and after under the
// same load.
const baselineEnv = "RIGOUT_BENCH_SANDBOX_BASELINE"

// sandboxCost is scenario 9: the same execute_command argv [true] over
// stdio, from a `rigout stdio` whose local commands run in the kernel
// sandbox (the default) and from one started with --unsafe-no-sandbox,
// interleaved call by call. The floor is the unsandboxed gateway, so the
// ratio is what the sandbox costs (both have a cgroup per call). With
// RIGOUT_BENCH_SANDBOX_BASELINE set, a second pair from that binary is
// interleaved too and gets a row of its own.
func sandboxCost(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	type pair struct {
		name    string
		on, off rawClient
	}
	start := func(name, bin string) (*pair, func(), error) {
		on, err := b.rawStdioClientOf(ctx, bin, filepath.Join(b.tmp, name+"-sandbox-on"))
		if err != nil {
			return nil, nil, fmt.Errorf("%s stdio: %w", name, err)
		}
		off, err := b.rawStdioClientOf(ctx, bin, filepath.Join(b.tmp, name+"-sandbox-off"), "--unsafe-no-sandbox")
		if err != nil {
			on.Close()
			return nil, nil, fmt.Errorf("%s stdio --unsafe-no-sandbox: %w", name, err)
		}
		return &pair{name: name, on: on, off: off}, func() { on.Close(); off.Close() }, nil
	}
	p, stop, err := start("rigout", b.rigout)
	if err != nil {
		return err
	}
	defer stop()
	pairs := []*pair{p}
	if bin := os.Getenv(baselineEnv); bin != "" {
		bp, stop, err := start("baseline", bin)
		if err != nil {
			return err
		}
		defer stop()
		pairs = append(pairs, bp)
	}
	n := pick(b, 200, 1000)
	argv := map[string]any{"argv": []string{"true"}}
	call := func(c rawClient) (time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		return c.callTool(cctx, "execute_command", argv)
	}
	// Stop short of the budget on a slow machine rather than lose the
	// run: the gateways end with the scenario's context.
	timeUp := func() bool {
		dl, ok := ctx.Deadline()
		return ctx.Err() != nil || ok && time.Until(dl) < time.Second
	}
	for range pick(b, 20, 100) {
		if timeUp() {
			break
		}
		for _, p := range pairs {
			if _, err := call(p.on); err != nil {
				return err
			}
			if _, err := call(p.off); err != nil {
				return err
			}
		}
	}
	sOn, sOff := make([][]float64, len(pairs)), make([][]float64, len(pairs))
	b.logf("scenario 9: %d iterations", n)
	for i := 0; i < n && !timeUp(); i++ {
		for k := range pairs {
			// Rotate which pair goes first, and alternate on and off.
			j := (i + k) % len(pairs)
			p := pairs[j]
			first, second := p.on, p.off
			if i%2 == 1 {
				first, second = p.off, p.on
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
			sOn[j], sOff[j] = append(sOn[j], ms(d1)), append(sOff[j], ms(d2))
		}
	}
	if len(sOn[0]) < n {
		b.logf("scenario 9: %d of %d iterations within the budget", len(sOn[0]), n)
	}
	for j, p := range pairs {
		key, name := "9/sandbox", "stdio, argv [true], sandboxed (Landlock + cgroup per call), p50"
		if p.name != "rigout" {
			key, name = "9/"+p.name+"-sandbox", name+", "+baselineEnv+" binary, same run"
		}
		b.res.AddSeries(key+"-on", "ms", sOn[j])
		b.res.AddSeries(key+"-off", "ms", sOff[j])
		b.res.AddRow(Row{Scenario: "9", Name: name, Unit: "ms", Better: "lower",
			Stat: "median", Floor: "the same gateway with --unsafe-no-sandbox", Target: "≤ 1.1×", RigoutSeries: key + "-on", FloorSeries: key + "-off"})
	}
	return nil
}
