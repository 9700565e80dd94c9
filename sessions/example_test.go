package sessions_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
)

// A background process outlives the call that started it; its owner reads
// its output later, waiting for it instead of polling.
func Example() {
	ctx := context.Background()
	// Commands run in a kernel sandbox: here Landlock with nothing
	// protected; sandboxcfg.Derive derives the rigout binary's from a
	// policy. (exec.Local{UnsafeNoSandbox: true} runs them unconfined.)
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	if err := func() error {
		m, err := sessions.New(sessions.Config{Local: &exec.Local{Sandbox: sb}})
		if err != nil {
			return err
		}
		defer m.Close()
		p, err := m.Start(ctx, "alice", exec.Command{Shell: "sleep 0.2; echo built"})
		if err != nil {
			return err
		}
		// Later, perhaps in another tool call: the last lines, waiting up
		// to 10s for new output or the exit.
		p, err = m.Get("alice", p.ID())
		if err != nil {
			return err
		}
		rr, err := p.Read(ctx, sessions.ReadRequest{Tail: 20, Wait: 10 * time.Second})
		if err != nil {
			return err
		}
		fmt.Printf("%s", rr.Stdout.Data)
		_, err = m.Get("bob", p.ID())
		fmt.Println("bob:", err)
		return nil
	}(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// built
	// bob: sessions: not found
}

// A terminal session is one shell for many commands: the working
// directory and variables persist, and each command reports its exit code.
func ExampleManager_OpenTerminal() {
	ctx := context.Background()
	// Commands run in a kernel sandbox: here Landlock with nothing
	// protected; sandboxcfg.Derive derives the rigout binary's from a
	// policy. (exec.Local{UnsafeNoSandbox: true} runs them unconfined.)
	sb, err := exec.NewSandbox(exec.SandboxConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	m, err := sessions.New(sessions.Config{Local: &exec.Local{Sandbox: sb}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	t, err := m.OpenTerminal(ctx, "alice", sessions.TerminalOptions{Name: "work", Dir: "/"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, cmd := range []string{"cd /tmp && N=3", `echo "$N in $PWD"; (exit $N)`} {
		r, err := t.Exec(ctx, sessions.ExecRequest{Command: cmd, Timeout: 10 * time.Second})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("exit %d in %s: %q\n", r.ExitCode, r.Cwd, r.Output)
	}
	_, err = m.Terminal("bob", t.ID())
	fmt.Println("bob:", err)
	// Output:
	// exit 0 in /tmp: ""
	// exit 3 in /tmp: "3 in /tmp\n"
	// bob: sessions: not found
}
