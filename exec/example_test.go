package exec_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/rigout/rigout/exec"
)

// Example runs a command on this machine. A non-zero exit is a Result, not
// an error.
func Example() {
	ctx := context.Background()
	var local exec.Local
	res, err := local.Run(ctx, exec.Command{Shell: "echo hello; exit 3", Timeout: time.Minute})
	if err != nil {
		log.Fatal(err) // it could not run at all
	}
	fmt.Printf("exit %d: %s", res.ExitCode, res.Stdout.Data)
	// Output: exit 3: hello
}

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
