package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/hostsfile"
	"github.com/rigout/rigout/internal/statedir"
)

const hostsUsage = `Usage:
  rigout hosts list [flags]          list the hosts rigout knows (its configuration file and ~/.ssh/config)
  rigout hosts test NAME [flags]     connect to NAME and report the route and latency
  rigout hosts trust NAME [flags]    show NAME's host key fingerprint and record it in
                                     rigout's known_hosts (<state dir>/known_hosts);
                                     with --expect SHA256:…, only if NAME shows that key
  rigout hosts add NAME --address A [--user U] [--port P] [--key FILE] [--proxy-jump J] [--label L]...
                                     save a host in <state dir>/hosts.json (needs
                                     "ssh": {"persist_hosts": true}); a running gateway reads it at its next start
  rigout hosts remove NAME           forget a saved host

NAME is anything the host argument of a tool accepts: an alias, user@host, host:port.

Flags:
`

// hostsFlags are the flags of every hosts subcommand.
type hostsFlags struct {
	configPath string
	stateDir   string
	knownHosts string
	sshConfig  string
	expect     string
	timeout    time.Duration
	host       remote.HostConfig // add
	labels     stringList
}

func (f *hostsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.configPath, "config", os.Getenv("RIGOUT_CONFIG"), "rigout's JSON configuration file, for its hosts and host-key policy (env RIGOUT_CONFIG)")
	fs.StringVar(&f.stateDir, "state-dir", "", "state directory (env "+statedir.EnvVar+"; default $XDG_STATE_HOME/rigout or ~/.local/state/rigout)")
	fs.StringVar(&f.knownHosts, "known-hosts", "", "the user's known_hosts file, read only (default ~/.ssh/known_hosts)")
	fs.StringVar(&f.sshConfig, "ssh-config", "", "OpenSSH client configuration (default ~/.ssh/config)")
	fs.StringVar(&f.expect, "expect", "", "trust: record the key only if its fingerprint is this (SHA256:…)")
	fs.DurationVar(&f.timeout, "timeout", remote.DefaultConnectTimeout, "connect timeout, handshake included")
	fs.StringVar(&f.host.Address, "address", "", "add: host name or IP to connect to")
	fs.StringVar(&f.host.User, "user", "", "add: remote login")
	fs.IntVar(&f.host.Port, "port", 0, "add: SSH port (default 22)")
	fs.StringVar(&f.host.Key, "key", "", "add: private key file")
	fs.StringVar(&f.host.ProxyJump, "proxy-jump", "", "add: jump hosts, as ssh -J takes them")
	fs.Var(&f.labels, "label", "add: a label for fan-out selectors (repeatable)")
}

