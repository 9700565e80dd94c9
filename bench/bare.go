package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sandboxcfg"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/activity"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/transport"
)

// noLedger is an empty ledger for the bare gateway's get_server_activity:
// with audit off there is nothing to read, and scenario 3 compares what
// serving the tool costs.
type noLedger struct{}

func (noLedger) Query(context.Context, audit.Filter) ([]audit.Event, error) { return nil, nil }

// bareArg, as the first argument, makes this program serve a bare gateway
// instead of running the bench.
const bareArg = "serve-bare-gateway"

// runBare serves rigout's gateway over streamable HTTP on a free loopback
// port with authentication and audit both off: rigout.New without
// Config.Audit, and transport.NewHTTP with InsecureNoAuth and no Guard;
// get_server_activity reads an empty ledger.
// Everything else is as `rigout serve` runs local commands: the kernel
// sandbox the binary derives from the default policy and the state
// directory (sandboxcfg.Derive), a cgroup per call (exec.Local's
// tracking), the default command policy, and a sessions.Manager for
// commands that outlive wait_seconds, so that scenario 3 charges auth and
// audit only for what they cost.
// The binary has no switch for audit, so scenario 3 measures the gateway
// with both off here, in a process of its own like `rigout serve`. It
// prints "listening on URL" on stderr and stops on SIGINT or SIGTERM.
func runBare(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(bareArg, flag.ContinueOnError)
	fs.SetOutput(stderr)
	workDir := fs.String("workdir", "", "working directory of commands")
	stateDir := fs.String("state-dir", "", "state directory, as `rigout serve` has one: spool files, and hidden by the sandbox where it can be")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, _ := sandboxcfg.Derive(nil, *stateDir)
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "bare gateway: %v\n", err)
		return 1
	}
	defer sb.Close()
	local := &exec.Local{Sandbox: sb}
	procs, err := sessions.New(sessions.Config{Local: local, SpoolDir: *stateDir})
	if err != nil {
		fmt.Fprintf(stderr, "bare gateway: %v\n", err)
		return 1
	}
	defer procs.Close()
	sh, err := shell.New(shell.Config{Local: local, Processes: procs, WorkDir: *workDir})
	if err != nil {
		fmt.Fprintf(stderr, "bare gateway: %v\n", err)
		return 1
	}
	act, err := activity.New(activity.Config{Ledger: noLedger{}})
	if err != nil {
		fmt.Fprintf(stderr, "bare gateway: %v\n", err)
		return 1
	}
	gw, err := rigout.New(rigout.Config{Tools: append(sh.Tools(), act.Tools()...)})
	if err != nil {
		fmt.Fprintf(stderr, "bare gateway: %v\n", err)
		return 1
	}
	defer gw.Close()
	h, err := transport.NewHTTP(gw.MCPServer(), transport.HTTPConfig{
		Name:           gw.Config().Name,
		Version:        gw.Config().Version,
		InsecureNoAuth: true,
		Health:         func() map[string]any { return gw.Health().Fields() },
	})
	if err != nil {
		fmt.Fprintf(stderr, "bare gateway: %v\n", err)
		return 1
	}
	defer h.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "bare gateway: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "bare gateway listening on http://%s%s\n", ln.Addr(), transport.DefaultPath)
	if err := h.Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "bare gateway: %v\n", err)
		return 1
	}
	return 0
}
