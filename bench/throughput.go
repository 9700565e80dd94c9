package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// throughput is scenario 3: calls per second over HTTP with 1, 8 and 64
// concurrent clients, for execute_command argv [true] and for the cheap
// get_server_activity {lines: 1}, against four servers:
//
//   - on: `rigout serve` with a bearer token and its audit ledger;
//   - audit: `rigout serve --no-auth`, ledger still on;
//   - bare: rigout's gateway and transport with neither (see runBare);
//   - floor: bench/floorserver, which fork/execs argv or echoes the
//     arguments: the floor for execute_command and the ceiling of a plain
//     net/http JSON handler.
//
// Each round measures every (concurrency, tool, server) window once, in an
// order that rotates with the round, so each series has one sample per
// round and the ratios are taken round by round.
func throughput(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	// How many clients run at once; each has its own keep-alive connection.
	concurrency := []int{1, 8, 64}
	rounds := pick(b, 3, 9)
	window := pick(b, 250*time.Millisecond, 800*time.Millisecond)
	maxC := concurrency[len(concurrency)-1]

	l := &loadRun{b: b, scenario: "3", maxC: maxC}
	defer l.close()
	if err := l.start(ctx, "on", func() (*proc, error) { return b.startServe(ctx, "rigout serve (auth+audit)", true) }); err != nil {
		return err
	}
	if err := l.start(ctx, "audit", func() (*proc, error) { return b.startServe(ctx, "rigout serve --no-auth", false) }); err != nil {
		return err
	}
	if err := l.start(ctx, "bare", func() (*proc, error) { return b.startBare(ctx) }); err != nil {
		return err
	}
	if err := l.start(ctx, "floor", func() (*proc, error) { return b.startFloor(ctx) }); err != nil {
		return err
	}

	calls := []namedCall{
		{"exec", toolRequest("execute_command", map[string]any{"argv": []string{"true"}})},
		{"activity", toolRequest("get_server_activity", map[string]any{"lines": 1})},
	}
	// The bare gateway must contain commands as rigout serve does, or the
	// ratio charges the difference to auth and audit.
	if err := sameContainment(ctx, l.servers[0], l.servers[2], calls[0].req); err != nil {
		return err
	}
	// No row compares get_server_activity on the audit-only server.
	skip := func(call, server string) bool { return call == "activity" && server == "audit" }
	if err := l.measure(ctx, calls, concurrency, rounds, window, skip); err != nil {
		return err
	}
	row := func(c int, tool, name, a, bk, floor, target string) {
		b.res.AddRow(Row{Scenario: "3", Name: fmt.Sprintf("%s, %s", plural(c, "client"), name), Unit: "calls/s", Better: "higher",
			Stat: "median", Floor: floor, Target: target,
			RigoutSeries: l.series(tool, c, a), FloorSeries: l.series(tool, c, bk)})
	}
	for _, c := range concurrency {
		row(c, "exec", "execute_command argv [true], auth+audit on", "on", "bare", "both off (bare gateway)", "≥ 0.90×")
		if c == 8 {
			row(c, "exec", "execute_command argv [true], audit on, auth off", "audit", "bare", "both off (bare gateway)", "")
			row(c, "exec", "execute_command argv [true], auth+audit on", "on", "audit", "audit on, auth off", "")
		}
		row(c, "exec", "execute_command argv [true], auth+audit on", "on", "floor", "net/http handler that fork/execs `true`", "")
		row(c, "activity", "get_server_activity lines 1, auth+audit on", "on", "bare", "both off (bare gateway; no ledger to read)", "")
		row(c, "activity", "get_server_activity lines 1, auth+audit on", "on", "floor", "plain net/http JSON echo (ceiling)", "")
	}
	return nil
}

// loadWindow runs req from every client in a loop for d and returns the
// completed calls per second. Calls in flight at the end finish and count;
// the rate divides by the time until the last one finished.
func loadWindow(ctx context.Context, clients []*client.Client, req mcp.CallToolRequest, d time.Duration) (float64, error) {
	start := time.Now()
	end := start.Add(d)
	var done atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				if _, err := callTool(ctx, c, req); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if first != nil {
		return 0, first
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return float64(done.Load()) / elapsed.Seconds(), nil
}

// sameContainment runs req (execute_command) once on a and on b and fails
// unless both report the same "sandboxed" in their structuredContent.
func sameContainment(ctx context.Context, a, b *server, req mcp.CallToolRequest) error {
	sandboxed := func(s *server) (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		res, err := s.clients[0].CallTool(cctx, req)
		if err != nil {
			return false, fmt.Errorf("%s: %w", s.proc.name, err)
		}
		m, ok := res.StructuredContent.(map[string]any)
		if !ok {
			return false, fmt.Errorf("%s: execute_command gave no structuredContent: %s", s.proc.name, resultText(res))
		}
		v, ok := m["sandboxed"].(bool)
		if !ok {
			return false, fmt.Errorf("%s: execute_command's structuredContent has no sandboxed: %v", s.proc.name, m)
		}
		return v, nil
	}
	sa, err := sandboxed(a)
	if err != nil {
		return err
	}
	sb, err := sandboxed(b)
	if err != nil {
		return err
	}
	if sa != sb {
		return fmt.Errorf("%s runs commands sandboxed=%v but %s sandboxed=%v: the comparison would not be like for like", a.proc.name, sa, b.proc.name, sb)
	}
	return nil
}
