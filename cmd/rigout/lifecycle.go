package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/internal/atomicfile"
	"github.com/rigout/rigout/internal/runstate"
	"github.com/rigout/rigout/internal/statedir"
	"github.com/rigout/rigout/redact"
	"github.com/rigout/rigout/transport"
)

// setupFile is where a running gateway answers `rigout url --which setup`:
// it mints a setup token on SIGUSR1 and writes it here, owner-only.
const setupFile = "setup.json"

// maxLogSize is the activity log's size past which a start moves it to
// rigout.log.1.
const maxLogSize = 8 << 20

// logSink is the serving process's stderr: every write goes, redacted, to
// the activity log in the state directory once it is open, and to the
// terminal (unredacted: it is the operator's own) unless the process was
// detached, whose stderr is the log file itself.
type logSink struct {
	mu       sync.Mutex
	term     io.Writer
	detached bool
	file     *os.File
	known    *redact.Set
}

func newLogSink(term io.Writer, detached bool) *logSink {
	known, _ := redact.New()
	return &logSink{term: term, detached: detached, known: known}
}

// open starts the activity log at path, owner-only, appending; a log past
// maxLogSize is moved aside first.
func (s *logSink) open(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogSize {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("activity log: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("activity log: %w", err)
	}
	s.mu.Lock()
	s.file = f
	s.mu.Unlock()
	return nil
}

// secret adds values the log must never show.
func (s *logSink) secret(values ...string) {
	for _, v := range values {
		if v != "" {
			_ = s.known.Add(v)
		}
	}
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clean := s.known.Redact(string(p))
	switch {
	case s.file != nil:
		_, _ = io.WriteString(s.file, clean)
		if !s.detached {
			_, _ = s.term.Write(p)
		}
	case s.detached:
		_, _ = io.WriteString(s.term, clean)
	default:
		_, _ = s.term.Write(p)
	}
	return len(p), nil
}

// Close closes the activity log.
func (s *logSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}

// instance is the serving process's record in its state directory.
type instance struct {
	dir  string
	lock *runstate.Lock
}

// claimInstance takes the state directory's lock for this gateway. A
// running gateway there is an error that says how to stop it; state left
// by one that died is cleaned and logged.
func claimInstance(dir string, log func(msg string, args ...any)) (*instance, error) {
	l, stale, err := runstate.Acquire(dir)
	var running *runstate.RunningError
	if errors.As(err, &running) {
		return nil, fmt.Errorf("%v. Stop it with `rigout stop%s`, or start another with --state-dir DIR", err, statedir.Flag(dir, nil))
	}
	if err != nil {
		return nil, err
	}
	if stale != nil {
		log("cleaned stale state left by a gateway that is gone", "reason", stale.Reason)
	}
	return &instance{dir: dir, lock: l}, nil
}

// record writes runtime.json once the gateway listens.
func (in *instance) record(rt runstate.Runtime) error {
	rt.Started = time.Now().UTC().Truncate(time.Second)
	rt.Version = releaseVersion()
	rt.Commit = buildCommit()
	rt.LogFile = filepath.Join(in.dir, runstate.LogFile)
	return in.lock.Write(rt)
}

func (in *instance) release() {
	_ = os.Remove(filepath.Join(in.dir, setupFile))
	_ = in.lock.Release()
}

// serveSetupTokens mints a setup token each time the process gets SIGUSR1
// and writes it, with the URL that fetches the connection data, to
// <state dir>/setup.json (owner-only), until ctx ends.
func serveSetupTokens(ctx context.Context, front *auth.Front, dir, base string, log func(string, ...any)) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
			st, err := front.NewSetupToken()
			if err != nil {
				log("setup token", "err", err)
				continue
			}
			b, _ := json.Marshal(map[string]string{
				"token": st.Reveal(), "url": base + "/connection.json",
				"expires": time.Now().Add(auth.DefaultSetupTokenTTL).UTC().Format(time.RFC3339),
			})
			if err := atomicfile.Write(filepath.Join(dir, setupFile), b); err != nil {
				log("setup token", "err", err)
				continue
			}
			log("minted a setup token (one use) for rigout url --which setup")
		}
	}()
}

