package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
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
	if !c.noSandbox {
		c.sandboxEarly(logger) // while the ledger opens
	}
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

	out := &afterFirstWrite{w: stdout, fn: gw.StartSandbox}
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

// earlySandbox is a sandbox being built while the ledger opens.
type earlySandbox struct {
	done chan struct{}
	sb   *exec.Sandbox
	err  error
}

// sandboxEarly starts building the sandbox on its own goroutine (it needs
// the policy and the state directory, not the ledger), for gateway to
// take with takeSandbox. Call it after prepare.
func (c *common) sandboxEarly(logger *slog.Logger) {
	e := &earlySandbox{done: make(chan struct{})}
	c.early = e
	cfg, opts := c.serverConfig(logger), c.options()
	go func() {
		defer close(e.done)
		e.sb, e.err = assembly.NewSandbox(cfg, opts...)
	}()
}

// takeSandbox returns the sandbox sandboxEarly started, or nil for the
// assembly to build it.
func (c *common) takeSandbox() (*exec.Sandbox, error) {
	if c.early == nil {
		return nil, nil
	}
	e := c.early
	c.early = nil
	<-e.done
	return e.sb, e.err
}

// dropEarlySandbox closes the sandbox sandboxEarly started, when the
// gateway will not be built.
func (c *common) dropEarlySandbox() {
	if sb, err := c.takeSandbox(); err == nil && sb != nil {
		_ = sb.Close()
	}
}

// afterFirstWrite passes writes through to w and calls fn, once, after the
// first: rigout stdio starts the sandbox build once initialize is answered.
type afterFirstWrite struct {
	w    io.Writer
	once sync.Once
	fn   func()
}

func (a *afterFirstWrite) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.once.Do(a.fn)
	return n, err
}
