//go:build !linux && !darwin

package runstate

import (
	"errors"
	"fmt"
)

// Of reports that process identities are not implemented on this system,
// so every recorded gateway is stale and none is ever signalled.
func Of(pid int) (Identity, error) {
	return Identity{}, fmt.Errorf("runstate: PID %d: process identity: %w", pid, errors.ErrUnsupported)
}