// buildCommit is the short commit the binary was built from, "" if
// unknown.
func buildCommit() string {
	b := readBuildInfo()
	rev := b.Commit
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && b.Modified {
		rev += "+dirty"
	}
	return rev
}

// flagArg returns the value of --name (or -name) in args, in any of the
// spellings the flag package accepts, and args without it.
func flagArg(args []string, name string) (value string, found bool, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		n := strings.TrimLeft(a, "-")
		if len(a)-len(n) < 1 || len(a)-len(n) > 2 {
			rest = append(rest, a)
			continue
		}
		switch {
		case n == name && i+1 < len(args):
			value, found = args[i+1], true
			i++
		case strings.HasPrefix(n, name+"="):
			value, found = n[len(name)+1:], true
		default:
			rest = append(rest, a)
		}
	}
	return value, found, rest
}

// boolArg removes --name from args and reports whether it was there.
func boolArg(args []string, name string) (bool, []string) {
	var rest []string
	found := false
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a == "--"+name || a == "-"+name || a == "--"+name+"=true" || a == "-"+name+"=true" {
			found = true
			continue
		}
		rest = append(rest, a)
	}
	return found, rest
}

// runStart is `rigout start`: serve in the foreground, or with --detach
// in the background, recorded in the state directory.
func runStart(ctx context.Context, args []string, stdout, stderr io.Writer, sec *secrets) int {
	detach, args := boolArg(args, "detach")
	waitText, _, args := flagArg(args, "wait")
	if !detach && slicesContainsHelp(args) {
		fmt.Fprint(stderr, "usage: rigout start [--detach [--wait 30s]] [flags of rigout serve]\n\n")
	}
	if !detach {
		if waitText != "" {
			fmt.Fprintln(stderr, "rigout start: --wait applies to --detach only")
			return 2
		}
		return runServe(ctx, args, stderr, sec)
	}
	wait := 30 * time.Second
	if waitText != "" {
		d, err := time.ParseDuration(waitText)
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "rigout start: --wait %q: want a duration such as 30s\n", waitText)
			return 2
		}
		wait = d
	}
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprint(stderr, "usage: rigout start [--detach [--wait 30s]] [flags of rigout serve]\n\n"+
				"Without --detach, rigout start is rigout serve. With it, the gateway runs in the background, logging to\n"+
				"<state dir>/rigout.log; start returns once /health answers (or fails after --wait, showing the log).\n"+
				"Then: rigout status, rigout url, rigout logs, rigout connect CLIENT, rigout stop.\n\n")
			return runServe(ctx, args, stderr, sec)
		}
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rigout start: "+format+"\n", a...)
		return 1
	}
	sdFlag, _, _ := flagArg(args, "state-dir")
	dir, err := statedir.Resolve(sdFlag, nil)
	if err != nil {
		return fail("%v", err)
	}
	if _, err := statedir.Ensure(dir); err != nil {
		return fail("%v", err)
	}
	if st := runstate.Inspect(dir); st.State == runstate.Running {
		return fail("already running: PID %d at %s since %s. Stop it with `rigout stop%s`, or start another with --state-dir DIR",
			st.Runtime.PID, st.Runtime.URL, st.Runtime.Started.Format(time.RFC3339), statedir.Flag(dir, nil))
	}
	// The token never goes on the child's command line: a --auth-token given
	// here moves to the child's environment, which the child moves onto a
	// memory file at once (hideSecrets).
	token, _, args := flagArg(args, "auth-token")
	env := os.Environ()
	for k, v := range sec.vals {
		env = append(env, k+"="+v)
	}
	if token != "" {
		env = append(env, "RIGOUT_AUTH_TOKEN="+token)
	}
	env = append(env, statedir.EnvVar+"="+dir)
	self, err := os.Executable()
	if err != nil {
		return fail("%v", err)
	}
	logPath := filepath.Join(dir, runstate.LogFile)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fail("activity log: %v", err)
	}
	defer logf.Close()
	_ = logf.Chmod(0o600)
	start, _ := logf.Seek(0, io.SeekEnd)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return fail("%v", err)
	}
	defer devnull.Close()
	cmd := osexec.Command(self, append([]string{"serve", "--detached"}, args...)...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fail("%v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			fmt.Fprintf(stderr, "rigout start: the gateway exited during start-up (%v). From %s:\n", err, logPath)
			printLogFrom(stderr, logPath, start)
			return 1
		case <-deadline.C:
			// Not ready in time: the child is ours, so stopping it is safe.
			_ = cmd.Process.Signal(syscall.SIGTERM)
			fmt.Fprintf(stderr, "rigout start: not ready after %v; stopped it. From %s:\n", wait, logPath)
			printLogFrom(stderr, logPath, start)
			return 1
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return 1
		case <-tick.C:
		}
		st := runstate.Inspect(dir)
		if st.State != runstate.Running || st.Runtime.PID != cmd.Process.Pid {
			continue
		}
		if _, err := assembly.FetchHealth(ctx, st.Runtime.HealthURL); err != nil {
			continue
		}
		rt := st.Runtime
		printStartWarnings(stderr, logPath, start)
		fmt.Fprintf(stdout, "rigout %s started in the background: PID %d, %s\n", rt.Version, rt.PID, rt.URL)
		fmt.Fprintf(stdout, "  log:     rigout logs%s   (%s)\n", statedir.Flag(dir, nil), logPath)
		fmt.Fprintf(stdout, "  status:  rigout status%s\n", statedir.Flag(dir, nil))
		fmt.Fprintf(stdout, "  connect: rigout connect claude-code%s   (prints a secret)\n", statedir.Flag(dir, nil))
		fmt.Fprintf(stdout, "  stop:    rigout stop%s\n", statedir.Flag(dir, nil))
		return 0
	}
}

