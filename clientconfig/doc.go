// Package clientconfig knows how MCP clients are told to reach a server:
// the entry each client wants (Claude Code, Claude Desktop, Cursor,
// VS Code, Codex, or the bare connection data of an SDK client), where
// each keeps its configuration file on each OS, and how to merge an entry
// into that file without losing the servers already there. `rigout
// connect` is flags and printing over it; a program that ships its own
// binary uses it to connect clients to that binary.
//
// # Overview
//
// An [Endpoint] is what a client connects to: a command it starts (stdio:
// Command, Args, Env) or a URL it calls (streamable HTTP: URL, Headers).
// [NewEntry] renders it for one [Client] under a server name: the
// [Entry.Snippet] to print or paste (a command line for Claude Code, a
// JSON block, a TOML table for Codex) and the structured [Entry.Server]
// that goes into the client's JSON file. [File] is where a client keeps
// that file for a user on an OS. [Merge] puts the entry into the file
// after a timestamped backup, keeping every other server and key: JSON
// files under their top key (mcpServers, or servers for VS Code), Codex's
// TOML by replacing the one table [mcp_servers.NAME] (and its sub-tables)
// and leaving every other line as it was.
//
// Secrets: an HTTP endpoint's Authorization header is a bearer token that
// can call every tool. The snippets of the JSON clients hold it; Codex's
// table never does: Codex reads it from the variable [CodexTokenVar],
// which [Entry.Environment] names with its value. Merge writes files
// owner-only (0600), backups too.
//
// # Usage
//
//	ep := clientconfig.Endpoint{URL: "http://127.0.0.1:8080/mcp",
//		Headers: map[string]string{"Authorization": "Bearer " + token}}
//	e, err := clientconfig.NewEntry(clientconfig.Cursor, "rigout", ep)
//	…
//	home, _ := os.UserHomeDir()
//	path, err := clientconfig.File(clientconfig.Cursor, home, runtime.GOOS, os.Getenv)
//	…
//	backup, replaced, err := clientconfig.Merge(path, e)
//
// The package keeps no state and starts nothing: it renders text and
// edits one file.
package clientconfig
