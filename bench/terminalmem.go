package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Terminal sessions of scenario 6: this many idle sessions in a full run.
const terminalSessionsFull = 100

// terminalSample is what one round of terminalMemory measures on one side,
// in KiB.
type terminalSample struct {
	total      float64 // the server's VmRSS with the sessions open
	perSession float64 // (VmRSS with them − idle VmRSS) / sessions
	anonPer    float64 // the same of RssAnon
	procsPer   float64 // the VmRSS of the server's descendants, summed, / sessions
	procs      int     // how many descendants there were
}

// terminalMemory is scenario 6's terminal part: n idle terminal sessions
// opened through MCP (create_terminal_session, local shell) on `rigout
// serve` (auth and audit on, its terminal caps raised to n), against
// floorserver holding n bash on pseudo-terminals. Each round starts a fresh
// process of each, the two alternating; the sessions are closed at the end
// of the round, and the round fails if their processes outlive that.
func terminalMemory(ctx context.Context, b *bench) error {
	n := pick(b, 10, terminalSessionsFull)
	rounds := pick(b, 1, 3)
	start := time.Now()
	defer func() { b.logf("scenario 6, terminal sessions: %v", time.Since(start).Round(time.Millisecond)) }()
	samples := map[string][]float64{}
	sides := []string{"rigout", "floor"}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		for i := range sides {
			side := sides[(i+r)%len(sides)]
			s, err := terminalRound(ctx, b, side, n)
			if err != nil {
				if ctx.Err() != nil {
					break // the budget ran out: keep the complete rounds
				}
				return fmt.Errorf("terminal sessions, %s: %w", side, err)
			}
			b.logf("scenario 6, %d terminal sessions, %s: RSS %.1f MiB, %.0f KiB per session above idle (anon %.0f KiB), %d processes, %.0f KiB each session",
				n, side, s.total/1024, s.perSession, s.anonPer, s.procs, s.procsPer)
			samples["6/terminals/"+side] = append(samples["6/terminals/"+side], s.total/1024)
			samples["6/terminal-each/"+side] = append(samples["6/terminal-each/"+side], s.perSession)
			samples["6/terminal-anon/"+side] = append(samples["6/terminal-anon/"+side], s.anonPer)
			samples["6/terminal-procs/"+side] = append(samples["6/terminal-procs/"+side], s.procsPer)
		}
	}
	complete := rounds
	for _, side := range sides {
		complete = min(complete, len(samples["6/terminals/"+side]))
	}
	if complete == 0 {
		return errors.New("terminal sessions: time ran out before one round completed")
	}
	for k, v := range samples {
		unit := "KiB"
		if strings.HasPrefix(k, "6/terminals/") {
			unit = "MiB"
		}
		b.res.AddSeries(k, unit, v[:complete])
	}
	note := ""
	if n != terminalSessionsFull {
		note = fmt.Sprintf("quick mode opens %d sessions instead of %d", n, terminalSessionsFull)
	}
	floor := "floorserver holding `bash -i` on a PTY per call (creack/pty)"
	b.res.AddRow(Row{Scenario: "6", Name: fmt.Sprintf("RSS of `rigout serve` with %d idle terminal sessions (create_terminal_session, local shell)", n),
		Unit: "MiB", Better: "lower", Stat: "median", Note: note, Floor: floor,
		RigoutSeries: "6/terminals/rigout", FloorSeries: "6/terminals/floor"})
	b.res.AddRow(Row{Scenario: "6", Name: "RSS per idle terminal session above idle", Unit: "KiB", Better: "lower", Stat: "median", Floor: floor,
		RigoutSeries: "6/terminal-each/rigout", FloorSeries: "6/terminal-each/floor"})
	b.res.AddRow(Row{Scenario: "6", Name: "RssAnon per idle terminal session above idle", Unit: "KiB", Better: "lower", Stat: "median", Floor: floor,
		RigoutSeries: "6/terminal-anon/rigout", FloorSeries: "6/terminal-anon/floor"})
	b.res.AddRow(Row{Scenario: "6", Name: "the sessions' own processes: VmRSS of the server's descendants summed, per session", Unit: "KiB", Better: "lower", Stat: "median",
		Floor: "floorserver's bash, the same way", RigoutSeries: "6/terminal-procs/rigout", FloorSeries: "6/terminal-procs/floor",
		Note: "a sum of VmRSS counts the pages the shells share (bash's text, libc) once per shell; rigout's shell runs in the kernel sandbox and has run its setup line (no echo, empty prompts, the end-of-command marker)"})
	return nil
}