// printStartWarnings copies to w the warnings, errors and notes the
// gateway logged while it started (the activity log from offset on), so
// that a detached start shows them on the terminal too.
func printStartWarnings(w io.Writer, path string, off int64) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return
	}
	var warn []string
	note := false // the previous line began a note, which may go on indented
	sc := bufio.NewScanner(io.LimitReader(f, 256<<10))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "NOTE:") || strings.HasPrefix(l, "WARNING"):
			warn, note = append(warn, l), true
		case note && strings.HasPrefix(l, "  "):
			warn = append(warn, l)
		case strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR"):
			warn, note = append(warn, l), false
		default:
			note = false
		}
	}
	if len(warn) == 0 {
		return
	}
	fmt.Fprintf(w, "start-up warnings (from %s):\n", path)
	for _, l := range warn {
		fmt.Fprintln(w, "  "+strings.TrimLeft(l, " "))
	}
}

// printLogFrom copies the activity log from offset on to w.
func printLogFrom(w io.Writer, path string, off int64) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return
	}
	_, _ = io.Copy(w, io.LimitReader(f, 64<<10))
}

// stateFlags parses the flags of a lifecycle command that needs only the
// state directory, plus those extra registers.
func stateFlags(name string, args []string, stderr io.Writer, extra func(fs *flag.FlagSet)) (dir string, code int) {
	fs := flag.NewFlagSet("rigout "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	sd := fs.String("state-dir", "", "state directory (default $RIGOUT_STATE_DIR, else $XDG_STATE_HOME/rigout, else ~/.local/state/rigout, for root /var/lib/rigout)")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", 0
		}
		return "", 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rigout %s: unexpected argument %q\n", name, fs.Arg(0))
		return "", 2
	}
	dir, err := statedir.Resolve(*sd, nil)
	if err != nil {
		fmt.Fprintf(stderr, "rigout %s: %v\n", name, err)
		return "", 1
	}
	return dir, -1
}

