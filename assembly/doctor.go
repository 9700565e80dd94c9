package assembly

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth/pgstore"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/runstate"
	"github.com/rigout/rigout/internal/shellquote"
	"github.com/rigout/rigout/internal/statedir"
	"github.com/rigout/rigout/sandboxcfg"
	"github.com/rigout/rigout/validate"
)

// Status is the outcome of one [Doctor] check.
type Status string

// The statuses of a [Finding]: only [StatusFail] makes `rigout doctor`
// exit 1.
const (
	StatusOK   Status = "ok"   // nothing to do
	StatusWarn Status = "warn" // works, with less protection or fewer means
	StatusFail Status = "fail" // broken: Fix says how to mend it
)

// Finding is one [Doctor] check's outcome: which check, how it went,
// what was found, and the one command that fixes it (empty when there is
// nothing to fix).
type Finding struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// DoctorConfig says what [Doctor] checks. The zero value checks the
// defaults: no configuration file, the default state directory, the
// user's OpenSSH files.
type DoctorConfig struct {
	// ConfigPath is rigout's JSON configuration file; empty means none
	// (the defaults).
	ConfigPath string
	// StateDir is the state directory; empty means the default
	// (RIGOUT_STATE_DIR, else $XDG_STATE_HOME/rigout, …).
	StateDir string
	// KnownHosts and SSHConfig are the user's OpenSSH files, read only
	// (default ~/.ssh/known_hosts and ~/.ssh/config).
	KnownHosts, SSHConfig string
	// ConnectTimeout bounds each host's connection, handshake included.
	// If zero, remote.DefaultConnectTimeout is used.
	ConnectTimeout time.Duration
	// Executable is the rigout program, beside which a release ships the
	// SSH helpers. If empty, os.Executable is used.
	Executable string
	// Getenv reads the environment (tokens, chain key, password, state
	// directory, SSH_AUTH_SOCK). If nil, os.Getenv is used.
	Getenv func(string) string
}

// Doctor checks what rigout needs, changing nothing: the state directory
// and the permissions of what it holds, the configuration and its
// command policy, the token file, the audit ledger (it opens read-only,
// its hash chain and head verify; on PostgreSQL, the OAuth state too), a
// gateway recorded as running (its health answers), the known_hosts
// files, the SSH agent, every configured host (reachable, host key known,
// login works), the SSH helpers, the kernel sandbox (a command runs in
// it) and per-principal views. The findings come in that order; each
// failure names the command that fixes it. It is safe for concurrent
// use: each call has its own state.
func Doctor(ctx context.Context, cfg DoctorConfig) []Finding {
	d := &doctor{cfg: cfg}
	if d.cfg.Getenv == nil {
		d.cfg.Getenv = os.Getenv
	}
	if d.cfg.Executable == "" {
		d.cfg.Executable, _ = os.Executable()
	}
	d.stateDir()
	d.config()
	if d.dir != "" {
		d.token()
	}
	// A PostgreSQL ledger lives outside the state directory: it is
	// checked before the directory exists too.
	if d.dir != "" || d.file.Audit.Postgres != "" {
		d.ledger(ctx)
	}
	if d.dir != "" {
		d.instance(ctx)
	}
	d.knownHosts()
	d.agent()
	d.hosts(ctx)
	d.sshHelper()
	d.sandbox(ctx)
	return d.found
}

// doctor is one Doctor call's state.
type doctor struct {
	cfg     DoctorConfig
	found   []Finding
	dir     string       // the state directory, when it exists
	file    *config.File // never nil once config has run
	loadErr error        // why the configuration did not load
}

func (d *doctor) add(check string, status Status, detail, fix string) {
	d.found = append(d.found, Finding{Check: check, Status: status, Detail: detail, Fix: fix})
}

// sshHelper says which rigout helpers SSH hosts get (docs/SSH_HELPER.md):
// the configured ones, the ones a release ships beside rigout, or none.
func (d *doctor) sshHelper() {
	exe := d.cfg.Executable
	cfg, err := HelperConfig(d.file.SSH.Helper, nil, exe)
	if err != nil {
		d.add("ssh helper", StatusFail, err.Error(), "rigout config check "+shellquote.Quote(d.cfg.ConfigPath))
		return
	}
	if len(cfg.Binaries) == 0 {
		d.add("ssh helper", StatusWarn, cfg.Origin+": hosts run commands with the login's full powers and files go over plain SFTP",
			"copy rigout-helper-linux-<arch> from the release archive beside "+shellquote.Quote(exe))
		return
	}
	d.add("ssh helper", StatusOK, "rigout-helper for "+cfg.Origin, "")
}

