// Command localonly is a gateway that runs commands on this machine alone,
// built without package assembly (which links everything): the shell
// family in the kernel sandbox, reaching hosts through exec.LocalHosts,
// the SQLite ledger, stdio. It links no SSH code: deps_test.go checks it.
//
//	go run ./examples/localonly STATE_DIR
package main

import (
	"context"
	"log"
	"os"
	"path/filepath"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/transport"
)

func main() {
	exec.ServeSandboxSpawner() // first: the sandbox's views start this program again
	ctx := context.Background()
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	local := &exec.Local{Sandbox: sb}
	sh, err := shell.New(shell.Config{Local: local, Hosts: exec.LocalHosts{Local: local}})
	if err != nil {
		log.Fatal(err)
	}
	ledger, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(os.Args[1], "audit.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer ledger.Close()
	gw, err := rigout.New(rigout.Config{Name: "localonly", Tools: sh.Tools(), Audit: ledger})
	if err != nil {
		log.Fatal(err)
	}
	defer gw.Close()
	if err := transport.ServeStdio(ctx, gw.MCPServer(), os.Stdin, os.Stdout, transport.StdioConfig{}); err != nil {
		log.Print(err)
	}
}
