package assembly_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/config"
)

// What the binary serves, minus the terminals, on a SQLite ledger the
// assembly closes last. (A program's main calls exec.ServeSandboxSpawner
// first; this package's TestMain does.)
func Example() {
	dir, err := os.MkdirTemp("", "assembly-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ledger, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	f := &config.File{Families: config.Families{System: true}}
	srv, err := assembly.New(assembly.Config{File: f, StateDir: dir, NoSSH: true, Ledger: ledger, CloseLedger: true},
		assembly.Without(assembly.Terminal))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	var names []string
	for _, t := range srv.Tools() {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Println(n)
	}
	// Output:
	// bulk_file_transfer
	// execute_command
	// file_operations
	// get_hardware_info
	// get_server_activity
	// process
	// search_files
	// system_monitoring
}