// runStop is `rigout stop`: SIGTERM to the recorded gateway (only if it is
// still the recorded process), then wait; --force sends SIGKILL after the
// timeout.
func runStop(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	timeout := transport.DefaultShutdownTimeout + 5*time.Second
	force := false
	dir, code := stateFlags("stop", args, stderr, func(fs *flag.FlagSet) {
		fs.DurationVar(&timeout, "timeout", timeout, "how long to wait for the gateway to drain and exit")
		fs.BoolVar(&force, "force", false, "send SIGKILL if it has not exited after --timeout")
	})
	if code >= 0 {
		return code
	}
	st := runstate.Inspect(dir)
	switch st.State {
	case runstate.NotRunning:
		fmt.Fprintf(stderr, "rigout stop: not running (no gateway recorded in %s)\n", dir)
		return 1
	case runstate.Stale:
		fmt.Fprintf(stderr, "rigout stop: stale state in %s: %s. Nothing was signalled; the next `rigout start` cleans it.\n", dir, st.Reason)
		return 2
	}
	p, err := runstate.Open(st.Runtime.Identity)
	if err != nil {
		fmt.Fprintf(stderr, "rigout stop: %v; nothing was signalled\n", err)
		return 2
	}
	defer p.Close()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		fmt.Fprintf(stderr, "rigout stop: %v\n", err)
		return 1
	}
	if p.Wait(timeout) {
		waitReleased(dir, time.Second)
		fmt.Fprintf(stdout, "stopped rigout (PID %d)\n", st.Runtime.PID)
		return 0
	}
	if !force {
		fmt.Fprintf(stderr, "rigout stop: PID %d is still draining after %v; wait longer with --timeout, or `rigout stop --force%s` sends SIGKILL\n",
			st.Runtime.PID, timeout, statedir.Flag(dir, nil))
		return 1
	}
	if err := p.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, runstate.ErrNotSame) {
		fmt.Fprintf(stderr, "rigout stop: %v\n", err)
		return 1
	}
	if !p.Wait(5 * time.Second) {
		fmt.Fprintf(stderr, "rigout stop: PID %d survived SIGKILL\n", st.Runtime.PID)
		return 1
	}
	// It had no chance to clean up: its lock is free now, so its files go.
	if l, _, err := runstate.Acquire(dir); err == nil {
		l.Release()
	}
	fmt.Fprintf(stdout, "killed rigout (PID %d) after %v\n", st.Runtime.PID, timeout)
	return 0
}

// waitReleased waits until the stopped gateway's runtime.json is gone, so
// that a start right after stop finds a clean directory.
func waitReleased(dir string, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dir, runstate.RuntimeFile)); errors.Is(err, fs.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// statusReport is `rigout status --json`.
type statusReport struct {
	State          string         `json:"state"`
	Reason         string         `json:"reason,omitempty"`
	StateDir       string         `json:"state_dir"`
	PID            int            `json:"pid,omitempty"`
	URL            string         `json:"url,omitempty"`
	HealthURL      string         `json:"health_url,omitempty"`
	Started        *time.Time     `json:"started,omitempty"`
	UptimeSeconds  int64          `json:"uptime_seconds,omitempty"`
	Version        string         `json:"version,omitempty"`
	Commit         string         `json:"commit,omitempty"`
	Token          string         `json:"token,omitempty"`
	Ledger         string         `json:"ledger,omitempty"`
	LedgerError    string         `json:"ledger_error,omitempty"`
	Healthy        *bool          `json:"healthy,omitempty"`
	Hosts          []string       `json:"hosts"`
	ConnectionFile string         `json:"connection_file,omitempty"`
	LogFile        string         `json:"log_file,omitempty"`
	Health         map[string]any `json:"health,omitempty"`
	HealthError    string         `json:"health_error,omitempty"`
}

// runStatus is `rigout status`: exit 0 running, 1 not running, 2 stale.
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	asJSON := false
	dir, code := stateFlags("status", args, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	})
	if code >= 0 {
		return code
	}
	st := runstate.Inspect(dir)
	r := statusReport{State: st.State.String(), Reason: st.Reason, StateDir: dir, Hosts: []string{}}
	if rt := st.Runtime; rt != nil {
		r.PID, r.URL, r.HealthURL, r.Version, r.Commit, r.Token = rt.PID, rt.URL, rt.HealthURL, rt.Version, rt.Commit, rt.Token
		r.ConnectionFile, r.LogFile = rt.ConnectionFile, rt.LogFile
		if rt.Hosts != nil {
			r.Hosts = rt.Hosts
		}
		started := rt.Started
		r.Started = &started
		if st.State == runstate.Running {
			r.UptimeSeconds = int64(time.Since(rt.Started).Seconds())
		}
	}
	if st.State == runstate.Running {
		h, err := assembly.FetchHealth(ctx, st.Runtime.HealthURL)
		if err != nil {
			r.HealthError = err.Error()
		} else {
			r.Health = h
			if ok, isBool := h["ok"].(bool); isBool {
				r.Healthy = &ok
			}
			r.Ledger, _ = h["audit"].(string)
			r.LedgerError, _ = h["audit_error"].(string)
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
	} else {
		printStatus(stdout, r, dir)
	}
	return map[runstate.State]int{runstate.Running: 0, runstate.NotRunning: 1, runstate.Stale: 2}[st.State]
}

