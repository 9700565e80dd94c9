// Command minimal is a rigout gateway in a few lines: the shell family in
// the kernel sandbox, one tool of its own, the SQLite ledger, stdio.
//
//	go run ./examples/minimal STATE_DIR
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/transport"
)

var hello = rigout.Tool{
	Name: "hello", Description: "Says hello.", Risk: rigout.ReadOnly,
	InputSchema: json.RawMessage(`{"type": "object"}`),
	Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
		return rigout.TextResult("hello"), nil
	},
}

func main() {
	exec.ServeSandboxSpawner() // first: the sandbox's views start this program again
	ctx, cfg := context.Background(), assembly.Config{File: &config.File{}, StateDir: os.Args[1], NoSSH: true, CloseLedger: true}
	var err error
	if cfg.Ledger, err = assembly.OpenLedger(ctx, cfg); err != nil { // SQLite: <state dir>/audit.db
		log.Fatal(err)
	}
	srv, err := assembly.New(cfg, assembly.Without(assembly.Process, assembly.Files, assembly.Terminal, assembly.Activity), assembly.WithTools(hello))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := transport.ServeStdio(ctx, srv.MCPServer(), os.Stdin, os.Stdout, transport.StdioConfig{}); err != nil {
		log.Print(err)
	}
}
