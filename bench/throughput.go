package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// server is one HTTP endpoint scenario 3 loads, with its clients.
type server struct {
	key     string
	proc    *proc
	clients []*client.Client
}

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

	var servers []*server
	defer func() {
		for _, s := range servers {
			for _, c := range s.clients {
				c.Close()
			}
			s.proc.stop()
		}
	}()
	start := func(key string, f func() (*proc, error)) error {
		p, err := f()
		if err != nil {
			return err
		}
		s := &server{key: key, proc: p}
		servers = append(servers, s)
		for range maxC {
			c, err := httpClient(ctx, p.url, p.token)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			s.clients = append(s.clients, c)
		}
		return nil
	}
	if err := start("on", func() (*proc, error) { return b.startServe(ctx, "rigout serve (auth+audit)", true) }); err != nil {
		return err
	}
	if err := start("audit", func() (*proc, error) { return b.startServe(ctx, "rigout serve --no-auth", false) }); err != nil {
		return err
	}
	if err := start("bare", func() (*proc, error) { return b.startBare(ctx) }); err != nil {
		return err
	}
	if err := start("floor", func() (*proc, error) { return b.startFloor(ctx) }); err != nil {
		return err
	}

	tools := []struct {
		key string
		req mcp.CallToolRequest
	}{
		{"exec", toolRequest("execute_command", map[string]any{"argv": []string{"true"}})},
		{"activity", toolRequest("get_server_activity", map[string]any{"lines": 1})},
	}
	// The bare gateway must contain commands as rigout serve does, or the
	// ratio charges the difference to auth and audit.
	if err := sameContainment(ctx, servers[0], servers[2], tools[0].req); err != nil {
		return err
	}
	// Warm up every server and tool with all clients.
	for _, t := range tools {
		for _, s := range servers {
			if _, err := loadWindow(ctx, s.clients, t.req, 200*time.Millisecond); err != nil {
				return fmt.Errorf("warm-up %s %s: %w", s.proc.name, t.key, err)
			}
		}
	}
	samples := map[string][]float64{}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		b.logf("scenario 3: round %d of %d", r+1, rounds)
		for _, c := range concurrency {
			for _, t := range tools {
				for i := range servers {
					s := servers[(i+r)%len(servers)]
					if t.key == "activity" && s.key == "audit" {
						continue // no row compares them
					}
					rate, err := loadWindow(ctx, s.clients[:c], t.req, window)
					if err != nil {
						if ctx.Err() != nil {
							break
						}
						return fmt.Errorf("%s, %s, %d clients: %w", s.proc.name, t.key, c, err)
					}
					k := fmt.Sprintf("3/%s/c%d/%s", t.key, c, s.key)
					samples[k] = append(samples[k], rate)
				}
			}
		}
	}
	// Only complete rounds pair up.
	complete := rounds
	for _, v := range samples {
		complete = min(complete, len(v))
	}
	if complete == 0 {
		return errors.New("time ran out before one round completed")
	}
	for k, v := range samples {
		b.res.AddSeries(k, "calls/s", v[:complete])
	}
	row := func(c int, tool, name, a, bk, floor, target string) {
		b.res.AddRow(Row{Scenario: "3", Name: fmt.Sprintf("%s, %s", plural(c, "client"), name), Unit: "calls/s", Better: "higher",
			Stat: "median", Floor: floor, Target: target,
			RigoutSeries: fmt.Sprintf("3/%s/c%d/%s", tool, c, a), FloorSeries: fmt.Sprintf("3/%s/c%d/%s", tool, c, bk)})
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
