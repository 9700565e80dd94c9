// Command rigout-helper is the program rigout uploads to an SSH host and
// starts over an exec channel, after verifying its SHA-256, to run that
// host's commands in a per-principal view of the host and its file
// operations beneath their roots (see docs/SSH_HELPER.md). It speaks the
// helper protocol on standard input and output:
//
//	rigout-helper serve [-cache DIR] [-sha256 HEX] [-hide PATH]...
//	rigout-helper version
//
// It is built without cgo, one binary per GOOS/GOARCH, and handed to
// exec.HelperConfig.Binaries.
package main

import (
	"context"
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
	_ = fs.Parse(os.Args[2:])
	cfg.Hidden = hidden
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGHUP, syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := exec.ServeHelper(ctx, os.Stdin, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "rigout-helper:", err)
		stop()
		os.Exit(1)
	}
}
