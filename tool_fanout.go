package rigout

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/exec"
)

// fanOut runs one command on several hosts at once. The policy is checked
// once (the command is the same everywhere) and every host against the
// caller's host scopes; one host failing does not fail the others.
func (g *Gateway) fanOut(ctx context.Context, call *Call, a executeArgs, cmd exec.Command) (*mcp.CallToolResult, error) {
	if g.router == nil {
		call.Outcome.Status = "error"
		return ErrorResult("`hosts` needs SSH hosts, which this gateway does not have configured"), nil
	}
	req := exec.FanOutRequest{Principal: g.principal(ctx).Name, Command: cmd}
	var hosts []string
	switch h := a.Hosts.(type) {
	case string:
		if strings.TrimSpace(h) == "" {
			call.Outcome.Status = "invalid"
			return ErrorResult("`hosts` is an empty selector: give a list of hosts or labels such as \"web,env=prod\""), nil
		}
		names, err := g.router.Select(h)
		if err != nil {
			call.Outcome.Status = "invalid"
			return ErrorResult("hosts selector %q: %v", h, err), nil
		}
		if len(names) == 0 {
			call.Outcome.Status = "invalid"
			return ErrorResult("hosts selector %q matches no configured host (manage_hosts with action list shows them and their labels)", h), nil
		}
		hosts = names
	case []any:
		for _, v := range h {
			s, _ := v.(string)
			hosts = append(hosts, s)
		}
		if len(hosts) == 0 {
			call.Outcome.Status = "invalid"
			return ErrorResult("`hosts` is an empty list"), nil
		}
	}
	// A selector's hosts are known only now: check them against the scopes.
	s := g.principal(ctx).Scopes
	for _, h := range hosts {
		if err := s.RequireHost(h); err != nil {
			call.Outcome.Status = "denied"
			return nil, err
		}
	}
	req.Hosts = hosts
	call.Outcome.Host = strings.Join(hosts, ",")
	call.Outcome.Route = fmt.Sprintf("fan-out(%d hosts)", len(hosts))
	if res := g.checkPolicy(ctx, call, a, a.WorkingDirectory); res != nil {
		return res, nil
	}
	req.Command.Dir = a.WorkingDirectory

	results, err := g.router.FanOut(ctx, req)
	if err != nil {
		call.Outcome.Status = "error"
		return ErrorResult("fan-out: %v", err), nil
	}
	return g.fanOutResult(call, describeCommand(a), results), nil
}

// fanOutResult reports every host's result: text for the model, one
// structured entry per host, and a summary outcome for the ledger.
func (g *Gateway) fanOutResult(call *Call, command string, results []exec.FanResult) *mcp.CallToolResult {
	var sb strings.Builder
	fmt.Fprintf(&sb, "$ %s\n", redactLine(command))
	var entries []commandResult
	var failed []string
	var out, errb int64
	for _, r := range results {
		e := commandResult{Host: r.Host, Route: r.Route, ExitCode: -1}
		fmt.Fprintf(&sb, "\n=== %s", r.Host)
		if r.Route != "" {
			fmt.Fprintf(&sb, " (via %s)", r.Route)
		}
		if r.Err != nil {
			e.Error = redactLine(r.Err.Error())
			fmt.Fprintf(&sb, ": could not run: %s\n", e.Error)
			failed = append(failed, r.Host)
			entries = append(entries, e)
			continue
		}
		res := r.Result
		stdout, stderr := outputText(res.Stdout), outputText(res.Stderr)
		e.ExitCode, e.Signal, e.TimedOut = res.ExitCode, res.Signal, res.TimedOut
		e.DurationMS = res.Duration.Milliseconds()
		e.Stdout, e.Stderr = stdout, stderr
		e.StdoutBytes, e.StderrBytes = res.Stdout.Total, res.Stderr.Total
		e.StdoutDropped, e.StderrDropped = res.Stdout.Dropped, res.Stderr.Dropped
		out += res.Stdout.Total
		errb += res.Stderr.Total
		if res.Truncated() {
			call.Outcome.Truncated = true
		}
		switch {
		case res.TimedOut:
			fmt.Fprintf(&sb, ": timed out after %s\n", res.Duration.Round(time.Millisecond))
			failed = append(failed, r.Host)
		case res.Signal != "":
			fmt.Fprintf(&sb, ": killed by %s\n", res.Signal)
			failed = append(failed, r.Host)
		default:
			fmt.Fprintf(&sb, ": exit code %d (%s)\n", res.ExitCode, res.Duration.Round(time.Millisecond))
			if res.ExitCode != 0 {
				failed = append(failed, r.Host)
			}
		}
		writeStream(&sb, "stdout", stdout)
		writeStream(&sb, "stderr", stderr)
		entries = append(entries, e)
	}
	fmt.Fprintf(&sb, "\n%d of %d hosts succeeded\n", len(results)-len(failed), len(results))
	o := &call.Outcome
	o.StdoutBytes, o.StderrBytes = out, errb
	o.Status = "ok"
	if len(failed) > 0 {
		o.Status = "error"
		o.Error = "failed on " + strings.Join(failed, ", ")
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(sb.String())},
		StructuredContent: map[string]any{"results": entries},
		IsError:           len(failed) > 0,
	}
}

// writeStream appends one labelled output stream, if it has any text.
func writeStream(sb *strings.Builder, name, text string) {
	if text == "" {
		return
	}
	fmt.Fprintf(sb, "%s:\n%s", name, text)
	if !strings.HasSuffix(text, "\n") {
		sb.WriteByte('\n')
	}
}