func printStatus(w io.Writer, r statusReport, dir string) {
	switch r.State {
	case "not running":
		fmt.Fprintf(w, "rigout: not running (state directory %s)\n", dir)
		fmt.Fprintf(w, "start it: rigout start --detach%s\n", statedir.Flag(dir, nil))
		return
	case "stale":
		fmt.Fprintf(w, "rigout: stale — %s\n", termText(r.Reason))
		fmt.Fprintf(w, "the next `rigout start%s` cleans it\n", statedir.Flag(dir, nil))
		return
	}
	fmt.Fprintf(w, "rigout: running\n")
	tw := func(k, v string) { fmt.Fprintf(w, "  %-11s %s\n", k+":", termText(v)) }
	tw("url", r.URL)
	tw("pid", fmt.Sprint(r.PID))
	tw("uptime", (time.Duration(r.UptimeSeconds) * time.Second).String())
	v := r.Version
	if r.Commit != "" {
		v += " (" + r.Commit + ")"
	}
	tw("version", v)
	tw("token", r.Token)
	switch {
	case r.HealthError != "":
		tw("health", "UNREACHABLE: "+r.HealthError)
	case r.LedgerError != "":
		tw("ledger", r.Ledger+": "+r.LedgerError)
	default:
		tw("ledger", r.Ledger)
	}
	if sb, ok := r.Health["sandbox"].(map[string]any); ok {
		tw("sandbox", fmt.Sprint(sb["summary"]))
	} else if s, ok := r.Health["sandbox"].(string); ok {
		tw("sandbox", s)
	}
	hosts := strings.Join(r.Hosts, ", ")
	if hosts == "" {
		hosts = "(none configured)"
	}
	tw("hosts", hosts)
	tw("state dir", dir)
	tw("log", r.LogFile)
}