// private checks that path is not reachable by group or others.
func (d *doctor) private(check, path string, want os.FileMode) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return true
	}
	if fi.Mode().Perm()&0o077 != 0 {
		d.add(check, StatusFail, fmt.Sprintf("%s has mode %04o: group or others can reach it", path, fi.Mode().Perm()),
			fmt.Sprintf("chmod %04o %s", want, shellquote.Quote(path)))
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		d.add(check, StatusFail, fmt.Sprintf("%s belongs to uid %d, not to this user (uid %d)", path, st.Uid, os.Geteuid()),
			fmt.Sprintf("chown %d %s", os.Geteuid(), shellquote.Quote(path)))
		return false
	}
	return true
}

func (d *doctor) stateDir() {
	dir, err := statedir.Resolve(d.cfg.StateDir, d.cfg.Getenv)
	if err != nil {
		d.add("state directory", StatusFail, err.Error(), "rigout doctor --state-dir DIR")
		return
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add("state directory", StatusOK, dir+" does not exist yet; rigout start creates it (mode 0700)", "")
		return
	case err != nil:
		d.add("state directory", StatusFail, err.Error(), "ls -ld "+shellquote.Quote(dir))
		return
	case !fi.IsDir():
		d.add("state directory", StatusFail, dir+" is not a directory", fmt.Sprintf("mv %s %s.bak", shellquote.Quote(dir), shellquote.Quote(dir)))
		return
	}
	d.dir = dir
	if d.private("state directory", dir, 0o700) {
		d.add("state directory", StatusOK, dir+" (owner-only)", "")
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
		d.add("state directory", StatusFail, "not writable: "+err.Error(), fmt.Sprintf("chown -R %d %s", os.Geteuid(), shellquote.Quote(dir)))
		return
	}
	f.Close()
	os.Remove(f.Name())
}

func (d *doctor) config() {
	path := d.cfg.ConfigPath
	f, err := config.Load(path)
	if err != nil {
		d.file, d.loadErr = &config.File{}, err
		d.add("configuration", StatusFail, err.Error(), "rigout config check "+shellquote.Quote(path))
		return
	}
	d.file = f
	if path == "" {
		d.add("configuration", StatusOK, "no file (--config or RIGOUT_CONFIG): defaults", "")
	} else {
		d.add("configuration", StatusOK, path, "")
	}
	if _, err := f.AuthTokens(d.cfg.Getenv); err != nil {
		d.add("configured tokens", StatusFail, err.Error(), "rigout config check "+shellquote.Quote(path))
	}
	if _, err := f.RateLimit.Limits(); err != nil {
		d.add("configuration", StatusFail, err.Error(), "rigout config check "+shellquote.Quote(path))
	}
	if _, err := f.CommandPolicy(); err != nil {
		d.add("command policy", StatusFail, err.Error(), "rigout check --rules   (lists the rule IDs a policy may name)")
	} else if f.Policy == nil {
		d.add("command policy", StatusOK, "the default policy (deny mode, every rule on)", "")
	} else {
		d.add("command policy", StatusOK, fmt.Sprintf("%s mode, %d rule override(s)", f.Policy.Mode, len(f.Policy.Rules)), "")
	}
}

func (d *doctor) token() {
	path := filepath.Join(d.dir, "token")
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add("token file", StatusOK, "none yet; rigout start generates one (unless the configuration has tokens)", "")
		return
	case err != nil:
		d.add("token file", StatusFail, err.Error(), "rm "+shellquote.Quote(path)+"   (rigout start generates a new one)")
		return
	}
	if t := strings.TrimSpace(string(b)); len(t) < 16 {
		d.add("token file", StatusFail, fmt.Sprintf("%s holds %d bytes; at least 16 are needed", path, len(t)), "rm "+shellquote.Quote(path)+"   (rigout start generates a new one)")
		return
	}
	if d.private("token file", path, 0o600) {
		d.add("token file", StatusOK, path+" (owner-only)", "")
	}
}

