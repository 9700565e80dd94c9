package exec

import "errors"

// ErrNoSandbox means that commands would run on this machine without a
// kernel sandbox the embedder did not ask for: a Local without a Sandbox
// and without UnsafeNoSandbox, or no local runner at all where one is
// needed. The fix is in its text.
var ErrNoSandbox = errors.New("exec: local commands would run without a sandbox: give exec.Local a Sandbox (exec.NewSandbox; sandboxcfg.Derive derives one from a policy), or set exec.Local.UnsafeNoSandbox to run them unconfined")

// CheckSandboxed reports whether r confines the commands it runs on this
// machine, or was explicitly asked not to. It returns [ErrNoSandbox] when
// r is nil or a *Local with neither Sandbox nor UnsafeNoSandbox. A remote
// runner (package exec/remote's *SSH) and other runners are accepted: what
// runs elsewhere, or through an embedder's own runner, is not this
// sandbox's to confine. For a [Hosts], see its CheckSandboxed.
func CheckSandboxed(r Runner) error {
	switch r := r.(type) {
	case nil:
		return ErrNoSandbox
	case *Local:
		if r == nil || (r.Sandbox == nil && !r.UnsafeNoSandbox) {
			return ErrNoSandbox
		}
	}
	return nil
}
