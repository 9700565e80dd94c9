package exec

import (
	"context"
	"fmt"
	osexec "os/exec"
	"strings"
)

// CheckSeatbelt compiles profile by running /usr/bin/true under it with
// sandbox-exec, for doctor and start-up: an error means commands would not
// run sandboxed (sandbox-exec missing, or the profile refused).
func CheckSeatbelt(ctx context.Context, profile string) error {
	argv, err := SeatbeltArgv(profile, []string{"/usr/bin/true"})
	if err != nil {
		return err
	}
	out, err := osexec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("exec: seatbelt: %s: %w: %s", SeatbeltExec, err, strings.TrimSpace(string(out)))
	}
	return nil
}
