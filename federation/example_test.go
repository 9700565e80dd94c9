package federation_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/federation"
)

// A downstream MCP server started over stdio: its tools join the
// gateway's under its name. (The downstream here is this test binary.)
func Example() {
	gw, err := rigout.New(rigout.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gw.Close()
	// Stdio servers start in a kernel sandbox, as local commands do (here
	// Landlock alone: views need exec.ServeSandboxSpawner in main).
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	fed, err := federation.New(federation.Config{Sandbox: sb, Servers: []federation.Server{{
		Name:          "a",
		Command:       []string{os.Args[0], "-test.run=^$"},
		Env:           map[string]string{"FEDTEST_DOWNSTREAM": "stdio", "FEDTEST_DIR": os.TempDir()},
		ReadOnlyTools: []string{"echo"},
		Timeout:       30 * time.Second,
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		fmt.Println(err)
		return
	}
	defer fed.Close()
	for _, t := range gw.Tools() {
		if t.Name == "a__echo" || t.Name == "a__pid" {
			fmt.Println(t.Name, t.Risk)
		}
	}
	fmt.Println(fed.Status()[0].State)
	// Output:
	// a__echo read-only
	// a__pid exec
	// ready
}
