// Command rigout-helper is the program rigout uploads to an SSH host and
// starts over an exec channel, after verifying its SHA-256, to run that
// host's commands in a per-principal view of the host and its file
// operations beneath their roots (see docs/SSH_HELPER.md). It speaks the
// helper protocol on standard input and output:
//
//	rigout-helper serve [-cache DIR] [-sha256 HEX] [-exe-fd N] [-hide PATH]...
//	rigout-helper version
//
// Given -sha256, serve first re-executes itself from a sealed memfd of its
// own bytes and checks that they hash to HEX (exec.ExecSealedHelper),
// so that what serves is code nothing on the host can change any more; a
// mismatch exits 86, as the start line's own check does.
//
// It is built without cgo, one binary per GOOS/GOARCH, and handed to
// remote.HelperConfig.Binaries.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rigout/rigout/exec"
)

type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint(*l) }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// exitSealMismatch is the start line's exit status for a hash mismatch.
const exitSealMismatch = 86

// runSealed makes the helper run from its sealed memfd (re-executing
// itself, once) and returns what the hello reports about the code that
// runs. A helper whose sealed bytes do not match exits here.
func runSealed(sum string, sealed bool, exeFD int) string {
	if sum == "" {
		return "the program file, unverified (no -sha256)"
	}
	if sealed {
		if err := exec.VerifySealedHelper(sum); err != nil {
			fmt.Fprintln(os.Stderr, "rigout-helper:", err)
			os.Exit(exitSealMismatch)
		}
		return "sealed memfd"
	}
	argv := append([]string{"rigout-helper"}, os.Args[1:]...)
	err := exec.ExecSealedHelper(sum, append(argv, "-sealed"), exeFD)
	if errors.Is(err, exec.ErrHelperSealMismatch) {
		fmt.Fprintln(os.Stderr, "rigout-helper:", err)
		os.Exit(exitSealMismatch)
	}
	return "the verified file (no sealed memfd: " + err.Error() + ")"
}

func main() {
	exec.ServeSandboxSpawner()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rigout-helper serve|version")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "version":
		fmt.Println(exec.HelperVersion)
		return
	case "serve":
	default:
		fmt.Fprintf(os.Stderr, "rigout-helper: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	var cfg exec.HelperServeConfig
	var hidden listFlag
	fs.StringVar(&cfg.CacheDir, "cache", "", "the helper's cache directory")
	fs.StringVar(&cfg.SHA256, "sha256", "", "the verified hash of this program, reported back")
	fs.Var(&hidden, "hide", "a further path commands cannot read (repeatable)")
	exeFD := fs.Int("exe-fd", -1, "the descriptor the start line executed this program through")
	sealed := fs.Bool("sealed", false, "internal: running from the sealed memfd")
	_ = fs.Parse(os.Args[2:])
	cfg.Hidden = hidden
	cfg.Runs = runSealed(cfg.SHA256, *sealed, *exeFD)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGHUP, syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := exec.ServeHelper(ctx, os.Stdin, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "rigout-helper:", err)
		stop()
		os.Exit(1)
	}
}
