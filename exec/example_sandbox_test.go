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

// Each token gets a view of the machine of its own: its roots writable,
// everything else read-only, the state directory hidden, a private /tmp.
// The program's main (here TestMain) calls exec.ServeSandboxSpawner first.
func ExampleViewConfig() {
	state, err := os.MkdirTemp("", "rigout-state-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(state)
	work, err := os.MkdirTemp("", "rigout-work-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(work)

	type tokenKey struct{}
	sb, err := exec.NewSandbox(exec.SandboxConfig{
		Views: &exec.ViewConfig{
			Writable: []string{work},
			Hidden:   []string{state},
			TmpDir:   filepath.Join(state, "tmp"),
			Principal: func(ctx context.Context) exec.Principal {
				name, _ := ctx.Value(tokenKey{}).(string)
				return exec.Principal{Name: name, ReadOnly: name == "observer"}
			},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	if !sb.Status().Views {
		fmt.Println("views unavailable here:", sb.Status().ViewsReason != "")
		return
	}
	l := &exec.Local{Sandbox: sb}
	ctx := context.WithValue(context.Background(), tokenKey{}, "observer")
	res, err := l.Run(ctx, exec.Command{Shell: "touch " + work + "/x 2>/dev/null || echo refused", Dir: "/"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(res.Stdout.Data))
}
