package sandboxcfg_test

import (
	"fmt"
	"slices"

	"github.com/rigout/rigout/internal/sandboxcfg"
)

// The default policy's sandbox keeps /etc/passwd from being changed, and
// seals program directories instead of listing each file in them.
func ExampleDerive() {
	cfg, _ := sandboxcfg.Derive(nil, "/var/lib/rigout-example-nonexistent")
	fmt.Println(slices.Contains(cfg.Critical, "/etc/passwd"))
	fmt.Println(sandboxcfg.ProgramDir("/usr/bin"), sandboxcfg.ProgramDir("/usr/lib/x86_64-linux-gnu"), sandboxcfg.ProgramDir("/etc"))
	// Output:
	// true
	// true true false
}
