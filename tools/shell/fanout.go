package shell

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/textsafe"
)

// fanOut runs one command on several hosts at once: the hosts the chain
// resolved and checked against the token's scopes (a selector expanded
// once, there). The gate judges the command once, since it is the same
// everywhere; one host failing does not fail the others.
func (f *Family) fanOut(ctx context.Context, call *rigout.Call, cmd exec.Command, check gate.Command) (*mcp.CallToolResult, error) {
	fo, ok := f.hosts.(exec.FanOuter)
	if !ok {
		call.Outcome.Status = audit.StatusError
		return rigout.ErrorResult("`hosts` needs SSH hosts, which this gateway does not have configured"), nil
	}
	hosts := call.Hosts()
	call.Outcome.Route = fmt.Sprintf("fan-out(%d hosts)", len(hosts))
	cmd.Dir, _ = call.Path("working_directory")
	check.Dir = cmd.Dir
	check.Host = fmt.Sprintf("%d hosts (%s)", len(hosts), strings.Join(hosts, ", "))
	var err error
	if check.Dialect, cmd.JudgedFor, err = fanOutDialect(ctx, f.hosts, hosts, call.Principal().Name); err != nil {
		call.Outcome.Status = audit.StatusInvalid
		return rigout.ErrorResult("%v. Nothing ran.", err), nil
	}
	if res := f.cfg.Gate.Check(ctx, call, check); res != nil {
		return res, nil
	}
	results, err := fo.FanOut(ctx, exec.FanOutRequest{Principal: call.Principal().Name, Hosts: hosts, Command: cmd})
	if err != nil {
		call.Outcome.Status = audit.StatusError
		return rigout.ErrorResult("fan-out: %v", err), nil
	}
	return fanOutResult(call, check.String(), results), nil
}

// fanOutResult reports every host's result: text for the model, one
// structured entry per host, and a summary outcome for the ledger.
func fanOutResult(call *rigout.Call, command string, results []exec.FanResult) *mcp.CallToolResult {
	var sb strings.Builder
	fmt.Fprintf(&sb, "$ %s\n", showCommand(command))
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
			e.Error = textsafe.Text([]byte(textsafe.FirstLine(r.Err.Error(), 500)))
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
		e.Sandboxed, e.Unsandboxed = res.Sandboxed, res.Unsandboxed
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
	o.Status = audit.StatusOK
	if len(failed) > 0 {
		o.Status = audit.StatusError
		o.Error = "failed on " + strings.Join(failed, ", ")
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(sb.String())},
		StructuredContent: map[string]any{"results": entries},
		IsError:           len(failed) > 0,
	}
}
