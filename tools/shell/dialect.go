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
// machine; on a remote host (an exec.ShellDetector) its configured or
// detected shell, which may connect to it. An error is why the host
// could not be reached: the command could not run there either.
func dialect(ctx context.Context, target exec.Target) (validate.Dialect, exec.Shell, error) {
	s, ok := target.Runner.(exec.ShellDetector)
	if !ok || target.Local {
		return validate.DialectPOSIX, "", nil
	}
	sh, err := s.Shell(ctx)
	if err != nil {
		return validate.DialectPOSIX, exec.ShellPOSIX, err
	}
	return dialectOf(sh), sh, nil
}

// knownDialect is dialect without contacting the host: ok is false when
// target is a remote host whose shell is not known yet.
func knownDialect(target exec.Target) (d validate.Dialect, ok bool) {
	s, remote := target.Runner.(exec.ShellDetector)
	if !remote || target.Local {
		return validate.DialectPOSIX, true
	}
	sh, ok := s.KnownShell()
	return dialectOf(sh), ok
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
func fanOutDialect(ctx context.Context, r exec.Hosts, hosts []string, principal string) (validate.Dialect, exec.Shell, error) {
	var shells []string
	common := exec.Shell("")
	mixed := false
	for _, h := range hosts {
		t, err := r.Resolve(ctx, h, principal)
		if err != nil {
			continue // the fan-out reports it for this host
		}
		_, sh, _ := dialect(ctx, t) // a host that does not answer counts as POSIX
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