func (d *doctor) ledger(ctx context.Context) {
	if d.file.Audit.Postgres != "" {
		d.postgresLedger(ctx)
		d.oauthStore(ctx)
		return
	}
	path := filepath.Join(d.dir, "audit.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		d.add("audit ledger", StatusOK, "none yet; rigout start creates "+path, "")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// The chain key and anchor the configuration gives, if any.
	key, err := d.file.Audit.ChainKey(d.cfg.Getenv)
	if err != nil {
		d.add("audit ledger", StatusFail, err.Error(), "rigout config check")
		return
	}
	l, err := sqlite.Open(ctx, sqlite.Config{Path: path, ReadOnly: true, ChainKey: key, AnchorPath: d.file.Audit.AnchorFile})
	if err != nil {
		d.add("audit ledger", StatusFail, "does not open: "+err.Error(),
			fmt.Sprintf("mv %s %s.broken   (keep it as evidence; rigout start begins a new ledger)", shellquote.Quote(path), shellquote.Quote(path)))
		return
	}
	defer l.Close()
	rep, err := l.Verify(ctx)
	switch {
	case rep.Problem != nil:
		d.add("audit ledger", StatusFail, "hash chain broken: "+rep.Problem.Error(),
			"rigout audit verify --json   (names the first bad row; keep the file as evidence, then mv it aside to start a new ledger)")
	case err != nil:
		d.add("audit ledger", StatusFail, "cannot be verified: "+err.Error(), "rigout audit verify")
	default:
		head := "no head file"
		if rep.HeadSeq > 0 {
			head = fmt.Sprintf("head at row %d matches", rep.HeadSeq)
		}
		d.add("audit ledger", StatusOK, fmt.Sprintf("%s: %d rows, chain intact, %s", path, rep.Rows, head), "")
	}
}

// postgresLedger checks a PostgreSQL ledger: the connection, the schema
// version and the chain.
func (d *doctor) postgresLedger(ctx context.Context) {
	cfg, err := PostgresConfig(d.file.Audit, d.cfg.Getenv, true, nil)
	if err != nil {
		d.add("audit ledger", StatusFail, err.Error(), "rigout config check")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	l, err := postgres.Open(ctx, cfg)
	var sv *postgres.SchemaVersionError
	switch {
	case errors.Is(err, postgres.ErrNoLedger):
		d.add("audit ledger", StatusOK, "PostgreSQL reachable, no ledger yet; rigout start creates it", "")
		return
	case errors.As(err, &sv):
		d.add("audit ledger", StatusFail, err.Error(), "run a rigout of the schema's version, or start this one once to migrate")
		return
	case err != nil:
		d.add("audit ledger", StatusFail, "PostgreSQL: "+err.Error(),
			"check audit.postgres, the password variable audit.password_env and that the server accepts connections (pg_isready)")
		return
	}
	defer l.Close()
	rep, err := l.Verify(ctx)
	switch {
	case rep.Problem != nil:
		d.add("audit ledger", StatusFail, "hash chain broken: "+rep.Problem.Error(),
			"rigout audit verify --json   (names the first bad row; keep the database as evidence)")
	case err != nil:
		d.add("audit ledger", StatusFail, "cannot be verified: "+err.Error(), "rigout audit verify")
	default:
		d.add("audit ledger", StatusOK, fmt.Sprintf("PostgreSQL %s: schema version %d, %d rows from %d gateway(s), chain intact",
			l.Label(), postgres.SchemaVersion, rep.Rows, len(rep.Gateways)), "")
	}
}

// oauthStore checks the OAuth state on PostgreSQL: the connection and
// the schema version, changing nothing.
func (d *doctor) oauthStore(ctx context.Context) {
	if d.file.OAuth == nil {
		return
	}
	pc, err := PostgresConfig(d.file.Audit, d.cfg.Getenv, true, nil)
	if err != nil {
		d.add("OAuth state", StatusFail, err.Error(), "rigout config check")
		return
	}
	v, label, err := pgstore.Inspect(ctx, pgstore.Config{DSN: pc.DSN, Password: pc.Password, UnsafeAmbientCredentials: pc.UnsafeAmbientCredentials})
	switch {
	case err != nil:
		d.add("OAuth state", StatusFail, err.Error(), "check audit.postgres and audit.password_env; run a rigout of the schema's version")
	case v == 0:
		d.add("OAuth state", StatusOK, "PostgreSQL "+label+" reachable, no OAuth tables yet; rigout serve creates them", "")
	default:
		d.add("OAuth state", StatusOK, fmt.Sprintf("PostgreSQL %s: OAuth schema version %d, shared by the gateways on this database", label, v), "")
	}
}

func (d *doctor) instance(ctx context.Context) {
	st := runstate.Inspect(d.dir)
	switch st.State {
	case runstate.Running:
		if _, err := FetchHealth(ctx, st.Runtime.HealthURL); err != nil {
			d.add("gateway", StatusFail, fmt.Sprintf("PID %d is running but %s does not answer: %v", st.Runtime.PID, st.Runtime.HealthURL, err),
				"rigout stop"+statedir.Flag(d.dir, d.cfg.Getenv)+" && rigout start --detach"+statedir.Flag(d.dir, d.cfg.Getenv))
			return
		}
		d.add("gateway", StatusOK, fmt.Sprintf("running: PID %d at %s", st.Runtime.PID, st.Runtime.URL), "")
	case runstate.Stale:
		d.add("gateway", StatusWarn, "stale state: "+st.Reason, "rigout start --detach"+statedir.Flag(d.dir, d.cfg.Getenv)+"   (cleans it)")
	default:
		d.add("gateway", StatusOK, "not running", "")
	}
}

func (d *doctor) knownHosts() {
	home, _ := os.UserHomeDir()
	user := d.cfg.KnownHosts
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
			d.add("known_hosts", StatusOK, f+" does not exist (no keys on file there)", "")
			continue
		}
		if _, err := knownhosts.New(f); err != nil {
			d.add("known_hosts", StatusFail, err.Error(), "ssh-keygen -l -f "+shellquote.Quote(f)+"   (shows the lines it can read; remove or fix the bad one)")
			continue
		}
		d.add("known_hosts", StatusOK, f, "")
	}
}