// terminalRound starts one server, warms it up, reads its idle RSS, opens
// n terminal sessions, lets them settle, measures, and closes them.
func terminalRound(ctx context.Context, b *bench, side string, n int) (terminalSample, error) {
	var s terminalSample
	var p *proc
	var err error
	if side == "rigout" {
		p, err = b.startServe(ctx, "rigout serve (terminals)", true,
			"--max-terminals", strconv.Itoa(n), "--max-terminals-per-token", strconv.Itoa(n))
	} else {
		p, err = b.startFloor(ctx)
	}
	if err != nil {
		return s, err
	}
	defer p.stop()
	c, err := httpClient(ctx, p.url, p.token)
	if err != nil {
		return s, err
	}
	defer c.Close()
	warm := toolRequest("execute_command", map[string]any{"argv": []string{"true"}})
	for range 10 {
		if _, err := callTool(ctx, c, warm); err != nil {
			return s, err
		}
	}
	if err := sleep(ctx, time.Second); err != nil {
		return s, err
	}
	idle, err := rssKiB(p.pid(), "VmRSS")
	if err != nil {
		return s, err
	}
	idleAnon, err := rssKiB(p.pid(), "RssAnon")
	if err != nil {
		return s, err
	}
	before := descendants(p.pid())

	ids := make([]string, 0, n)
	defer func() {
		// Close what was opened, also when the round fails; the server's
		// stop would end the rest.
		closeTerminals(context.WithoutCancel(ctx), c, ids)
	}()
	create := toolRequest("create_terminal_session", map[string]any{})
	for range n {
		id, err := createTerminal(ctx, c, create)
		if err != nil {
			return s, err
		}
		ids = append(ids, id)
	}
	// Settle: the shells have printed their prompts and the server's
	// allocations of the burst are behind it.
	if err := sleep(ctx, 2*time.Second); err != nil {
		return s, err
	}
	rss, err := rssKiB(p.pid(), "VmRSS")
	if err != nil {
		return s, err
	}
	anon, err := rssKiB(p.pid(), "RssAnon")
	if err != nil {
		return s, err
	}
	procs := descendants(p.pid())
	if len(procs)-len(before) < n {
		return s, fmt.Errorf("%d sessions open but only %d new processes under the server", n, len(procs)-len(before))
	}
	var procsKiB int64
	for _, pid := range procs {
		if v, err := rssKiB(pid, "VmRSS"); err == nil {
			procsKiB += v
		}
	}
	s = terminalSample{
		total:      float64(rss),
		perSession: float64(rss-idle) / float64(n),
		anonPer:    float64(anon-idleAnon) / float64(n),
		procsPer:   float64(procsKiB) / float64(n),
		procs:      len(procs),
	}
	closeTerminals(ctx, c, ids)
	ids = nil
	// Closing a session ends its processes: none may be left.
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := len(descendants(p.pid())) - len(before)
		if left <= 0 {
			break
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("%d processes of closed terminal sessions still run 10 s after closing", left)
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return s, err
		}
	}
	return s, nil
}

// createTerminal opens a terminal session and returns its session_id.
func createTerminal(ctx context.Context, c *client.Client, req mcp.CallToolRequest) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.CallTool(cctx, req)
	if err != nil {
		return "", fmt.Errorf("create_terminal_session: %w", err)
	}
	if res.IsError {
		return "", fmt.Errorf("create_terminal_session: error result: %s", resultText(res))
	}
	m, _ := res.StructuredContent.(map[string]any)
	id, _ := m["session_id"].(string)
	if id == "" {
		return "", fmt.Errorf("create_terminal_session: no session_id in %s", resultText(res))
	}
	return id, nil
}

// closeTerminals closes the sessions, ignoring errors: a session the
// server already lost is closed all the same.
func closeTerminals(ctx context.Context, c *client.Client, ids []string) {
	for _, id := range ids {
		_, _ = callTool(ctx, c, toolRequest("close_terminal_session", map[string]any{"session_id": id}))
	}
}

// descendants returns the PIDs of every live descendant of pid, from the
// parent links in /proc/*/stat.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// The command name, in parentheses, may hold spaces: the fields
		// after its last ')' are state, then the parent's PID.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], child)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
