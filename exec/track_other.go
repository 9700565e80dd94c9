//go:build !linux

package exec

import (
	"errors"
	osexec "os/exec"
	"syscall"
	"time"
)

func cgroupBase() (string, error) { return "", errors.New("cgroups are Linux only") }

type callCgroup struct{}

func (l *Local) attach(*osexec.Cmd, string) *callCgroup  { return nil }
func (g *callCgroup) pids() []int                        { return nil }
func (g *callCgroup) signal(syscall.Signal)              {}
func (g *callCgroup) kill(time.Duration)                 {}
func (g *callCgroup) close() error                       { return nil }
func (g *callCgroup) closeWhenEmpty(time.Duration) error { return nil }

func callProcs(string, int, uint64) ([]int, bool) { return nil, false }
func procStart(int) (uint64, bool)                { return 0, false }

func catches(int, syscall.Signal) bool { return false }

// EndLeftovers finds nothing outside Linux: there are no call cgroups,
// and no /proc to find the markers in.
func EndLeftovers(g GatewayProcess, call string) (Leftover, error) {
	if err := checkLeftoverArgs(g, call); err != nil {
		return Leftover{}, err
	}
	return Leftover{}, nil
}
