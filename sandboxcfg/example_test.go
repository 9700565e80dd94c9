package sandboxcfg_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sandboxcfg"
	"github.com/rigout/rigout/validate"
)

// The default policy's sandbox keeps /etc/passwd from being changed, and
// seals program directories instead of listing each file in them.
func ExampleDerive() {
	cfg, _ := sandboxcfg.Derive(nil, "/var/lib/rigout-example-nonexistent")
	fmt.Println(slices.Contains(cfg.Critical, "/etc/passwd"))
	fmt.Println(slices.Contains(cfg.Hidden, "/var/lib/rigout-example-nonexistent"))
	// Output:
	// true
	// true
}

// A policy's own protected roots and critical files replace the defaults.
func ExampleDerive_policy() {
	policy := &validate.Policy{
		ProtectedRoots: []string{"/srv/data"},
		CriticalFiles:  []string{"/srv/app.conf", "/opt/keys/**"},
	}
	cfg, _ := sandboxcfg.Derive(policy, "")
	fmt.Println(cfg.Protected)
	fmt.Println(cfg.Critical)
	fmt.Println(slices.Contains(cfg.ReadOnly, "/opt/keys"))
	// Output:
	// [/srv/data]
	// [/srv/app.conf]
	// true
}

// The views of a gateway whose state lies in /var/lib/rigout: the state
// directory is hidden from every principal, each principal's private /tmp
// lives beneath it, protected roots are read-only trees, and the unix
// sockets under /run are out of sight.
func ExampleViews() {
	policy := &validate.Policy{ProtectedRoots: []string{"/srv/data"}}
	v := sandboxcfg.Views(policy, "/var/lib/rigout", []string{"/srv/work"}, []string{"/etc/rigout/config.json"})
	fmt.Println(v.TmpDir)
	fmt.Println(slices.Contains(v.Hidden, "/var/lib/rigout"), slices.Contains(v.Hidden, "/etc/rigout/config.json"))
	fmt.Println(slices.Contains(v.Writable, "/srv/work"), slices.Contains(v.ReadOnly, "/srv/data"))
	fmt.Println(v.HideSockets)
	// The caller says who each command runs for, then builds the sandbox
	// with cfg.Views = v and exec.NewSandbox.
	v.Principal = func(ctx context.Context) exec.Principal { return exec.Principal{Name: "stdio"} }
	// Output:
	// /var/lib/rigout/sandbox/tmp
	// true true
	// true true
	// [/run]
}

// ProgramDir names the directories whose files package managers replace.
func ExampleProgramDir() {
	for _, dir := range []string{"/usr/bin", "/usr/lib/x86_64-linux-gnu", "/etc", filepath.Join("/usr", "local", "bin")} {
		fmt.Println(dir, sandboxcfg.ProgramDir(dir))
	}
	// Output:
	// /usr/bin true
	// /usr/lib/x86_64-linux-gnu true
	// /etc false
	// /usr/local/bin false
}
