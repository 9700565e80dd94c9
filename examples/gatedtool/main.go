// Command gatedtool shows an embedder's own command-running tool going
// through rigout's one command gate, beside one built-in family.
//
// prune_release deletes an old release directory of a deployment with
// `rm -rf`. It is the embedder's tool, written in a few lines, and still
// gets every guarantee a built-in tool gets: the chain checks its path
// against the token's file roots and records an intent row before it runs;
// the gate (package gate) judges the exact argv it is about to run with the
// command policy, so pointing it at a protected root is refused with the
// rule that refused it, and the refusal is in the ledger. The built-in
// activity family (get_server_activity) shows those rows.
//
// Run it as an MCP stdio server, its ledger in a temp dir:
//
//	go run ./examples/gatedtool
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/activity"
	"github.com/rigout/rigout/transport"
	"github.com/rigout/rigout/validate"
)

// pruneRelease is the embedder's tool. It runs one argv on this machine,
// through the gate.
func pruneRelease(g *gate.Gate, run exec.Runner) rigout.Tool {
	return rigout.Tool{
		Name:        "prune_release",
		Description: "Delete an old release directory (rm -rf). Protected directories are refused.",
		Risk:        rigout.Exec,
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {"path": {"type": "string", "description": "Absolute path of the release directory."}},
			"required": ["path"],
			"additionalProperties": false
		}`),
		DefaultHost: "local",
		Paths:       []rigout.PathArg{{Name: "path"}},
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			dir, _ := call.Path("path") // resolved and checked by the chain
			argv := []string{"rm", "-rf", "--", dir}
			if res := g.Check(ctx, call, gate.Command{Host: "local", Argv: argv}); res != nil {
				return res, nil // refused, with the rule and the reason
			}
			res, err := run.Run(ctx, exec.Command{Argv: argv})
			if err != nil {
				return nil, err
			}
			code := res.ExitCode
			call.Outcome.ExitCode = &code
			if code != 0 {
				return rigout.ErrorResult("rm exited %d: %s", code, textsafe.Text(res.Stderr.Data)), nil
			}
			return rigout.TextResult(fmt.Sprintf("removed %s", dir)), nil
		},
	}
}

// newGateway builds the gateway: prune_release, guarded by a policy that
// protects root, and get_server_activity on the ledger.
func newGateway(logger *slog.Logger, ledger *sqlite.Ledger, root string) (*rigout.Gateway, error) {
	g, err := gate.New(gate.Config{
		Policy: &validate.Policy{ProtectedRoots: append(validate.DefaultProtectedRoots(), root)},
		Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	act, err := activity.New(activity.Config{Ledger: ledger})
	if err != nil {
		return nil, err
	}
	// The command runs in a kernel sandbox beneath the gate, as the
	// families' commands do (sandboxcfg.Derive gives the rigout binary's).
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		return nil, err
	}
	return rigout.New(rigout.Config{
		Name:   "gatedtool",
		Logger: logger,
		Audit:  ledger,
		Tools:  append(act.Tools(), pruneRelease(g, &exec.Local{Sandbox: sb})),
	})
}

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil)) // stdout carries the protocol
	if err := serve(logger); err != nil {
		logger.Error("gatedtool", "err", err)
		os.Exit(1)
	}
}

func serve(logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "gatedtool-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ledger, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "audit.db"), Logger: logger})
	if err != nil {
		return err
	}
	defer ledger.Close()
	releases := filepath.Join(dir, "releases")
	if err := os.Mkdir(releases, 0o755); err != nil {
		return err
	}
	gw, err := newGateway(logger, ledger, releases)
	if err != nil {
		return err
	}
	defer gw.Close()
	logger.Info("serving on stdio", "releases", releases)
	return transport.ServeStdio(ctx, gw.MCPServer(), os.Stdin, os.Stdout, transport.StdioConfig{Logger: logger})
}
