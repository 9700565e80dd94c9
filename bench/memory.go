package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

// Storm parameters of scenario 6: this many concurrent commands, each
// printing this much under the default output cap (1 MiB per stream).
const (
	stormCommands  = 20
	stormFullBytes = 200 << 20
)

// memory is scenario 6: the resident set of `rigout serve` (auth and audit
// on) idle after a few calls, and its peak above idle while 20 concurrent
// commands each print 200 MiB, against bench/floorserver doing the same;
// then the same server with 100 idle terminal sessions (terminalMemory).
// Each round starts a fresh process of each, rigout and floor alternating.
func memory(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	rounds := pick(b, 1, 3)
	size := pick(b, 20<<20, stormFullBytes)
	samples := map[string][]float64{}
	sides := []string{"rigout", "floor"}
	if b.base != "" {
		sides = append(sides, "base")
	}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		for i := range sides {
			side := sides[(i+r)%len(sides)]
			idle, anon, above, err := memoryRound(ctx, b, side, size)
			if err != nil {
				if ctx.Err() != nil {
					break // the budget ran out: keep the complete rounds
				}
				return fmt.Errorf("%s: %w", side, err)
			}
			samples["6/idle/"+side] = append(samples["6/idle/"+side], idle)
			samples["6/idle-anon/"+side] = append(samples["6/idle-anon/"+side], anon)
			samples["6/storm/"+side] = append(samples["6/storm/"+side], above)
		}
	}
	complete := rounds
	for _, v := range samples {
		complete = min(complete, len(v))
	}
	if complete == 0 {
		return errors.New("time ran out before one round completed")
	}
	for k, v := range samples {
		b.res.AddSeries(k, "MiB", v[:complete])
	}
	b.res.AddRow(Row{Scenario: "6", Name: "idle RSS of `rigout serve` after 10 calls", Unit: "MiB", Better: "lower", Stat: "median",
		Floor: "floorserver (plain net/http)", Target: "rigout < 20 MiB", RigoutSeries: "6/idle/rigout", FloorSeries: "6/idle/floor"})
	b.res.AddRow(Row{Scenario: "6", Name: "idle anonymous RSS (RssAnon: heap, stacks, runtime; the rest is the binary's mapped file pages)", Unit: "MiB", Better: "lower", Stat: "median",
		Floor: "floorserver (plain net/http)", RigoutSeries: "6/idle-anon/rigout", FloorSeries: "6/idle-anon/floor"})
	name := fmt.Sprintf("peak RSS above idle, %d concurrent commands each printing %d MiB", stormCommands, size>>20)
	note := ""
	if size != stormFullBytes {
		note = fmt.Sprintf("quick mode prints %d MiB per command instead of %d", size>>20, stormFullBytes>>20)
	}
	b.res.AddRow(Row{Scenario: "6", Name: name, Unit: "MiB", Better: "lower", Stat: "median", Note: note,
		Floor: "floorserver keeping the first 1 MiB of each stream", Target: "rigout < 64 MiB",
		RigoutSeries: "6/storm/rigout", FloorSeries: "6/storm/floor"})
	if b.base != "" {
		b.res.AddRow(Row{Scenario: "6", Name: "idle RSS: this tree vs --base", Unit: "MiB", Better: "lower", Stat: "median",
			Floor: "the --base binary", Note: "--base " + b.base, RigoutSeries: "6/idle/rigout", FloorSeries: "6/idle/base"})
		b.res.AddRow(Row{Scenario: "6", Name: "idle anonymous RSS: this tree vs --base", Unit: "MiB", Better: "lower", Stat: "median",
			Floor: "the --base binary", Note: "--base " + b.base, RigoutSeries: "6/idle-anon/rigout", FloorSeries: "6/idle-anon/base"})
		b.res.AddRow(Row{Scenario: "6", Name: "storm peak above idle: this tree vs --base", Unit: "MiB", Better: "lower", Stat: "median",
			Floor: "the --base binary", Note: "--base " + b.base, RigoutSeries: "6/storm/rigout", FloorSeries: "6/storm/base"})
	}
	return terminalMemory(ctx, b)
}

// memoryRound starts one server, warms it up, and returns its idle RSS,
// the anonymous part of it, and its peak RSS above idle during the storm,
// in MiB.
func memoryRound(ctx context.Context, b *bench, side string, size int) (idle, anon, above float64, err error) {
	var p *proc
	switch side {
	case "rigout":
		p, err = b.startServe(ctx, "rigout serve", true)
	case "base":
		p, err = b.startServeOf(ctx, b.base, "base rigout serve", true)
	default:
		p, err = b.startFloor(ctx)
	}
	if err != nil {
		return 0, 0, 0, err
	}
	defer p.stop()
	c, err := httpClient(ctx, p.url, p.token)
	if err != nil {
		return 0, 0, 0, err
	}
	defer c.Close()
	warm := toolRequest("execute_command", map[string]any{"argv": []string{"true"}})
	for range 10 {
		if _, err := callTool(ctx, c, warm); err != nil {
			return 0, 0, 0, err
		}
	}
	if err := sleep(ctx, time.Second); err != nil {
		return 0, 0, 0, err
	}
	idleKiB, err := rssKiB(p.pid(), "VmRSS")
	if err != nil {
		return 0, 0, 0, err
	}
	anonKiB, err := rssKiB(p.pid(), "RssAnon")
	if err != nil {
		return 0, 0, 0, err
	}
	peakKiB, err := storm(ctx, c, p.pid(), size)
	if err != nil {
		return 0, 0, 0, err
	}
	return float64(idleKiB) / 1024, float64(anonKiB) / 1024, float64(peakKiB-idleKiB) / 1024, nil
}

// storm runs stormCommands concurrent commands printing size bytes each
// and returns the server's peak RSS in KiB while they ran: the kernel's
// high-water mark, reset before the storm, or the highest of samples taken
// every 5 ms where the reset is not allowed.
func storm(ctx context.Context, c *client.Client, pid, size int) (int64, error) {
	req := toolRequest("execute_command", map[string]any{
		"command": fmt.Sprintf("yes rigout-bench-output-line | head -c %d", size),
		"timeout": 300,
	})
	canReset := resetPeak(pid) == nil
	var peak int64
	sampled := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := rssKiB(pid, "VmRSS"); err == nil {
				peak = max(peak, v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, stormCommands)
	for range stormCommands {
		wg.Go(func() {
			if _, err := callTool(ctx, c, req); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	if canReset {
		if hwm, err := rssKiB(pid, "VmHWM"); err == nil {
			peak = max(peak, hwm)
		}
	}
	return peak, nil
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
