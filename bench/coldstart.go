package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"time"
)

// initializeFrame is the first frame an MCP client sends over stdio: an
// initialize request in the last protocol era that has the handshake.
const initializeFrame = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rigout-bench","version":"1"}}}` + "\n"

// coldStart is scenario 1: from starting `rigout stdio` to reading its
// answer to initialize, against starting `true` and waiting for it to
// exit. Both start from the same binary-on-disk state (one untimed run of
// each first), and rigout reuses one state directory, as an installed
// rigout does: creating the ledger is a first-run cost, not a start cost.
func coldStart(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	state := filepath.Join(b.tmp, "cold-state")
	baseState := filepath.Join(b.tmp, "cold-state-base")
	n := pick(b, 15, 200)
	if _, err := b.startStdioOnce(ctx, b.rigout, state); err != nil { // creates the ledger
		return err
	}
	if b.base != "" {
		if _, err := b.startStdioOnce(ctx, b.base, baseState); err != nil {
			return fmt.Errorf("--base: %w", err)
		}
	}
	if _, err := startTrue(); err != nil {
		return err
	}
	sides := []string{"rigout", "floor"}
	if b.base != "" {
		sides = append(sides, "base")
	}
	samples := map[string][]float64{}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		// A B (C), then B (C) A, …: no side always runs first.
		round := map[string]float64{}
		for k := range sides {
			var d time.Duration
			var err error
			switch side := sides[(i+k)%len(sides)]; side {
			case "rigout":
				d, err = b.startStdioOnce(ctx, b.rigout, state)
			case "base":
				d, err = b.startStdioOnce(ctx, b.base, baseState)
			default:
				d, err = startTrue()
			}
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				return err
			}
			round[sides[(i+k)%len(sides)]] = ms(d)
		}
		if len(round) < len(sides) {
			break // keep only complete rounds, so that the series stay paired
		}
		for side, v := range round {
			samples[side] = append(samples[side], v)
		}
	}
	b.res.AddSeries("1/rigout-stdio-initialize", "ms", samples["rigout"])
	b.res.AddSeries("1/floor-true", "ms", samples["floor"])
	b.res.AddRow(Row{Scenario: "1", Name: "cold start: process start → initialize answered over stdio", Unit: "ms", Better: "lower",
		Stat: "median", Floor: "starting `true`", Target: "rigout < 20 ms",
		RigoutSeries: "1/rigout-stdio-initialize", FloorSeries: "1/floor-true"})
	if b.base != "" {
		b.res.AddSeries("1/base-stdio-initialize", "ms", samples["base"])
		b.res.AddRow(Row{Scenario: "1", Name: "cold start: this tree vs --base", Unit: "ms", Better: "lower",
			Stat: "median", Floor: "the --base binary", Note: "--base " + b.base,
			RigoutSeries: "1/rigout-stdio-initialize", FloorSeries: "1/base-stdio-initialize"})
	}
	return nil
}

// startStdioOnce starts `rigout stdio` from bin, sends initialize and returns the
// time until the answer arrived. The process is then told to stop by
// closing its stdin, and killed by its PID if it has not exited within
// stopTimeout.
func (b *bench) startStdioOnce(ctx context.Context, bin, state string) (time.Duration, error) {
	cmd := osexec.Command(bin, "stdio", "--log-level", "error", "--workdir", b.tmp)
	cmd.Env = baseEnv("RIGOUT_STATE_DIR=" + state)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	type answer struct {
		line []byte
		err  error
		at   time.Time
	}
	answers := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		answers <- answer{line, err, time.Now()}
	}()
	_, werr := stdin.Write([]byte(initializeFrame))
	var a answer
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case a = <-answers:
	case <-timer.C:
		a.err = fmt.Errorf("no answer to initialize within %v", startTimeout)
	case <-ctx.Done():
		a.err = ctx.Err()
	}
	_ = stdin.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	stop := time.NewTimer(stopTimeout)
	defer stop.Stop()
	select {
	case <-waited:
	case <-stop.C:
		_ = cmd.Process.Kill()
		<-waited
	}
	switch {
	case werr != nil:
		return 0, fmt.Errorf("rigout stdio: writing initialize: %v (stderr: %s)", werr, oneLine(stderr.String()))
	case a.err != nil:
		return 0, fmt.Errorf("rigout stdio: %v (stderr: %s)", a.err, oneLine(stderr.String()))
	case !bytes.Contains(a.line, []byte(`"result"`)) || !bytes.Contains(a.line, []byte(`"id":1`)):
		return 0, fmt.Errorf("rigout stdio: unexpected answer to initialize: %s", oneLine(string(a.line)))
	}
	return a.at.Sub(start), nil
}

// startTrue starts `true` and waits for it: the floor of starting a
// process.
func startTrue() (time.Duration, error) {
	start := time.Now()
	cmd := osexec.Command("true")
	cmd.Stdout, cmd.Stderr = nil, nil
	cmd.Env = os.Environ()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("true: %w", err)
	}
	return time.Since(start), nil
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
