package remote

import "github.com/rigout/rigout/exec"

// CheckSandboxed is [exec.CheckSandboxed] of the router's local runner. A
// Router without one (running on this machine disabled) passes.
func (r *Router) CheckSandboxed() error {
	if r.cfg.Local == nil {
		return nil
	}
	return exec.CheckSandboxed(r.cfg.Local)
}
