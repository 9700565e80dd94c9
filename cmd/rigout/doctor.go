package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rigout/rigout/assembly"
)

const doctorUsage = `usage: rigout doctor [flags]

Check what rigout needs, without changing anything: the state directory and
its permissions, the configuration and its command policy, the token file,
the audit ledger (opens, verifies the hash chain and its head), the
known_hosts files, the SSH agent, every configured host (reachable, host key
known, login works, latency), the kernel sandbox, and a gateway recorded as
running. Every failure names the one command that fixes it.

Exit status: 0 nothing failed (warnings allowed), 1 something failed, 2 usage error.

Flags:
`

// runDoctor is `rigout doctor`: flags and printing over assembly.Doctor.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rigout doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), doctorUsage); fs.PrintDefaults() }
	var hf hostsFlags
	hf.register(fs)
	asJSON := fs.Bool("json", false, "print the findings as JSON lines")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rigout doctor: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if hf.expect != "" {
		fmt.Fprintln(stderr, "rigout doctor: --expect applies to rigout hosts trust only")
		return 2
	}
	found := assembly.Doctor(ctx, assembly.DoctorConfig{ConfigPath: hf.configPath, StateDir: hf.stateDir,
		KnownHosts: hf.knownHosts, SSHConfig: hf.sshConfig, ConnectTimeout: hf.timeout})
	failed := false
	for _, f := range found {
		failed = failed || f.Status == assembly.StatusFail
		if *asJSON {
			b, _ := json.Marshal(f)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		fmt.Fprintf(stdout, "%-4s  %-22s %s\n", strings.ToUpper(string(f.Status)), f.Check, f.Detail)
		if f.Fix != "" {
			fmt.Fprintf(stdout, "      %-22s fix: %s\n", "", f.Fix)
		}
	}
	if failed {
		return 1
	}
	return 0
}
