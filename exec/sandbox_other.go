//go:build !linux

package exec

import (
	"errors"
	osexec "os/exec"
)

func landlockABI() (int, error) { return 0, errors.New("Landlock is Linux only") }

type ruleset struct{}

func (r *ruleset) close() error { return nil }

func buildRuleset(int, *sandboxPlan) (ruleset, error) { return ruleset{}, nil }

func (s *Sandbox) start(c *osexec.Cmd) (bool, error) { return false, c.Start() }

func protectProcess() error { return nil }

type launcher struct{}

func (s *Sandbox) dismissLocked(bool) {}

func noInheritedDescriptors() {}
