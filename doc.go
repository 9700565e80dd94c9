/*
Package rigout is a gateway that gives AI agents authenticated,
policy-checked, audited access to machines over the Model Context
Protocol (MCP).

# Overview

A [Gateway] holds one registry of tools. Each [Tool] is a row: a name, a
short description, a JSON Schema for its arguments, a [Risk] class and a
[Handler], and declarations of what its arguments touch: which name hosts
([Tool.Hosts], selectors included), which name paths ([Tool.Paths],
resolved as the tool will act on them), the risk of each action
([Tool.Actions]) and the capabilities a call needs ([Tool.Needs]).
tools/list and dispatch both read the registry; registering a name twice,
or a host-like argument that is not declared, is an error.

Every call passes through one chain, in a fixed order: its done row in the
audit ledger and its log line are deferred first, so they are written
whatever happens; the arguments are checked against the schema; the
declarations are settled (the action's risk, the hosts, the paths); the
caller's scopes are checked on all of them; the concurrency caps and the
rate limits ([Config.RateLimit]) apply; an intent row is committed before
anything above read-only runs (fail closed, [Config.Audit]); then the
embedder's [Middleware] and the handler run, panics recovered. No tool can
skip the chain, and a tool that forgets a declaration fails at
registration, not in review.

The package knows no executor, command policy or database: tool families
live in packages of their own under tools/ (shell, hosts, activity, …) and
are built on this package's exported API exactly as an embedder's own
tools are. Every tool that runs a command passes it through package gate,
the one command gate, which uses [Call.Confirm] to ask the person at the
client when a rule says so.

A tool that sends notifications should use [Call.Progress], [Call.Log] or
[Call.Notify]: the gateway then delivers them before the call's result,
which mcp-go's streamable HTTP transport does not guarantee on its own.
Text a tool shows should go through textsafe.Text or textsafe.Block (package
[github.com/rigout/rigout/textsafe]), which clean terminal controls and mask
secrets.

A tool that can run long sets [Tool.Tasks]: clients that speak MCP tasks
(protocol 2025-11-25) may then run a call as a task and poll it. The call
passes the same chain; the gateway binds each task to the principal that
created it and ends it on tasks/cancel ([Call.Task] tells the handler).

A Gateway serves nothing by itself: hand [Gateway.MCPServer] to package
transport for stdio or streamable HTTP, or to your own transport.

# Usage

Build a gateway from tools — your own, a family's, or both — and talk to
it through any MCP client (see the package example):

	sb, err := exec.NewSandbox(exec.SandboxConfig{}) // or sandboxcfg.Derive(policy, stateDir)
	if err != nil {
		return err
	}
	sh, err := shell.New(shell.Config{Local: &exec.Local{Sandbox: sb}})
	if err != nil {
		return err
	}
	gw, err := rigout.New(rigout.Config{Tools: append(sh.Tools(), greet)})
	if err != nil {
		return err
	}
	defer gw.Close()

The zero [Config] is valid. Several gateways with different configurations
can live in one process; a Gateway keeps no package-level state.
*/
package rigout
