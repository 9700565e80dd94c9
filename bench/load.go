package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// server is one HTTP endpoint a load scenario measures, with its clients.
type server struct {
	key     string
	proc    *proc
	clients []*client.Client
}

// namedCall is one tool call a load scenario repeats, with the key its
// series are named by.
type namedCall struct {
	key string
	req mcp.CallToolRequest
}

// loadRun is the servers of one load scenario (3, 12), each with maxC
// keep-alive clients, measured in rounds of windows.
type loadRun struct {
	b        *bench
	scenario string // the series prefix, "3"
	maxC     int
	servers  []*server
}

// start starts a server with f and connects maxC clients to it. The server
// is stopped by close, even when start fails.
func (l *loadRun) start(ctx context.Context, key string, f func() (*proc, error)) error {
	p, err := f()
	if err != nil {
		return err
	}
	s := &server{key: key, proc: p}
	l.servers = append(l.servers, s)
	for range l.maxC {
		c, err := httpClient(ctx, p.url, p.token)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		s.clients = append(s.clients, c)
	}
	return nil
}

// close closes every client and stops every server by its PID.
func (l *loadRun) close() {
	for _, s := range l.servers {
		for _, c := range s.clients {
			c.Close()
		}
		s.proc.stop()
	}
}

// measure warms every server up with every call, then runs rounds: each
// measures every (concurrency, call, server) window once, in an order that
// rotates with the round, so each series ("SCENARIO/CALL/cN/SERVER") has one
// sample per round and ratios are taken round by round. skip leaves a
// (call, server) pair out. Only complete rounds are kept.
func (l *loadRun) measure(ctx context.Context, calls []namedCall, concurrency []int, rounds int, window time.Duration, skip func(call, server string) bool) error {
	for _, t := range calls {
		for _, s := range l.servers {
			if _, err := loadWindow(ctx, s.clients, t.req, 200*time.Millisecond); err != nil {
				return fmt.Errorf("warm-up %s %s: %w", s.proc.name, t.key, err)
			}
		}
	}
	samples := map[string][]float64{}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		l.b.logf("scenario %s: round %d of %d", l.scenario, r+1, rounds)
		for _, c := range concurrency {
			for _, t := range calls {
				for i := range l.servers {
					s := l.servers[(i+r)%len(l.servers)]
					if skip != nil && skip(t.key, s.key) {
						continue
					}
					rate, err := loadWindow(ctx, s.clients[:c], t.req, window)
					if err != nil {
						if ctx.Err() != nil {
							break
						}
						return fmt.Errorf("%s, %s, %d clients: %w", s.proc.name, t.key, c, err)
					}
					k := l.series(t.key, c, s.key)
					samples[k] = append(samples[k], rate)
				}
			}
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
		l.b.res.AddSeries(k, "calls/s", v[:complete])
	}
	return nil
}

// series names the samples of call at c clients on server.
func (l *loadRun) series(call string, c int, server string) string {
	return fmt.Sprintf("%s/%s/c%d/%s", l.scenario, call, c, server)
}
