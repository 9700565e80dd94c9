package main

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"time"
)

// localLatency is scenario 2: sequential execute_command calls of `true`,
// with argv (no shell) and with command (bash -c), over stdio and over
// HTTP with auth and audit on, against fork/exec of the same programs from
// Go. Each iteration makes one call of each kind and one fork/exec of each
// floor, in an order that reverses every iteration. The calls go through
// rawClient, not mcp-go's client, whose own cost would be charged to rigout.
func localLatency(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	n := pick(b, 200, 1000)
	warm := pick(b, 20, 100)

	state := filepath.Join(b.tmp, "latency-state")
	stdio, err := b.rawStdioClient(ctx, state)
	if err != nil {
		return fmt.Errorf("rigout stdio: %w", err)
	}
	defer stdio.Close()
	if err := latencyLoop(ctx, b, "stdio", stdio, n, warm); err != nil {
		return err
	}
	stdio.Close()

	srv, err := b.startServe(ctx, "rigout serve", true)
	if err != nil {
		return err
	}
	defer srv.stop()
	c, err := rawHTTPClient(ctx, srv.url, srv.token)
	if err != nil {
		return fmt.Errorf("rigout serve: %w", err)
	}
	defer c.Close()
	return latencyLoop(ctx, b, "http", c, n, warm)
}

// latencyLoop runs scenario 2 over one transport.
func latencyLoop(ctx context.Context, b *bench, transport string, c rawClient, n, warm int) error {
	argv := map[string]any{"argv": []string{"true"}}
	shell := map[string]any{"command": "true"}
	call := func(args map[string]any) (time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		return c.callTool(cctx, "execute_command", args)
	}
	for range warm {
		if _, err := call(argv); err != nil {
			return fmt.Errorf("%s: %w", transport, err)
		}
		if _, err := call(shell); err != nil {
			return fmt.Errorf("%s: %w", transport, err)
		}
	}
	type step struct {
		key string
		run func() (time.Duration, error)
	}
	steps := []step{
		{"rigout-argv", func() (time.Duration, error) { return call(argv) }},
		{"floor-true", func() (time.Duration, error) { return forkExec("true") }},
		{"rigout-command", func() (time.Duration, error) { return call(shell) }},
		{"floor-bash", func() (time.Duration, error) { return forkExec("bash", "-c", "true") }},
		{"floor-sh", func() (time.Duration, error) { return forkExec("sh", "-c", "true") }},
	}
	samples := map[string][]float64{}
	reversed := slices.Clone(steps)
	slices.Reverse(reversed)
	b.logf("scenario 2, %s: %d iterations of %d steps", transport, n, len(steps))
	for i := 0; i < n && ctx.Err() == nil; i++ {
		order := steps
		if i%2 == 1 {
			order = reversed
		}
		for _, s := range order {
			d, err := s.run()
			if err != nil {
				return fmt.Errorf("%s %s: %w", transport, s.key, err)
			}
			samples[s.key] = append(samples[s.key], ms(d))
		}
	}
	if got := len(samples["rigout-argv"]); got < n {
		b.logf("scenario 2, %s: time ran out after %d of %d iterations", transport, got, n)
	}
	key := func(s string) string { return "2/" + transport + "/" + s }
	for k, v := range samples {
		b.res.AddSeries(key(k), "ms", v)
	}
	what := "stdio"
	if transport == "http" {
		what = "HTTP (auth + audit)"
	}
	for _, stat := range []string{"median", "p95", "p99"} {
		target := ""
		if stat == "median" {
			target = "< 1.3×"
		}
		b.res.AddRow(Row{Scenario: "2", Name: fmt.Sprintf("%s, argv [true], %s", what, statLabel(stat)), Unit: "ms", Better: "lower",
			Stat: stat, Floor: "fork/exec `true`", Target: target, RigoutSeries: key("rigout-argv"), FloorSeries: key("floor-true")})
	}
	for _, stat := range []string{"median", "p95", "p99"} {
		b.res.AddRow(Row{Scenario: "2", Name: fmt.Sprintf("%s, command \"true\", %s", what, statLabel(stat)), Unit: "ms", Better: "lower",
			Stat: stat, Floor: "fork/exec `bash -c true` (the shell rigout runs)", RigoutSeries: key("rigout-command"), FloorSeries: key("floor-bash")})
	}
	b.res.AddRow(Row{Scenario: "2", Name: fmt.Sprintf("%s, command \"true\", p50", what), Unit: "ms", Better: "lower",
		Stat: "median", Floor: "fork/exec `sh -c true`", Target: "< 1.3×", RigoutSeries: key("rigout-command"), FloorSeries: key("floor-sh")})
	return nil
}

// forkExec runs a program from Go and waits for it: the floor of a local
// call.
func forkExec(name string, args ...string) (time.Duration, error) {
	start := time.Now()
	cmd := osexec.Command(name, args...)
	cmd.Env = os.Environ()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return time.Since(start), nil
}

func statLabel(stat string) string {
	if stat == "median" {
		return "p50"
	}
	return stat
}
