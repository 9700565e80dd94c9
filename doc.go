/*
Package rigout is a gateway that gives AI agents authenticated,
policy-checked, audited access to machines over the Model Context
Protocol (MCP).

# Overview

A [Gateway] holds one registry of tools. Each [Tool] is a row: a name, a
short description, a JSON Schema for its arguments, a [Risk] class and a
[Handler]. tools/list and dispatch both read the registry, so a tool cannot
be listed and not callable, or callable and not listed. Registering a name
twice is an error.

Every call passes through one chain of [Middleware]: panic recovery, timing
and logging, the audit ledger ([Config.Audit]: an intent row before any
tool that can change something runs, a done row after, refused calls
included; fail closed), concurrency caps, scope checks against the
caller's auth.Principal, argument validation against the tool's schema (a
violation is refused before the handler runs, naming the argument), then
the embedder's own middleware. No tool can skip the chain.

The built-in tool execute_command runs a shell command line or an exact
argv, on this machine or, with [Config.SSH], on SSH hosts (one, or several
at once), with a working directory, environment, stdin, timeout and
per-stream output cap. The command policy ([Config.Policy], package
validate) checks it first; a rule in confirm mode asks the person at the
client through MCP elicitation. Output is cleaned of terminal escape
sequences and secrets (see validate.Redact) before it leaves.
get_server_activity reads the ledger; manage_hosts manages SSH hosts.

A tool that sends notifications should use [Call.Progress], [Call.Log] or
[Call.Notify]: the gateway then delivers them before the call's result,
which mcp-go's streamable HTTP transport does not guarantee on its own.

A Gateway serves nothing by itself: hand [Gateway.MCPServer] to package
transport for stdio or streamable HTTP, or to your own transport.

# Usage

	gw, err := rigout.New(rigout.Config{
		Logger: slog.Default(),
		Tools: []rigout.Tool{{
			Name:        "uptime",
			Description: "How long this machine has been up.",
			Risk:        rigout.ReadOnly,
			Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
				b, err := os.ReadFile("/proc/uptime")
				if err != nil {
					return nil, err
				}
				return rigout.TextResult(string(b)), nil
			},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer gw.Close()
	err = transport.ServeStdio(ctx, gw.MCPServer(), os.Stdin, os.Stdout, transport.StdioConfig{})

The zero [Config] is valid. Several gateways with different configurations
can live in one process; a Gateway keeps no package-level state.
*/
package rigout
