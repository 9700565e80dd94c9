// Command allbutone serves what `rigout stdio` serves, minus one family
// (the terminals), from a rigout configuration file: the whole binary's
// assembly in a few lines.
//
//	go run ./examples/allbutone rigout.json STATE_DIR
package main

import (
	"context"
	"log"
	"os"
	"path/filepath"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/transport"
)

func main() {
	exec.ServeSandboxSpawner() // first: the sandbox's views start this program again
	ctx, dir := context.Background(), os.Args[2]
	f, err := config.Load(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	ledger, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "audit.db"), StoreArgs: true})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := assembly.New(assembly.Config{File: f, StateDir: dir, ConfigPath: os.Args[1], Ledger: ledger, CloseLedger: true},
		assembly.Without(assembly.Terminal))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := transport.ServeStdio(ctx, srv.MCPServer(), os.Stdin, os.Stdout, transport.StdioConfig{}); err != nil {
		log.Print(err)
	}
}
