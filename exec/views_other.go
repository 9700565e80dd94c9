//go:build !linux

package exec

import (
	"context"
	"io"
	"os"
	"syscall"
	"time"
)

// ServeSandboxSpawner returns at once: views are Linux only.
func ServeSandboxSpawner() {}

type viewSet struct{}

func newViewSet(ViewConfig) *viewSet { return nil }

func (v *viewSet) available() error { return errNoViews }

func (v *viewSet) close() {}

type spawnRequest struct {
	path           string
	argv, env      []string
	dir            string
	tty            *os.File
	stdin          io.Reader
	stdout, stderr io.Writer
	ruleset        int
}

type nsChild struct{ pid int }

func (c *nsChild) wait(time.Duration) syscall.WaitStatus { return 0 }

func (s *Sandbox) spawnInView(context.Context, spawnRequest) (*nsChild, error) {
	return nil, errNoViews
}
