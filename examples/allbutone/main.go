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

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/transport"
)

func main() {
	exec.ServeSandboxSpawner() // first: the sandbox's views start this program again
	f, err := config.Load(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	ctx, cfg := context.Background(), assembly.Config{File: f, ConfigPath: os.Args[1], StateDir: os.Args[2], CloseLedger: true}
	if cfg.Ledger, err = assembly.OpenLedger(ctx, cfg); err != nil { // the file's: SQLite or PostgreSQL
		log.Fatal(err)
	}
	srv, err := assembly.New(cfg, assembly.Without(assembly.Terminal))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := transport.ServeStdio(ctx, srv.MCPServer(), os.Stdin, os.Stdout, transport.StdioConfig{}); err != nil {
		log.Print(err)
	}
}
