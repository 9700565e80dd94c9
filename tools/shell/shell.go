// Package shell is the tool family that runs commands: execute_command, on
// this machine or on SSH hosts, one at a time or fanned out.
//
// # Overview
//
// A [Family] is built from its own [Config] — the local executor, the SSH
// router, the command gate, timeouts and the output cap — and returns its
// tools through the same public API an embedder's tools use
// ([rigout.Tool]). It declares to the gateway's chain which arguments name
// hosts (host, and hosts with its label selectors) and paths
// (working_directory, resolved through symlinks on this machine), so the
// chain checks the token's scopes on what the command will really touch.
// Every command passes the command gate (package gate) before it runs.
//
// With [Config].Processes, a command (local or on an SSH host) that still runs after
// wait_seconds (default [Config].Wait, 20s) is not killed and does not
// block the call: it becomes a background process of the calling
// principal, and the result gives its ID, the output so far and the exact
// process call that reads on (package tools/process). Such a command ends
// only by its own timeout if the caller set one, a stop, or the Manager's
// ceiling. An SSH command keeps running on its channel of the pooled
// connection, never restarted.
//
// # Usage
//
//	sh, err := shell.New(shell.Config{Hosts: router})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: sh.Tools(), Audit: ledger})
package shell

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/internal/family"
)

// Defaults used when the corresponding Config field is zero.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxTimeout       = time.Hour
	DefaultProgressInterval = 2 * time.Second
	DefaultWait             = 20 * time.Second
	// DefaultShowMax is the output a result shows before the rest is
	// kept for paging: 16 KiB, so that a result with its text and its
	// structuredContent stays well under the ~25k tokens past which
	// clients spill a result to a file or cut out its middle.
	DefaultShowMax = 16 << 10
)

