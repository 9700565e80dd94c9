package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/runstate"
	"github.com/rigout/rigout/internal/statedir"
	"github.com/rigout/rigout/sandboxcfg"
	"github.com/rigout/rigout/validate"
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

// finding is one doctor check's outcome.
type finding struct {
	Check  string `json:"check"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// runDoctor is `rigout doctor`.
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
	d := &doctor{flags: hf}
	d.run(ctx)
	failed := false
	for _, f := range d.found {
		failed = failed || f.Status == "fail"
		if *asJSON {
			b, _ := json.Marshal(f)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		fmt.Fprintf(stdout, "%-4s  %-22s %s\n", strings.ToUpper(f.Status), f.Check, f.Detail)
		if f.Fix != "" {
			fmt.Fprintf(stdout, "      %-22s fix: %s\n", "", f.Fix)
		}
	}
	if failed {
		return 1
	}
	return 0
}

type doctor struct {
	flags hostsFlags
	found []finding
	dir   string
	file  *config.File
}

func (d *doctor) add(check, status, detail, fix string) {
	d.found = append(d.found, finding{Check: check, Status: status, Detail: detail, Fix: fix})
}

func (d *doctor) run(ctx context.Context) {
	d.stateDir()
	d.config()
	if d.dir != "" {
		d.token()
		d.ledger(ctx)
		d.instance()
	}
	d.knownHosts()
	d.agent()
	d.hosts(ctx)
	d.sshHelper(os.Executable)
	d.sandbox()
}

// sshHelper says which rigout helpers SSH hosts get (docs/SSH_HELPER.md):
// the configured ones, the ones a release ships beside rigout, or none.
func (d *doctor) sshHelper(executable func() (string, error)) {
	exe, _ := executable()
	cfg, err := assembly.HelperConfig(d.file.SSH.Helper, nil, exe)
	if err != nil {
		d.add("ssh helper", "fail", err.Error(), "rigout config check "+shellQuote(d.flags.configPath))
		return
	}
	if len(cfg.Binaries) == 0 {
		d.add("ssh helper", "warn", cfg.Origin+": hosts run commands with the login's full powers and files go over plain SFTP",
			"copy rigout-helper-linux-<arch> from the release archive beside "+shellQuote(exe))
		return
	}
	d.add("ssh helper", "ok", "rigout-helper for "+cfg.Origin, "")
}

// private checks that path is not reachable by group or others.
func (d *doctor) private(check, path string, want os.FileMode) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return true
	}
	if fi.Mode().Perm()&0o077 != 0 {
		d.add(check, "fail", fmt.Sprintf("%s has mode %04o: group or others can reach it", path, fi.Mode().Perm()),
			fmt.Sprintf("chmod %04o %s", want, shellQuote(path)))
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		d.add(check, "fail", fmt.Sprintf("%s belongs to uid %d, not to this user (uid %d)", path, st.Uid, os.Geteuid()),
			fmt.Sprintf("chown %d %s", os.Geteuid(), shellQuote(path)))
		return false
	}
	return true
}

func (d *doctor) stateDir() {
	dir, err := statedir.Resolve(d.flags.stateDir, nil)
	if err != nil {
		d.add("state directory", "fail", err.Error(), "rigout doctor --state-dir DIR")
		return
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add("state directory", "ok", dir+" does not exist yet; rigout start creates it (mode 0700)", "")
		return
	case err != nil:
		d.add("state directory", "fail", err.Error(), "ls -ld "+shellQuote(dir))
		return
	case !fi.IsDir():
		d.add("state directory", "fail", dir+" is not a directory", fmt.Sprintf("mv %s %s.bak", shellQuote(dir), shellQuote(dir)))
		return
	}
	d.dir = dir
	if d.private("state directory", dir, 0o700) {
		d.add("state directory", "ok", dir+" (owner-only)", "")
	}
	// Everything in it holds credentials or evidence.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type().IsRegular() {
			d.private("state file", filepath.Join(dir, e.Name()), 0o600)
		}
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		d.add("state directory", "fail", "not writable: "+err.Error(), fmt.Sprintf("chown -R %d %s", os.Geteuid(), shellQuote(dir)))
		return
	}
	f.Close()
	os.Remove(f.Name())
}

func (d *doctor) config() {
	path := d.flags.configPath
	f, err := config.Load(path)
	if err != nil {
		d.file = &config.File{}
		d.add("configuration", "fail", err.Error(), "rigout config check "+shellQuote(path))
		return
	}
	d.file = f
	if path == "" {
		d.add("configuration", "ok", "no file (--config or RIGOUT_CONFIG): defaults", "")
	} else {
		d.add("configuration", "ok", path, "")
	}
	if _, err := f.AuthTokens(os.Getenv); err != nil {
		d.add("configured tokens", "fail", err.Error(), "rigout config check "+shellQuote(path))
	}
	if _, err := f.RateLimit.Limits(); err != nil {
		d.add("configuration", "fail", err.Error(), "rigout config check "+shellQuote(path))
	}
	if _, err := f.CommandPolicy(); err != nil {
		d.add("command policy", "fail", err.Error(), "rigout check --rules   (lists the rule IDs a policy may name)")
	} else if f.Policy == nil {
		d.add("command policy", "ok", "the default policy (deny mode, every rule on)", "")
	} else {
		d.add("command policy", "ok", fmt.Sprintf("%s mode, %d rule override(s)", f.Policy.Mode, len(f.Policy.Rules)), "")
	}
}

func (d *doctor) token() {
	path := filepath.Join(d.dir, "token")
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add("token file", "ok", "none yet; rigout start generates one (unless the configuration has tokens)", "")
		return
	case err != nil:
		d.add("token file", "fail", err.Error(), "rm "+shellQuote(path)+"   (rigout start generates a new one)")
		return
	}
	if t := strings.TrimSpace(string(b)); len(t) < 16 {
		d.add("token file", "fail", fmt.Sprintf("%s holds %d bytes; at least 16 are needed", path, len(t)), "rm "+shellQuote(path)+"   (rigout start generates a new one)")
		return
	}
	if d.private("token file", path, 0o600) {
		d.add("token file", "ok", path+" (owner-only)", "")
	}
}

func (d *doctor) ledger(ctx context.Context) {
	if d.file != nil && d.file.Audit.Postgres != "" {
		d.postgresLedger(ctx)
		d.oauthStoreCheck(ctx)
		return
	}
	path := filepath.Join(d.dir, "audit.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		d.add("audit ledger", "ok", "none yet; rigout start creates "+path, "")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cfg := sqlite.Config{Path: path, ReadOnly: true}
	if d.file != nil { // the chain key and anchor the configuration gives, if any
		key, err := chainKey(d.file.Audit, os.Getenv)
		if err != nil {
			d.add("audit ledger", "fail", err.Error(), "rigout config check")
			return
		}
		cfg.ChainKey, cfg.AnchorPath = key, d.file.Audit.AnchorFile
	}
	l, err := sqlite.Open(ctx, cfg)
	if err != nil {
		d.add("audit ledger", "fail", "does not open: "+err.Error(),
			fmt.Sprintf("mv %s %s.broken   (keep it as evidence; rigout start begins a new ledger)", shellQuote(path), shellQuote(path)))
		return
	}
	defer l.Close()
	rep, err := l.Verify(ctx)
	switch {
	case rep.Problem != nil:
		d.add("audit ledger", "fail", "hash chain broken: "+rep.Problem.Error(),
			"rigout audit verify --json   (names the first bad row; keep the file as evidence, then mv it aside to start a new ledger)")
	case err != nil:
		d.add("audit ledger", "fail", "cannot be verified: "+err.Error(), "rigout audit verify")
	default:
		head := "no head file"
		if rep.HeadSeq > 0 {
			head = fmt.Sprintf("head at row %d matches", rep.HeadSeq)
		}
		d.add("audit ledger", "ok", fmt.Sprintf("%s: %d rows, chain intact, %s", path, rep.Rows, head), "")
	}
}

func (d *doctor) instance() {
	st := runstate.Inspect(d.dir)
	switch st.State {
	case runstate.Running:
		if _, err := fetchHealth(context.Background(), st.Runtime.HealthURL); err != nil {
			d.add("gateway", "fail", fmt.Sprintf("PID %d is running but %s does not answer: %v", st.Runtime.PID, st.Runtime.HealthURL, err),
				"rigout stop"+stateDirArg(d.dir)+" && rigout start --detach"+stateDirArg(d.dir))
			return
		}
		d.add("gateway", "ok", fmt.Sprintf("running: PID %d at %s", st.Runtime.PID, st.Runtime.URL), "")
	case runstate.Stale:
		d.add("gateway", "warn", "stale state: "+st.Reason, "rigout start --detach"+stateDirArg(d.dir)+"   (cleans it)")
	default:
		d.add("gateway", "ok", "not running", "")
	}
}

func (d *doctor) knownHosts() {
	home, _ := os.UserHomeDir()
	user := d.flags.knownHosts
	if user == "" && home != "" {
		user = filepath.Join(home, ".ssh", "known_hosts")
	}
	files := []string{user}
	if d.dir != "" {
		files = append(files, filepath.Join(d.dir, "known_hosts"))
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
			d.add("known_hosts", "ok", f+" does not exist (no keys on file there)", "")
			continue
		}
		if _, err := knownhosts.New(f); err != nil {
			d.add("known_hosts", "fail", err.Error(), "ssh-keygen -l -f "+shellQuote(f)+"   (shows the lines it can read; remove or fix the bad one)")
			continue
		}
		d.add("known_hosts", "ok", f, "")
	}
}

func (d *doctor) agent() {
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		d.add("ssh agent", "warn", "SSH_AUTH_SOCK is not set: only key files can log in", "eval \"$(ssh-agent -s)\" && ssh-add")
		return
	}
	conn, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		d.add("ssh agent", "fail", "SSH_AUTH_SOCK="+sock+": "+err.Error(), "eval \"$(ssh-agent -s)\" && ssh-add")
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	keys, err := agent.NewClient(conn).List()
	switch {
	case err != nil:
		d.add("ssh agent", "fail", "the agent does not answer: "+err.Error(), "eval \"$(ssh-agent -s)\" && ssh-add")
	case len(keys) == 0:
		d.add("ssh agent", "warn", "the agent holds no keys", "ssh-add")
	default:
		d.add("ssh agent", "ok", fmt.Sprintf("%d key(s)", len(keys)), "")
	}
}

func (d *doctor) hosts(ctx context.Context) {
	r, _, err := d.flags.router(false, io.Discard)
	if err != nil {
		d.add("ssh", "fail", err.Error(), "rigout config check "+shellQuote(d.flags.configPath))
		return
	}
	defer r.Close()
	var eps []remote.Endpoint
	for _, ep := range r.List() {
		if ep.Host != "" {
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		d.add("hosts", "ok", "none configured (config file hosts or ~/.ssh/config)", "")
		return
	}
	results := make([]remote.TestResult, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { results[i] = r.Test(ctx, ep.Name, "doctor") })
	}
	wg.Wait()
	for i, ep := range eps {
		res := results[i]
		check := "host " + ep.Name
		if res.Reachable {
			d.add(check, "ok", fmt.Sprintf("%s: reachable, host key known, login works, %v", res.Route, res.Latency.Round(100*time.Microsecond)), "")
			continue
		}
		err := res.Err
		fix := "rigout hosts test " + shellQuote(ep.Name)
		what := "not reachable"
		switch {
		case errors.Is(err, remote.ErrHostKeyUnknown):
			what, fix = "host key unknown", "rigout hosts trust "+shellQuote(ep.Name)+"   (compare the fingerprint it shows with the host's own)"
		case errors.Is(err, remote.ErrHostKeyChanged), errors.Is(err, remote.ErrHostKeyRevoked):
			what, fix = "host key changed", "ssh-keygen -R "+shellQuote(ep.Address())+"   (only once you know why the key changed), then rigout hosts trust "+shellQuote(ep.Name)
		case errors.Is(err, remote.ErrKeysRejected), errors.Is(err, remote.ErrNoKeys), errors.Is(err, remote.ErrPasswordRequired):
			what, fix = "login fails", "ssh-copy-id -p "+fmt.Sprint(ep.Port)+" "+shellQuote(ep.User+"@"+ep.Host)+"   (installs your public key on the host)"
		case errors.Is(err, remote.ErrConnectTimeout):
			what, fix = "no answer", "check that sshd listens on "+ep.Address()+" (or fix the host's address in the config), then: rigout hosts test "+shellQuote(ep.Name)
		default:
			var de *remote.DialError
			if errors.As(err, &de) || strings.Contains(fmt.Sprint(err), "connection refused") {
				fix = "check that sshd listens on " + ep.Address() + " (or fix the host's address in the config), then: rigout hosts test " + shellQuote(ep.Name)
			}
		}
		d.add(check, "fail", fmt.Sprintf("%s (%s): %v", what, ep.Address(), err), fix)
	}
}

func (d *doctor) sandbox() {
	var policy = d.file.Policy
	p, err := d.file.CommandPolicy()
	if err != nil || policy == nil {
		p = nil
	}
	cfg, notes := sandboxcfg.Derive(p, d.dir)
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		d.add("kernel sandbox", "fail", err.Error(), "rigout doctor --json   (the sandbox paths come from the policy's protected_roots and critical_files)")
		return
	}
	defer sb.Close()
	if err := sb.Ready(); err != nil {
		d.add("kernel sandbox", "fail", err.Error(), "rigout doctor --json   (the sandbox paths come from the policy's protected_roots and critical_files)")
		return
	}
	st := sb.Status()
	switch {
	case !st.Enforced:
		d.add("kernel sandbox", "warn", "Landlock is missing ("+st.Reason+"): only the command policy guards local commands",
			"add landlock to the kernel's lsm= boot parameter (see /sys/kernel/security/lsm), reboot; or accept the policy alone")
	case !st.Signals:
		d.add("kernel sandbox", "warn", st.String(), "a kernel with Landlock ABI 6 or newer (Linux 6.12) enforces the rest")
	default:
		d.add("kernel sandbox", "ok", st.String(), "")
	}
	if st.Enforced {
		// A command through it, as the gateway runs them: on macOS this is
		// where sandbox-exec compiles the generated profile.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := (&exec.Local{Sandbox: sb}).Run(ctx, exec.Command{Argv: []string{"true"}})
		cancel()
		if err == nil && (res.ExitCode != 0 || !res.Sandboxed) {
			err = fmt.Errorf("exit %d, sandboxed %v: %s%s", res.ExitCode, res.Sandboxed, res.Stderr.Data, res.Unsandboxed)
		}
		if err != nil {
			d.add("kernel sandbox", "fail", "a command could not run in the sandbox: "+err.Error(), "rigout doctor --json")
		}
	}
	for _, n := range notes {
		d.add("kernel sandbox", "warn", n, "rigout start --state-dir /var/lib/rigout")
	}
	d.views(p, cfg)
}

// views checks that per-principal views work here, as rigout serve and
// stdio build them: a spawner started in new namespaces, its view built.
func (d *doctor) views(p *validate.Policy, cfg exec.SandboxConfig) {
	tmp, err := os.MkdirTemp("", "rigout-doctor-views-")
	if err != nil {
		d.add("per-principal views", "fail", err.Error(), "")
		return
	}
	defer os.RemoveAll(tmp)
	v := sandboxcfg.Views(p, tmp, nil, nil)
	v.TmpDir = filepath.Join(tmp, "tmp")
	cfg.Views = v
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		d.add("per-principal views", "fail", err.Error(), "")
		return
	}
	defer sb.Close()
	st := sb.Status()
	if st.Seatbelt {
		d.add("per-principal views", "ok", "each token's commands run under a Seatbelt profile of its own (its roots and private TMPDIR writable, hidden paths unreadable); no process or mount isolation on macOS", "")
		return
	}
	if st.Views {
		d.add("per-principal views", "ok", "each token's commands and file operations run in a view of the machine of its own (user, mount, PID and IPC namespaces, seccomp)", "")
		return
	}
	d.add("per-principal views", "warn", "unavailable: "+st.ViewsReason+": commands of every token share the gateway's view; tokens confined to roots or to reading are refused at start unless --unsafe-no-views",
		"allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu, kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for rigout), run on Linux 6.18 or newer")
}
