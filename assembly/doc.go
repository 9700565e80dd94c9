// Package assembly builds what the rigout binary serves: the gateway with
// every tool family its configuration turns on, and the resources the
// families share, from a typed configuration ([config.File]) and the
// settings the binary takes as flags. cmd/rigout is flags and subcommands
// over it; an embedder who wants "the whole binary, minus a family, plus
// a tool of mine" writes a few lines instead of copying main.
//
// # Overview
//
// [New] builds, in this order: the command gate (the file's policy), the
// kernel sandbox of local commands (Landlock and a view of the machine per
// principal), the SSH router (unless [Config.NoSSH]), the manager of
// background processes and terminal sessions, the credential store, the
// families — shell, process, files, terminal, system, docker, packages,
// credentials, activity, hosts, in that order, see [FamilyNames] — the
// gateway ([rigout.New]) with the ledger and the middleware that marks
// each call's processes, then the downstream MCP servers on it. It fails
// closed: a mistake in the configuration, a narrow token where the kernel
// cannot give per-principal views, a sandbox required but not enforced,
// are errors, and what was built so far is closed.
//
// Options change what is served: [Without] drops families by name,
// [WithTools] and [WithFamily] add an embedder's, [WithGatewayConfig]
// changes the gateway's configuration just before it is built.
//
// [Server.Close] closes everything, last built first: the downstream
// servers, the gateway, the background processes, the SSH router, the
// sandbox, and the ledger if [Config.CloseLedger] hands it over.
//
// [OpenLedger] opens the ledger the file names, as the binary does: on
// SQLite it first records the calls a killed gateway left unfinished as
// interrupted and ends what they left running, and it stamps each intent
// row with this process. [PostgresConfig] reads the PostgreSQL settings.
//
// [Check] is `rigout config check`: the file's own checks and those that
// need the executor, without starting anything.
//
// [Doctor] is `rigout doctor`: it checks what a gateway needs on this
// machine, changing nothing — the state directory and its modes, the
// configuration, the token file, the ledger and its hash chain, a gateway
// recorded as running, known_hosts, the SSH agent, every configured host,
// the SSH helpers, the kernel sandbox and per-principal views — and
// returns one [Finding] per check, each failure with the command that
// fixes it ([Finding.Fix]).
//
// # Usage
//
//	func main() {
//		exec.ServeSandboxSpawner() // first: the sandbox's views re-run the binary
//		f, err := config.Load("rigout.json")
//		…
//		cfg := assembly.Config{File: f, StateDir: dir, CloseLedger: true}
//		cfg.Ledger, err = assembly.OpenLedger(ctx, cfg) // the file's: SQLite or PostgreSQL
//		…
//		srv, err := assembly.New(cfg, assembly.Without(assembly.Terminal))
//		…
//		defer srv.Close()
//		err = transport.ServeStdio(ctx, srv.MCPServer(), os.Stdin, os.Stdout, transport.StdioConfig{})
//	}
//
// A [Server] embeds the *rigout.Gateway it built: MCPServer, Tools,
// RecordEvent and the rest are the gateway's. Its shared resources
// ([Server.Local], [Server.Router], [Server.Gate], [Server.Processes],
// [Server.Sandbox]) are there for [WithFamily] builders and for the
// binary's health and metrics.
//
// The package keeps no state: two Servers with different configurations
// work side by side in one process.
package assembly
