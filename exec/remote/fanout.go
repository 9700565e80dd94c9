package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/rigout/rigout/exec"
)

// ErrNoHosts means a FanOutRequest named no host and its selector matched
// none.
var ErrNoHosts = errors.New("exec: no hosts to run on")

// FanOut runs req.Command on every host concurrently, at most req.Limit at
// a time, and returns one FanResult per host in request order (Hosts, then
// the selector's matches). One host failing does not stop the others.
// The error is for the request itself: a bad selector, no hosts, a Stdin
// that cannot be read.
func (r *Router) FanOut(ctx context.Context, req exec.FanOutRequest) ([]exec.FanResult, error) {
	hosts := make([]string, 0, len(req.Hosts))
	seen := map[string]bool{}
	for _, h := range req.Hosts {
		if !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	if req.Selector != "" {
		sel, err := r.Select(req.Selector)
		if err != nil {
			return nil, err
		}
		for _, h := range sel {
			if !seen[h] {
				seen[h] = true
				hosts = append(hosts, h)
			}
		}
	}
	if len(hosts) == 0 {
		return nil, ErrNoHosts
	}
	if err := req.Command.Validate(); err != nil {
		return nil, err
	}
	var stdin []byte
	if req.Command.Stdin != nil {
		b, err := io.ReadAll(req.Command.Stdin)
		if err != nil {
			return nil, fmt.Errorf("exec: fan-out stdin: %w", err)
		}
		stdin = b
	}
	limit := req.Limit
	if limit <= 0 {
		limit = r.cfg.FanOutLimit
	}
	results := make([]exec.FanResult, len(hosts))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, h := range hosts {
		results[i].Host = h
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i].Err = fmt.Errorf("exec: not started: %w", ctx.Err())
				return
			}
			defer func() { <-sem }()
			cmd := req.Command
			if stdin != nil {
				cmd.Stdin = bytes.NewReader(stdin)
			}
			t, err := r.Resolve(ctx, h, req.Principal)
			if err != nil {
				results[i].Err = err
				return
			}
			results[i].Route = t.Route
			res, err := t.Runner.Run(ctx, cmd)
			results[i].Result, results[i].Err = res, err
		})
	}
	wg.Wait()
	return results, nil
}
