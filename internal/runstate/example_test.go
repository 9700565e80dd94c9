package runstate_test

import (
	"fmt"
	"os"

	"github.com/rigout/rigout/internal/runstate"
)

// A gateway takes the lock at start, records itself once it listens, and
// releases both when it stops; another process finds it with Inspect.
func Example() {
	dir, _ := os.MkdirTemp("", "runstate-example-")
	defer os.RemoveAll(dir)
	l, _, err := runstate.Acquire(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = l.Write(runstate.Runtime{URL: "http://127.0.0.1:8765/mcp"})
	st := runstate.Inspect(dir)
	fmt.Println(st.State, st.Runtime.URL)
	_ = l.Release()
	fmt.Println(runstate.Inspect(dir).State)
	// Output:
	// running http://127.0.0.1:8765/mcp
	// not running
}
