// Package sandboxcfg derives a kernel sandbox for local commands (an
// [exec.SandboxConfig], with its per-principal [exec.ViewConfig]) from a
// command policy ([validate.Policy]) and a state directory, exactly as the
// rigout binary derives the sandbox of `rigout serve` and `rigout stdio`.
//
// # Overview
//
// The command policy names protected roots and critical files; the kernel
// sandbox must keep the same things whatever a command's spelling. [Derive]
// turns the policy into Landlock's terms (protected roots, critical files,
// sealed program directories, the hidden state directory) and [Views]
// into a view of the machine per principal (writable work areas, read-only
// protected trees, hidden secrets and same-user sockets, a private /tmp
// under the state directory). An embedder that builds its own gateway
// calls them to give its families the sandbox the binary has, rather than
// writing the lists again.
//
// # Usage
//
//	cfg, notes := sandboxcfg.Derive(policy, stateDir) // notes: what Landlock alone cannot hide
//	views := sandboxcfg.Views(policy, stateDir, workAreas, secretFiles)
//	views.ReadOnly = append(views.ReadOnly, cfg.Critical...)
//	views.Principal = principalOf // who a command runs for, from its context
//	cfg.Views = views
//	sb, err := exec.NewSandbox(cfg)
//	...
//	local := &exec.Local{Sandbox: sb}
//
// Views need the program's main function to call
// [exec.ServeSandboxSpawner] first. A nil policy stands for the default
// policy ([validate.DefaultProtectedRoots], [validate.DefaultCriticalFiles]).
//
// The package keeps no state: each call reads the home directory, the
// working directory and the environment afresh.
package sandboxcfg
