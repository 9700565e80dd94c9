package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"
)

// terminalLatency is scenario 11: `true` through execute_in_terminal in a
// warm local terminal session against execute_command argv [true], both
// on the same `rigout stdio` (sandboxed, as by default), interleaved call
// by call. The floor is the one-shot call, so the ratio is what a warm
// session saves (or costs) per command.
func terminalLatency(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	// The gateway outlives the budget's end by the iteration in flight;
	// Close stops it.
	c, err := b.rawStdioClient(context.WithoutCancel(ctx), filepath.Join(b.tmp, "terminal"))
	if err != nil {
		return fmt.Errorf("rigout stdio: %w", err)
	}
	defer c.Close()
	resp, err := c.roundTrip("tools/call", map[string]any{"name": "create_terminal_session", "arguments": map[string]any{}})
	if err != nil {
		return err
	}
	var r struct {
		rpcResponse
		Result struct {
			Structured struct {
				ID string `json:"session_id"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return fmt.Errorf("create_terminal_session: %w", err)
	}
	if r.Result.Structured.ID == "" {
		return fmt.Errorf("create_terminal_session: no session_id in %.300s", resp)
	}
	session := map[string]any{"session_id": r.Result.Structured.ID, "command": "true"}
	oneShot := map[string]any{"argv": []string{"true"}}
	// A call in flight when the budget ends finishes: the loop stops
	// between iterations, so the quick run's one-second budget holds.
	call := func(name string, args map[string]any) (time.Duration, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		defer cancel()
		return c.callTool(cctx, name, args)
	}
	for range pick(b, 5, 100) {
		if _, err := call("execute_in_terminal", session); err != nil {
			return err
		}
		if _, err := call("execute_command", oneShot); err != nil {
			return err
		}
	}
	n := pick(b, 200, 1000)
	b.logf("scenario 11: %d iterations", n)
	var sIn, sOne []float64
	for i := 0; i < n && ctx.Err() == nil; i++ {
		order := []string{"execute_in_terminal", "execute_command"}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, name := range order {
			args := session
			if name == "execute_command" {
				args = oneShot
			}
			d, err := call(name, args)
			if err != nil {
				return err
			}
			if name == "execute_command" {
				sOne = append(sOne, ms(d))
			} else {
				sIn = append(sIn, ms(d))
			}
		}
	}
	if len(sIn) < 10 {
		return fmt.Errorf("only %d iterations within the budget", len(sIn))
	}
	b.res.AddSeries("10/terminal", "ms", sIn)
	b.res.AddSeries("10/one-shot", "ms", sOne)
	b.res.AddRow(Row{Scenario: "11", Name: "stdio, `true` in a warm terminal session, p50", Unit: "ms", Better: "lower",
		Stat: "median", Floor: "execute_command argv [true] on the same gateway", Target: "≤ 1×", RigoutSeries: "10/terminal", FloorSeries: "10/one-shot"})
	return nil
}
