package family_test

import (
	"fmt"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/tools/internal/family"
)

// Ran puts what a command did into the call's outcome; a command on this
// machine that ran outside the sandbox says why, whatever the family.
func ExampleRan() {
	var o rigout.Outcome
	res := exec.Result{ExitCode: 2, Unsandboxed: "no sandbox configured"}
	res.Stdout.Total = 120
	family.Ran(&o, true, res)
	fmt.Println(*o.ExitCode, o.StdoutBytes, o.Unsandboxed)
	// Output: 2 120 no sandbox configured
}

// The names that mean this machine when a family has no SSH router.
func ExampleIsLocalName() {
	for _, h := range []string{"local", "LOCALHOST", "::1", "web1"} {
		fmt.Println(h, family.IsLocalName(h))
	}
	// Output:
	// local true
	// LOCALHOST true
	// ::1 true
	// web1 false
}
