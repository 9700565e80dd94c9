package exec_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rigout/rigout/exec"
)

func ExampleLocal() {
	var local exec.Local
	res, err := local.Run(context.Background(), exec.Command{
		Shell:   "echo hello; exit 3",
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println("could not run:", err)
		return
	}
	fmt.Printf("%s exit=%d route=%s\n", res.Stdout.Data, res.ExitCode, res.Route)
	// Output:
	// hello
	//  exit=3 route=local
}

func ExampleLocal_timeout() {
	var local exec.Local
	res, _ := local.Run(context.Background(), exec.Command{
		Argv:    []string{"sleep", "60"},
		Timeout: 50 * time.Millisecond,
	})
	fmt.Println(res.TimedOut, res.Signal)
	// Output: true SIGTERM
}
