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
// sandbox as by default (each principal's view of the machine with
// Landlock and seccomp beneath), from one started with --unsafe-no-views
// (Landlock alone) and from one started with --unsafe-no-sandbox,
// interleaved call by call. The floor is the unsandboxed gateway, so the
// ratios are what each sandbox costs (all have a cgroup per call, or in a
// view a PID namespace). With RIGOUT_BENCH_SANDBOX_BASELINE set, the same
// three from that binary are interleaved too and get rows of their own.
func sandboxCost(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	type pair struct {
		name          string
		on, land, off rawClient
	}
	start := func(name, bin string) (*pair, func(), error) {
		on, err := b.rawStdioClientOf(ctx, bin, filepath.Join(b.tmp, name+"-sandbox-on"))
		if err != nil {
			return nil, nil, fmt.Errorf("%s stdio: %w", name, err)
		}
		land, err := b.rawStdioClientOf(ctx, bin, filepath.Join(b.tmp, name+"-sandbox-landlock"), "--unsafe-no-views")
		if err != nil {
			on.Close()
			return nil, nil, fmt.Errorf("%s stdio --unsafe-no-views: %w", name, err)
		}
		off, err := b.rawStdioClientOf(ctx, bin, filepath.Join(b.tmp, name+"-sandbox-off"), "--unsafe-no-sandbox")
		if err != nil {
			on.Close()
			land.Close()
			return nil, nil, fmt.Errorf("%s stdio --unsafe-no-sandbox: %w", name, err)
		}
		return &pair{name: name, on: on, land: land, off: off}, func() { on.Close(); land.Close(); off.Close() }, nil
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
			for _, c := range []rawClient{p.on, p.land, p.off} {
				if _, err := call(c); err != nil {
					return err
				}
			}
		}
	}
	sOn, sLand, sOff := make([][]float64, len(pairs)), make([][]float64, len(pairs)), make([][]float64, len(pairs))
	b.logf("scenario 9: %d iterations", n)
	for i := 0; i < n && !timeUp(); i++ {
		for k := range pairs {
			// Rotate which triple goes first, and the order within it.
			j := (i + k) % len(pairs)
			p := pairs[j]
			clients := []rawClient{p.on, p.land, p.off}
			out := []*[][]float64{&sOn, &sLand, &sOff}
			for r := range clients {
				m := (r + i) % len(clients)
				d, err := call(clients[m])
				if err != nil {
					return err
				}
				(*out[m])[j] = append((*out[m])[j], ms(d))
			}
		}
	}
	if len(sOn[0]) < n {
		b.logf("scenario 9: %d of %d iterations within the budget", len(sOn[0]), n)
	}
	for j, p := range pairs {
		key, suffix := "9/sandbox", ""
		if p.name != "rigout" {
			key, suffix = "9/"+p.name+"-sandbox", ", "+baselineEnv+" binary, same run"
		}
		b.res.AddSeries(key+"-on", "ms", sOn[j])
		b.res.AddSeries(key+"-landlock", "ms", sLand[j])
		b.res.AddSeries(key+"-off", "ms", sOff[j])
		b.res.AddRow(Row{Scenario: "9", Name: "stdio, argv [true], sandboxed as by default (the principal's view, Landlock, seccomp), p50" + suffix, Unit: "ms", Better: "lower",
			Stat: "median", Floor: "the same gateway with --unsafe-no-sandbox", Target: "≤ 1.1×", RigoutSeries: key + "-on", FloorSeries: key + "-off"})
		b.res.AddRow(Row{Scenario: "9", Name: "stdio, argv [true], Landlock alone (--unsafe-no-views) + cgroup per call, p50" + suffix, Unit: "ms", Better: "lower",
			Stat: "median", Floor: "the same gateway with --unsafe-no-sandbox", RigoutSeries: key + "-landlock", FloorSeries: key + "-off"})
	}
	return nil
}
