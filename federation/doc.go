/*
Package federation serves the tools of downstream MCP servers through a
rigout gateway, each under its own namespace: tool x of downstream "a" is
the gateway's tool a__x.

# Overview

A [Federation] is built from a [Config] listing the downstream servers
([Server]): stdio commands that the federation starts and supervises
(restarted with backoff when they exit or stop answering), or streamable
HTTP URLs reached with their own credential (from [Credentials], never the
caller's token). Each downstream's tools are registered with
[rigout.Gateway.SetTools] under the prefix "name__", with their
descriptions, titles and input and output schemas, filtered by the
server's allow and deny lists. The set is refreshed when the downstream
sends notifications/tools/list_changed and on a timer; when it changes,
the gateway's tools/list follows and connected clients are told.

Calls pass the gateway's one chain like any local tool's: scope-checked by
their namespaced name, rate limited, audited with intent and done rows.
Every downstream tool is of risk class Exec — the downstream's own
readOnlyHint is the downstream's claim, not the operator's — unless the
server's ReadOnlyTools lists it. Progress the downstream reports reaches
the caller's progress token; a caller's cancellation, or the server's call
timeout, is sent downstream as notifications/cancelled (stdio) or by
ending the request (HTTP). A downstream's question to the person (elicitation) is
handed up as the call's input request and answered by replaying the call
with the caller's answer.

A stdio server's [Server].EnvCredentials are variables resolved through
[Credentials] at each start; their values (and an HTTP server's token) are
masked in its logged stderr, its results and its status. A call passes on
at most [Server].MaxResult bytes (cut with a marker), and no message longer
than [Server].MaxMessage is read: the federation starts stdio servers
itself and reads their output, like HTTP bodies, through a reader that
fails a longer line, which fails the call and restarts the connection.

A stdio server starts as a local command does ([exec.Local.StartPipes]):
inside [Config].Sandbox, in the view of a principal of its own where the
sandbox has views (its context names the server, [DownstreamFromContext]),
so it sees the machine as a command does, its hidden files hidden. Without
a Sandbox, New refuses a stdio server unless [Config].UnsafeNoSandbox says
to start it unconfined.

A downstream that hangs makes only its own calls time out; one that exits
mid-call fails that call with a clear error and is restarted; one that
lies (schemas that do not compile, duplicate names, oversized lists) has
the offending tools left out. All of it shows in the downstream_status
tool, whose description in tools/list carries a one-line summary, and in
[Federation.Health].

# Usage

	fed, err := federation.New(federation.Config{
		Servers: []federation.Server{
			{Name: "git", Command: []string{"mcp-git", "--repo", "/srv/repo"}},
		},
		Sandbox: sb, // stdio servers start in it, as local commands do
	})
	if err != nil {
		return err
	}
	gw, err := rigout.New(rigout.Config{})
	if err != nil {
		return err
	}
	if err := fed.Start(ctx, gw); err != nil {
		return err
	}
	defer fed.Close()
*/
package federation