func (d *doctor) agent() {
	sock := d.cfg.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		d.add("ssh agent", StatusWarn, "SSH_AUTH_SOCK is not set: only key files can log in", "eval \"$(ssh-agent -s)\" && ssh-add")
		return
	}
	conn, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		d.add("ssh agent", StatusFail, "SSH_AUTH_SOCK="+sock+": "+err.Error(), "eval \"$(ssh-agent -s)\" && ssh-add")
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	keys, err := agent.NewClient(conn).List()
	switch {
	case err != nil:
		d.add("ssh agent", StatusFail, "the agent does not answer: "+err.Error(), "eval \"$(ssh-agent -s)\" && ssh-add")
	case len(keys) == 0:
		d.add("ssh agent", StatusWarn, "the agent holds no keys", "ssh-add")
	default:
		d.add("ssh agent", StatusOK, fmt.Sprintf("%d key(s)", len(keys)), "")
	}
}

// router builds the SSH router as New does, warnings discarded.
func (d *doctor) router() (*remote.Router, error) {
	if d.loadErr != nil {
		return nil, d.loadErr
	}
	dir, err := statedir.Resolve(d.cfg.StateDir, d.cfg.Getenv)
	if err != nil {
		return nil, err
	}
	c := Config{File: d.file, StateDir: dir, SSHConfig: d.cfg.SSHConfig, KnownHosts: d.cfg.KnownHosts, Getenv: d.cfg.Getenv}
	rc, err := c.routerConfig(slog.New(slog.DiscardHandler), true)
	if err != nil {
		return nil, err
	}
	rc.Local, rc.ConnectTimeout = &exec.Local{}, d.cfg.ConnectTimeout
	return remote.NewRouter(*rc)
}

func (d *doctor) hosts(ctx context.Context) {
	r, err := d.router()
	if err != nil {
		d.add("ssh", StatusFail, err.Error(), "rigout config check "+shellquote.Quote(d.cfg.ConfigPath))
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
		d.add("hosts", StatusOK, "none configured (config file hosts or ~/.ssh/config)", "")
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
			d.add(check, StatusOK, fmt.Sprintf("%s: reachable, host key known, login works, %v", res.Route, res.Latency.Round(100*time.Microsecond)), "")
			continue
		}
		err := res.Err
		fix := "rigout hosts test " + shellquote.Quote(ep.Name)
		what := "not reachable"
		switch {
		case errors.Is(err, remote.ErrHostKeyUnknown):
			what, fix = "host key unknown", "rigout hosts trust "+shellquote.Quote(ep.Name)+"   (compare the fingerprint it shows with the host's own)"
		case errors.Is(err, remote.ErrHostKeyChanged), errors.Is(err, remote.ErrHostKeyRevoked):
			what, fix = "host key changed", "ssh-keygen -R "+shellquote.Quote(ep.Address())+"   (only once you know why the key changed), then rigout hosts trust "+shellquote.Quote(ep.Name)
		case errors.Is(err, remote.ErrKeysRejected), errors.Is(err, remote.ErrNoKeys), errors.Is(err, remote.ErrPasswordRequired):
			what, fix = "login fails", "ssh-copy-id -p "+fmt.Sprint(ep.Port)+" "+shellquote.Quote(ep.User+"@"+ep.Host)+"   (installs your public key on the host)"
		case errors.Is(err, remote.ErrConnectTimeout):
			what, fix = "no answer", "check that sshd listens on "+ep.Address()+" (or fix the host's address in the config), then: rigout hosts test "+shellquote.Quote(ep.Name)
		default:
			var de *remote.DialError
			if errors.As(err, &de) || strings.Contains(fmt.Sprint(err), "connection refused") {
				fix = "check that sshd listens on " + ep.Address() + " (or fix the host's address in the config), then: rigout hosts test " + shellquote.Quote(ep.Name)
			}
		}
		d.add(check, StatusFail, fmt.Sprintf("%s (%s): %v", what, ep.Address(), err), fix)
	}
}

