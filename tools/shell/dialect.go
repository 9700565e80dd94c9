package shell

import (
	"context"
	"fmt"
	"strings"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/validate"
)

// dialect returns the shell of target's host, for the gate (the policy's
// dialect) and the runner (exec.Command.JudgedFor): POSIX on this
// machine; over SSH the host's configured or detected shell (see
// exec.SSH.Shell). When detection fails (the host does not answer, say),
// the command is judged as POSIX and JudgedFor makes the runner refuse it
// should the host turn out to run another shell.
func dialect(ctx context.Context, target exec.Target) (validate.Dialect, exec.Shell) {
	s, ok := target.Runner.(*exec.SSH)
	if !ok {
		return validate.DialectPOSIX, ""
	}
	sh, err := s.Shell(ctx)
	if err != nil {
		return validate.DialectPOSIX, exec.ShellPOSIX
	}
	return dialectOf(sh), sh
}

// dialectOf is the policy's dialect for a host's shell.
func dialectOf(sh exec.Shell) validate.Dialect {
	switch sh {
	case exec.ShellCmd:
		return validate.DialectCmd
	case exec.ShellPowerShell:
		return validate.DialectPowerShell
	}
	return validate.DialectPOSIX
}

// fanOutDialect returns the one shell every host of a fan-out runs. Hosts
// whose shell cannot be learned now count as POSIX (the runner refuses the
// command on any that turns out otherwise); hosts with different shells
// are an error, since one command line cannot be judged, or mean the
// same, in two shells.
func fanOutDialect(ctx context.Context, r *exec.Router, hosts []string, principal string) (validate.Dialect, exec.Shell, error) {
	var shells []string
	common := exec.Shell("")
	mixed := false
	for _, h := range hosts {
		t, err := r.Resolve(ctx, h, principal)
		if err != nil {
			continue // the fan-out reports it for this host
		}
		_, sh := dialect(ctx, t)
		if sh == "" {
			sh = exec.ShellPOSIX
		}
		shells = append(shells, h+": "+string(sh))
		if common == "" {
			common = sh
		} else if common != sh {
			mixed = true
		}
	}
	if mixed {
		return 0, "", fmt.Errorf("the hosts run different shells (%s): run the command once per shell", strings.Join(shells, ", "))
	}
	if common == "" {
		common = exec.ShellPOSIX
	}
	return dialectOf(common), common, nil
}