// runHosts runs `rigout hosts …` (args exclude the word "hosts") and returns
// the exit code: 0 success, 1 failure, 2 usage error.
func runHosts(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rigout hosts", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f hostsFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, hostsUsage)
		fs.PrintDefaults()
	}
	if len(args) == 0 {
		fs.Usage()
		return 2
	}
	sub := args[0]
	switch sub {
	case "help", "-h", "--help":
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, hostsUsage)
		fs.PrintDefaults()
		return 0
	case "list", "test", "trust", "add", "remove":
	default:
		fmt.Fprintf(stderr, "rigout hosts: unknown command %q. Expected one of: list, test, trust, add, remove\n", sub)
		return 2
	}
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	want := 1
	if sub == "list" {
		want = 0
	}
	if len(pos) != want {
		if want == 0 {
			fmt.Fprintf(stderr, "rigout hosts list: unexpected argument %q\n", pos[0])
		} else {
			fmt.Fprintf(stderr, "rigout hosts %s: want exactly one host NAME, got %d arguments\n", sub, len(pos))
		}
		return 2
	}
	if f.expect != "" && sub != "trust" {
		fmt.Fprintf(stderr, "rigout hosts %s: --expect applies to trust only\n", sub)
		return 2
	}
	if sub == "add" || sub == "remove" {
		return hostsSave(sub, pos[0], &f, stdout, stderr)
	}
	if f.host.Address != "" || f.host.User != "" || f.host.Port != 0 || f.host.Key != "" || f.host.ProxyJump != "" || len(f.labels) > 0 {
		fmt.Fprintf(stderr, "rigout hosts %s: --address, --user, --port, --key, --proxy-jump and --label apply to add only\n", sub)
		return 2
	}

	r, stateDir, err := f.router(sub == "trust", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rigout hosts %s: %v\n", sub, err)
		return 1
	}
	defer r.Close()

	switch sub {
	case "list":
		return hostsList(r, stdout)
	case "test":
		return hostsTest(ctx, r, pos[0], stdout, stderr)
	default:
		return hostsTrust(ctx, r, pos[0], f.expect, stateDir, stdout, stderr)
	}
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("trust web1 --state-dir x"). Everything after "--" is
// positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	for i, a := range args {
		if a == "--" {
			tail = args[i+1:]
			args = args[:i]
			break
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return append(pos, tail...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// router builds the remote.Router the way the gateway does: strict host
// keys, the user's ssh_config and known_hosts, rigout's own known_hosts
// in the state directory, the agent from SSH_AUTH_SOCK.
func (f *hostsFlags) router(ensure bool, stderr io.Writer) (*remote.Router, string, error) {
	dir, err := statedir.Resolve(f.stateDir, nil)
	if err != nil {
		return nil, "", err
	}
	if ensure {
		open, err := statedir.Ensure(dir)
		if err != nil {
			return nil, "", err
		}
		if open {
			fmt.Fprintf(stderr, "rigout hosts: warning: state directory %s is accessible to group or others\n", dir)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, "", fmt.Errorf("no home directory: %w", err)
	}
	known := f.knownHosts
	if known == "" {
		known = filepath.Join(home, ".ssh", "known_hosts")
	}
	cfg := f.sshConfig
	if cfg == "" {
		cfg = filepath.Join(home, ".ssh", "config")
	}
	file, err := config.Load(f.configPath)
	if err != nil {
		return nil, "", err
	}
	policy := remote.HostKeyStrict
	if file.SSH.HostKeys != "" {
		if policy, err = remote.ParseHostKeyPolicy(file.SSH.HostKeys); err != nil {
			return nil, "", err
		}
	}
	hosts, err := hostsfile.Router(file, dir, func(msg string, args ...any) {
		fmt.Fprintf(stderr, "rigout hosts: warning: %s %v\n", msg, args)
	})
	if err != nil {
		return nil, "", err
	}
	exe, _ := os.Executable()
	helper, err := assembly.HelperConfig(file.SSH.Helper, nil, exe)
	if err != nil {
		return nil, "", err
	}
	r, err := remote.NewRouter(remote.RouterConfig{
		Local:               &exec.Local{},
		Helper:              helper,
		Hosts:               hosts,
		SSHConfigFiles:      []string{cfg},
		UserKnownHostsFiles: []string{known},
		KnownHostsFile:      filepath.Join(dir, "known_hosts"),
		HostKeyPolicy:       policy,
		AgentSocket:         os.Getenv("SSH_AUTH_SOCK"),
		PassphraseEnv:       "RIGOUT_SSH_PASSPHRASE",
		HomeDir:             home,
		ConnectTimeout:      f.timeout,
		Logger:              slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	return r, dir, err
}

func hostsList(r *remote.Router, stdout io.Writer) int {
	eps := r.List()
	if len(eps) == 0 {
		fmt.Fprintln(stdout, "No hosts configured. Any host name still works as a plain SSH attempt; add Host entries to ~/.ssh/config to name them.")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADDRESS\tUSER\tVIA\tSOURCE\tLABELS")
	for _, ep := range eps {
		if ep.Host == "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%s\t%s\n", ep.Name, ep.Source, strings.Join(ep.Notes, "; "))
			continue
		}
		via := "-"
		if len(ep.Jumps) > 0 {
			var hops []string
			for _, j := range ep.Jumps {
				hops = append(hops, j.Name)
			}
			via = strings.Join(hops, ",")
		}
		labels := strings.Join(ep.Labels, ",")
		if labels == "" {
			labels = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ep.Name, ep.Address(), ep.User, via, ep.Source, labels)
	}
	tw.Flush()
	return 0
}

func hostsTest(ctx context.Context, r *remote.Router, name string, stdout, stderr io.Writer) int {
	d, err := r.Describe(ctx, name, "cli")
	if err != nil {
		fmt.Fprintf(stderr, "rigout hosts test: %v\n", err)
		return 1
	}
	if d.Local {
		fmt.Fprintf(stdout, "%s: this machine (route local)\n", name)
		return 0
	}
	for _, n := range d.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	if !d.Reachable {
		fmt.Fprintf(stderr, "%s: not reachable via %s: %s\n", name, d.Route, d.Error)
		return 1
	}
	fmt.Fprintf(stdout, "%s: reachable via %s in %v\n", name, d.Route, d.Latency.Round(100*time.Microsecond))
	fmt.Fprintf(stdout, "host key: %s\n", d.HostKey)
	fmt.Fprintf(stdout, "helper: %s\n", d.Helper)
	fmt.Fprintf(stdout, "interactive: %s\n", d.SSHCommand)
	return 0
}

// hostsTrust runs `rigout hosts trust NAME [--expect FP]`. With --expect it
// records the key only if the host shows that fingerprint. Without, a
// person runs it at a terminal: it shows the key (Router.HostKey) and
// records exactly the key shown (Router.Trust with its fingerprint), and
// says how to undo that if the fingerprint turns out wrong.
func hostsTrust(ctx context.Context, r *remote.Router, name, expect, stateDir string, stdout, stderr io.Writer) int {
	offers := func(res remote.TrustResult) {
		if res.Fingerprint != "" {
			fmt.Fprintf(stdout, "%s (%s) offers %s key %s\n", name, res.Address, res.KeyType, res.Fingerprint)
		}
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "rigout hosts trust: %v\n", err)
		if errors.Is(err, remote.ErrFingerprintMismatch) {
			fmt.Fprintln(stderr, "Nothing was recorded.")
		}
		return 1
	}
	fingerprint := expect
	if expect == "" {
		shown, err := r.HostKey(ctx, name)
		offers(shown)
		if err != nil {
			return fail(err)
		}
		if shown.AlreadyKnown {
			fmt.Fprintln(stdout, "Already trusted: that key is on file.")
			return 0
		}
		// A key is recorded only once someone has checked it: show it
		// and the command that records it, record nothing.
		fmt.Fprintf(stderr, "Nothing was recorded. Compare that fingerprint with the host's own "+
			"(ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the host, or its administrator); if they match, record it with:\n"+
			"  rigout hosts trust %s --expect %s%s\n", name, shown.Fingerprint, statedir.Flag(stateDir, nil))
		return 1
	}
	res, err := r.Trust(ctx, name, fingerprint)
	if expect != "" {
		offers(res)
	}
	if err != nil {
		return fail(err)
	}
	switch {
	case res.Recorded:
		fmt.Fprintf(stdout, "Recorded (hashed) in %s; to forget it: ssh-keygen -R '%s' -f '%s'\n", res.File, knownhosts.Normalize(res.Address), res.File)
	case res.AlreadyKnown:
		fmt.Fprintln(stdout, "Already trusted: that key is on file.")
	}
	return 0
}

// hostsSave runs `rigout hosts add|remove NAME`: it changes the hosts file
// the gateway reads at start, when the configuration opts in.
func hostsSave(sub, name string, f *hostsFlags, stdout, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "rigout hosts "+sub+": "+format+"\n", a...)
		return code
	}
	file, err := config.Load(f.configPath)
	if err != nil {
		return fail(1, "%v", err)
	}
	if !file.SSH.PersistHosts {
		where := f.configPath
		if where == "" {
			where = "a configuration file (--config or RIGOUT_CONFIG)"
		}
		return fail(1, "saved hosts are off: add \"ssh\": {\"persist_hosts\": true} to %s first, or list the host under \"hosts\" there", where)
	}
	dir, err := statedir.Resolve(f.stateDir, nil)
	if err != nil {
		return fail(1, "%v", err)
	}
	if _, err := statedir.Ensure(dir); err != nil {
		return fail(1, "%v", err)
	}
	store := hostsfile.New(dir)
	if sub == "remove" {
		if f.host.Address != "" || f.host.User != "" || f.host.Port != 0 || f.host.Key != "" || f.host.ProxyJump != "" || len(f.labels) > 0 {
			return fail(2, "remove takes only the NAME")
		}
		found, err := store.Delete(name)
		switch {
		case err != nil:
			return fail(1, "%v", err)
		case !found:
			return fail(1, "no saved host %q in %s", name, store)
		}
		fmt.Fprintf(stdout, "removed %s from %s; a running gateway forgets it at its next start (or now through manage_hosts remove)\n", name, store)
		return 0
	}
	h := f.host
	h.Name = name
	h.Labels = f.labels
	if h.Address == "" {
		return fail(2, "--address is required")
	}
	if slices.ContainsFunc(file.Hosts, func(c config.Host) bool { return c.Name == name }) {
		return fail(1, "%q is already a host in %s, which wins over saved hosts; change it there", name, f.configPath)
	}
	if err := store.Save(h); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "saved %s (%s) in %s; a running gateway reads it at its next start. Check it: rigout hosts test %s\n", name, h.Address, store, name)
	return 0
}