func (d *doctor) sandbox(ctx context.Context) {
	var policy = d.file.Policy
	p, err := d.file.CommandPolicy()
	if err != nil || policy == nil {
		p = nil
	}
	cfg, notes := sandboxcfg.Derive(p, d.dir)
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		d.add("kernel sandbox", StatusFail, err.Error(), "rigout doctor --json   (the sandbox paths come from the policy's protected_roots and critical_files)")
		return
	}
	defer sb.Close()
	if err := sb.Ready(); err != nil {
		d.add("kernel sandbox", StatusFail, err.Error(), "rigout doctor --json   (the sandbox paths come from the policy's protected_roots and critical_files)")
		return
	}
	st := sb.Status()
	switch {
	case !st.Enforced:
		d.add("kernel sandbox", StatusWarn, "Landlock is missing ("+st.Reason+"): only the command policy guards local commands",
			"add landlock to the kernel's lsm= boot parameter (see /sys/kernel/security/lsm), reboot; or accept the policy alone")
	case !st.Signals:
		d.add("kernel sandbox", StatusWarn, st.String(), "a kernel with Landlock ABI 6 or newer (Linux 6.12) enforces the rest")
	default:
		d.add("kernel sandbox", StatusOK, st.String(), "")
	}
	if st.Enforced {
		// A command through it, as the gateway runs them: on macOS this is
		// where sandbox-exec compiles the generated profile.
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		res, err := (&exec.Local{Sandbox: sb}).Run(ctx, exec.Command{Argv: []string{"true"}})
		cancel()
		if err == nil && (res.ExitCode != 0 || !res.Sandboxed) {
			err = fmt.Errorf("exit %d, sandboxed %v: %s%s", res.ExitCode, res.Sandboxed, res.Stderr.Data, res.Unsandboxed)
		}
		if err != nil {
			d.add("kernel sandbox", StatusFail, "a command could not run in the sandbox: "+err.Error(), "rigout doctor --json")
		}
	}
	for _, n := range notes {
		d.add("kernel sandbox", StatusWarn, n, "rigout start --state-dir /var/lib/rigout")
	}
	d.views(p, cfg)
}

// views checks that per-principal views work here, as rigout serve and
// stdio build them: a spawner started in new namespaces, its view built.
func (d *doctor) views(p *validate.Policy, cfg exec.SandboxConfig) {
	tmp, err := os.MkdirTemp("", "rigout-doctor-views-")
	if err != nil {
		d.add("per-principal views", StatusFail, err.Error(), "")
		return
	}
	defer os.RemoveAll(tmp)
	v := sandboxcfg.Views(p, tmp, nil, nil)
	v.TmpDir = filepath.Join(tmp, "tmp")
	cfg.Views = v
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		d.add("per-principal views", StatusFail, err.Error(), "")
		return
	}
	defer sb.Close()
	st := sb.Status()
	if st.Seatbelt {
		d.add("per-principal views", StatusOK, "each token's commands run under a Seatbelt profile of its own (its roots and private TMPDIR writable, hidden paths unreadable); no process or mount isolation on macOS", "")
		return
	}
	if st.Views {
		d.add("per-principal views", StatusOK, "each token's commands and file operations run in a view of the machine of its own (user, mount, PID and IPC namespaces, seccomp)", "")
		return
	}
	d.add("per-principal views", StatusWarn, "unavailable: "+st.ViewsReason+": commands of every token share the gateway's view; tokens confined to roots or to reading are refused at start unless --unsafe-no-views",
		"allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu, kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for rigout), run on Linux 6.18 or newer")
}

// FetchHealth GETs a running gateway's health URL (the one its runtime
// record names), waiting at most 3 seconds, and returns the JSON body.
func FetchHealth(ctx context.Context, url string) (map[string]any, error) {
	if url == "" {
		return nil, errors.New("no health URL recorded")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", url, resp.Status, err)
	}
	return body, nil
}
