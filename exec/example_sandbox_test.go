package exec_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rigout/rigout/exec"
)

// The gateway hides its state directory, keeps /etc/passwd from being
// written and /srv/data from being deleted, and reports what the kernel
// enforces. Each Result says whether its command ran confined.
func ExampleSandbox() {
	state, err := os.MkdirTemp("", "rigout-state-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(state)
	_ = os.WriteFile(filepath.Join(state, "token"), []byte("secret"), 0o600)

	sb, err := exec.NewSandbox(exec.SandboxConfig{
		Protected: []string{"/srv/data"}, // need not exist yet
		Critical:  []string{"/etc/passwd"},
		Hidden:    []string{state},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	_ = sb.Status().String() // for /health and `rigout doctor`

	local := &exec.Local{Sandbox: sb}
	res, err := local.Run(context.Background(), exec.Command{Shell: "cat " + filepath.Join(state, "token")})
	if err != nil {
		fmt.Println(err)
		return
	}
	if res.Sandboxed && res.ExitCode == 0 {
		fmt.Println("the sandbox let the token be read")
	}
	// Without Landlock, Unsandboxed says why ("no Landlock on this
	// kernel: ..."): only the command policy guards.
	fmt.Println("confined, or told why not:", res.Sandboxed || res.Unsandboxed != "")
	// Output: confined, or told why not: true
}
