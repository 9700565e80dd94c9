package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/transport"
)

// runStdio serves one MCP client on stdin and stdout. The client started
// the process, so it needs no token: it acts as the principal "stdio" with
// every scope except policy bypass, which --allow-bypass grants; its
// answers confirm held-back commands only with --interactive-client.
func runStdio(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, sec *secrets) int {
	fs := flag.NewFlagSet("rigout stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := common{sec: sec}
	c.register(fs)
	allowBypass := fs.Bool("allow-bypass", false, "let the client set bypass_security to skip the command policy")
	interactive := fs.Bool("interactive-client", false, "declare that the client is a person's own interactive client, so that the person's answer to the gateway's question (elicitation) can confirm a command a rule in confirm mode holds back")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rigout stdio: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	// The sandbox's ruleset (a walk of the protected directories) is built
	// once initialize is answered, not while it is: every command waits for
	// it either way.
	c.sandboxLater = true
	logger, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rigout stdio: %v\n", err)
		return 2
	}
	dir, err := c.prepare(logger)
	if err != nil {
		fmt.Fprintf(stderr, "rigout stdio: %v\n", err)
		return 1
	}
	c.sandboxEarly(logger) // while the ledger opens
	ledger, err := c.openLedger(ctx, dir, logger)
	if err != nil {
		c.dropEarlySandbox()
		fmt.Fprintf(stderr, "rigout stdio: %v\n", err)
		return 1
	}
	defer ledger.Close()

	p := auth.Principal{Name: "stdio", Transport: auth.TransportStdio, Scopes: auth.FullScopes()}
	p.Scopes.Bypass = *allowBypass
	p.Scopes.InteractiveClient = *interactive
	// server.start is committed while the gateway is assembled and the
	// client's handshake answered; every later row waits for it.
	gated := openStartGate(ctx, ledger, audit.Event{Type: audit.TypeServerStart, Time: time.Now().UTC(),
		Principal: p.Name, Transport: audit.Transport(p.Transport), Status: audit.StatusOK}, logger)
	defer gated.wait() // before the ledger closes
	gw, err := c.gateway(logger, gated, &p)
	if err != nil {
		fmt.Fprintf(stderr, "rigout stdio: %v\n", err)
		return 1
	}
	defer gw.Close()
	defer gw.RecordEvent(context.WithoutCancel(ctx), audit.Event{Type: audit.TypeServerStop, Principal: p.Name, Transport: audit.Transport(p.Transport), Status: audit.StatusOK})

	out := &afterFirstWrite{w: stdout, fn: func() {
		if gw.sandbox != nil {
			startSandbox(gw.sandbox, logger)
		}
	}}
	err = transport.ServeStdio(ctx, gw.MCPServer(), stdin, out, transport.StdioConfig{
		Logger:  logger,
		Context: func(ctx context.Context) context.Context { return auth.NewContext(ctx, p) },
	})
	if err != nil {
		logger.Error("stdio transport failed", "err", err)
		return 1
	}
	return 0
}