// runURL is `rigout url`: the running gateway's MCP, health or setup URL.
func runURL(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	which := "mcp"
	dir, code := stateFlags("url", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&which, "which", which, "mcp, health or setup (a one-use URL that hands out the connection data)")
	})
	if code >= 0 {
		return code
	}
	if which != "mcp" && which != "health" && which != "setup" {
		fmt.Fprintf(stderr, "rigout url: --which %q: want mcp, health or setup\n", which)
		return 2
	}
	st := runstate.Inspect(dir)
	if st.State != runstate.Running {
		fmt.Fprintf(stderr, "rigout url: not running (%s)%s\n", st.State, reasonSuffix(st.Reason))
		return 1
	}
	switch which {
	case "mcp":
		fmt.Fprintln(stdout, st.Runtime.URL)
		return 0
	case "health":
		fmt.Fprintln(stdout, st.Runtime.HealthURL)
		return 0
	}
	if st.Runtime.ConnectionFile == "" {
		fmt.Fprintln(stderr, "rigout url: this gateway hands out no token (configured tokens, OAuth or --no-auth), so it has no setup URL")
		return 1
	}
	path := filepath.Join(dir, setupFile)
	before, _ := os.Stat(path)
	p, err := runstate.Open(st.Runtime.Identity)
	if err != nil {
		fmt.Fprintf(stderr, "rigout url: %v\n", err)
		return 1
	}
	defer p.Close()
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		fmt.Fprintf(stderr, "rigout url: %v\n", err)
		return 1
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil && (before == nil || !os.SameFile(before, fi) || fi.ModTime().After(before.ModTime())) {
			var s struct{ Token, URL, Expires string }
			b, _ := os.ReadFile(path)
			if json.Unmarshal(b, &s) == nil && s.Token != "" {
				fmt.Fprintf(stdout, "%s?setup_token=%s\n", s.URL, s.Token)
				fmt.Fprintf(stderr, "One use, until %s. It hands out the bearer token: treat it like a password. Where the client can send headers, prefer:\n"+
					"  curl -s -H \"%s: %s\" %s\n", s.Expires, auth.SetupTokenHeader, s.Token, s.URL)
				return 0
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintln(stderr, "rigout url: the gateway did not answer with a setup token within 5s; see `rigout logs`")
	return 1
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// runLogs is `rigout logs`: the activity log's last lines, and with
// --follow what is written after them.
func runLogs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	n := 50
	follow := false
	dir, code := stateFlags("logs", args, stderr, func(fs *flag.FlagSet) {
		fs.IntVar(&n, "n", n, "number of lines")
		fs.BoolVar(&follow, "follow", false, "keep printing what is written until interrupted")
	})
	if code >= 0 {
		return code
	}
	path := filepath.Join(dir, runstate.LogFile)
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "rigout logs: %v (rigout start writes it)\n", err)
		return 1
	}
	defer f.Close()
	// Belt and braces: the log is redacted when written; mask the state
	// directory's token again on the way out.
	known, _ := redact.New()
	if tok, _ := os.ReadFile(filepath.Join(dir, "token")); len(bytes.TrimSpace(tok)) > 0 {
		_ = known.Add(string(bytes.TrimSpace(tok)))
	}
	off, lines := tailLines(f, n)
	for _, l := range lines {
		fmt.Fprintln(stdout, termLine(known.Redact(l)))
	}
	if !follow {
		return 0
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		fmt.Fprintf(stderr, "rigout logs: %v\n", err)
		return 1
	}
	r := bufio.NewReader(f)
	var partial string
	for {
		line, err := r.ReadString('\n')
		partial += line
		if err == nil {
			fmt.Fprintln(stdout, termLine(known.Redact(strings.TrimSuffix(partial, "\n"))))
			partial = ""
			continue
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tailLines returns the last n complete lines of f and the offset just
// after them.
func tailLines(f *os.File, n int) (int64, []string) {
	fi, err := f.Stat()
	if err != nil || n <= 0 {
		end, _ := f.Seek(0, io.SeekEnd)
		return end, nil
	}
	size := fi.Size()
	const chunk = 64 << 10
	var buf []byte
	off := size
	for off > 0 && bytes.Count(buf, []byte("\n")) <= n {
		step := int64(chunk)
		if off < step {
			step = off
		}
		off -= step
		b := make([]byte, step)
		if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			break
		}
		buf = append(b, buf...)
	}
	end := size
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		end = size - int64(len(buf)) + int64(i) + 1
		buf = buf[:i]
	} else {
		return size - int64(len(buf)), nil
	}
	lines := strings.Split(string(buf), "\n")
	if off > 0 && len(lines) > 0 {
		lines = lines[1:] // the first may be partial
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return end, lines
}

func slicesContainsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			return true
		}
	}
	return false
}