// Config configures the family. Local (or Hosts) is required, so that
// no command runs outside a sandbox by accident; the rest has useful zero
// values: local commands only, the default command policy, the gateway
// process's working directory.
type Config struct {
	// Local runs commands on this machine: an exec.Local with a Sandbox,
	// or with UnsafeNoSandbox to run them unconfined; with Hosts, the
	// hosts' local runner instead, which must be one too. Required
	// without Hosts: New fails with exec.ErrNoSandbox.
	Local exec.Runner
	// Hosts, if set, resolves the host argument (the SSH package's
	// Router lets commands reach SSH hosts through its routing ladder);
	// `hosts` fans out when it is an exec.FanOuter. The caller owns it
	// and closes it. If nil, exec.LocalHosts with Local: this machine
	// only.
	Hosts exec.Hosts
	// Gate checks every command before it runs. If nil, a gate with the
	// default policy.
	Gate *gate.Gate
	// WorkDir is the working directory of local commands that name none,
	// and the base of relative ones. If empty, the process's working
	// directory.
	WorkDir string
	// DefaultTimeout applies to commands that set none. If zero,
	// DefaultTimeout (30s).
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout a caller may ask for. If zero,
	// DefaultMaxTimeout (1h).
	MaxTimeout time.Duration
	// MaxOutput caps each output stream of a command, in bytes. If zero,
	// exec.DefaultMaxOutput (1 MiB).
	MaxOutput int
	// ProgressInterval is how often a running command reports progress to
	// a client that passed a progress token. If zero,
	// DefaultProgressInterval.
	ProgressInterval time.Duration
	// Processes, if set, lets commands outlive their call:
	// execute_command takes wait_seconds, and a command still running
	// after it is handed off to this Manager as a background process (read
	// with the process tool). Give the Manager the same exec.Local as
	// Local, to keep its sandbox. The caller owns and closes it. If nil,
	// every command runs within its call.
	Processes *sessions.Manager
	// Wait is the default wait_seconds, with Processes. If zero,
	// DefaultWait (20s), well under the 60s most clients give a call.
	Wait time.Duration
	// ShowMax bounds the output a result shows, with Processes: a command
	// that prints more (both streams) is kept as a finished process, and
	// its result shows the first and last lines of each stream and the
	// process read that pages the rest by line. If zero, DefaultShowMax.
	ShowMax int
	// Credentials, if set, lets execute_command take `secrets`
	// ({"ENV_NAME": "alias"}): each value is resolved from the store when
	// the command runs, injected into its environment (over SSH through
	// its standard input, never its command line), and masked from every
	// output stream before the model, the ledger or a spool file sees it.
	// If nil, the argument does not exist.
	Credentials *credentials.Store
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

// Family is the shell tool family. It is safe for concurrent use.
type Family struct {
	cfg   Config
	hosts exec.Hosts
}

// New builds the family from cfg, which is copied.
func New(cfg Config) (*Family, error) {
	c := cfg
	hosts, g, err := family.Setup("shell", c.Local, c.Hosts, c.Gate)
	if err != nil {
		return nil, err
	}
	c.Gate = g
	if c.WorkDir, err = family.WorkDir("shell", c.WorkDir); err != nil {
		return nil, err
	}
	if err := family.Timeouts("shell", &c.DefaultTimeout, &c.MaxTimeout, DefaultTimeout, DefaultMaxTimeout); err != nil {
		return nil, err
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = exec.DefaultMaxOutput
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	if c.Wait <= 0 {
		c.Wait = DefaultWait
	}
	if c.Wait > c.MaxTimeout {
		return nil, fmt.Errorf("shell: Wait %v exceeds MaxTimeout %v", c.Wait, c.MaxTimeout)
	}
	if c.ShowMax <= 0 {
		c.ShowMax = DefaultShowMax
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Family{cfg: c, hosts: hosts}, nil
}

// Tools returns the family's tools, in the order tools/list shows them.
func (f *Family) Tools() []rigout.Tool {
	return []rigout.Tool{f.ExecuteCommand()}
}

// Instructions is the family's part of the initialize instructions.
func (f *Family) Instructions() string {
	s := "Use execute_command with a shell `command` or an exact `argv`; results give the exit code, stdout and stderr. " +
		"Destructive commands are refused by policy."
	if f.cfg.Processes != nil {
		s += " A local command still running after wait_seconds becomes a background process: read it with the process tool."
	}
	if _, ok := f.hosts.(exec.FanOuter); ok {
		s += " It also reaches SSH hosts: set `host` (an alias, user@host, or auto), or `hosts` to run on several at once."
	}
	return s
}

// resolveDir is the working_directory declaration's resolver: on this
// machine the directory the command will really run in (~ expanded,
// relative to WorkDir, every symlink and .. resolved, so /proc/self/root/etc
// and a link to / are judged as what they are); on an SSH host, the path
// cleaned (it cannot be resolved from here; a relative one stays relative
// to the remote home).
func (f *Family) resolveDir(ctx context.Context, call *rigout.Call, dir string) (string, error) {
	hosts := call.Hosts()
	if len(hosts) == 1 {
		t, err := f.hosts.Resolve(ctx, hosts[0], call.Principal().Name)
		if err == nil && t.Local {
			return f.localDir(dir)
		}
	}
	if dir == "" {
		return "", fmt.Errorf("empty working directory")
	}
	if path.IsAbs(dir) {
		return path.Clean(dir), nil
	}
	return dir, nil
}

// localDir resolves a local working directory: empty means WorkDir, ~ and
// ~/x the home directory, a relative path is taken from WorkDir; then
// symlinks are evaluated and the result must be a directory.
func (f *Family) localDir(dir string) (string, error) {
	switch {
	case dir == "":
		dir = f.cfg.WorkDir
	case dir == "~" || strings.HasPrefix(dir, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%q: no home directory: %w", dir, err)
		}
		dir = filepath.Join(home, dir[1:])
	case !filepath.IsAbs(dir):
		dir = filepath.Join(f.cfg.WorkDir, dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%q does not exist", dir)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%q does not exist", dir)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%q is not a directory", dir)
	}
	return real, nil
}
