//go:build linux

package validate_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/validate"
)

// TestBashDifferential runs every row of the policy's tables (checkCases
// and groupCases: names, stdin, runners, reach, the destructive groups;
// refused rows included) and a bounded, seeded stream of generated
// commands (see fuzzCommands) under bash, traced by strace, and compares
// what bash did with what the checker judged.
//
// # What runs, and where
//
// Each command runs in a jail (TestBashDiffJail): new mount, network and
// PID namespaces, /run covered by an empty tmpfs (no service sockets), a
// private empty /tmp, no network but loopback, every write confined by
// Landlock to the sentinel tree, the private /tmp and strace's output
// directory, no_new_privs, a bound on processes, and bash itself as the
// unprivileged user nobody (setpriv --reuid --regid --clear-groups),
// reading the row as its script. When the command ends, or after three
// seconds (or 256 KB of trace), the PID namespace ends everything it
// started. A sentinel file the user nobody owns, outside the writable
// trees, is checked after every command: if it is gone, the jail did not
// hold and the test stops at once. Nothing runs as root but the jail's
// own set-up and strace.
//
// # Paths: the sentinel tree
//
// The sentinel tree S (under /var/tmp, so that no row's /tmp reaches it)
// is made afresh for every command, owned by nobody, seeded with the files
// rows read (jailSeeds), and stands for the root of the machine: the
// checker's verdict is about the row as written, and every path bash
// touched under S is judged as the same path without S. The command runs
// in S/work (judged as /work) or, for a row with a Dir that does not exist
// here (/home/u/proj), in S plus that Dir; a row whose Dir exists (/,
// /etc) runs there, read-only. HOME is S/root, so ~, $HOME and ~/.bashrc
// act on the sentinel home and are judged as /root's. Other absolute paths
// of the rows (/etc, /usr, /dev/sda, /root through ~root) are left as they
// are: Landlock and the unprivileged user refuse the change, and strace
// still records the attempt, with its path, which is what is compared.
//
// # What is compared
//
// strace -ff records every execve, the working directory of each process
// (chdir, fchdir, fork), every unlink, rmdir, rename, open for writing,
// kill, and forks refused for the bound. Each is judged by the checker
// alone, as CheckArgv of what it amounts to: the argv bash executed (in
// its working directory; a program bash does not find is reported by a
// command_not_found_handle defined in BASH_ENV, as if it had run), rm -f
// FILE or rmdir DIR for a deletion, mv for a rename, tee FILE (truncated),
// tee -a FILE (appended) or touch FILE (neither) for an open for writing,
// kill for a signal.
//
//   - A command the checker allows diverges, and fails the test, when bash
//     did anything the checker refuses on its own: it ran a program,
//     deleted, renamed or wrote a path, or signalled a process the policy
//     protects. The trace holds no written content, so a write refused
//     only for want of it (hidden-code: tee to a start-up file) is not
//     one; nor is a path a row without a Dir reaches by climbing out of
//     its directory (the checker does not know where such a row runs).
//     knownDivergences lists the accepted ones, with why.
//   - A command the checker refuses is shown when, run, it did something
//     the checker refuses on its own, or tried to change something outside
//     the jail's writable trees, or forked past the bound. One not shown
//     is counted and reported, not failed: refusals the jail cannot show
//     (hidden-code: what would run is not in the line; remote-script: no
//     network; parse-error; too-complex; a program not installed here),
//     and refusals of what was harmless in the jail (an empty variable, a
//     missing device, a hook only an interactive shell runs, a name bash
//     rejects): the policy errs on the side of refusing.
//
// RIGOUT_BASHDIFF_FUZZ sets the number of generated commands (300 if
// unset), RIGOUT_BASHDIFF_SEED the generator's seed, RIGOUT_BASHDIFF_JOBS
// the jails run at once (the number of CPUs if unset),
// RIGOUT_BASHDIFF_EVERY=N runs every Nth table row only. By default the
// test samples, every 8th row and 40 generated commands, so that the
// README's test command stays a few minutes long; RIGOUT_BASHDIFF_FULL=1
// runs every row and 300 generated commands, as CI does in a step of its
// own (the -race run there samples: the race detector watches only the
// harness). Without strace,
// setpriv, unshare, root or Landlock the test is skipped loudly, and fails
// under RIGOUT_REQUIRE_STRACE=1 (CI).
func TestBashDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bash under strace")
	}
	j := newJail(t)
	start := time.Now()
	var st diffStats

	jobs := runtime.NumCPU()
	if v, err := strconv.Atoi(os.Getenv("RIGOUT_BASHDIFF_JOBS")); err == nil && v > 0 {
		jobs = v
	}
	jails := []*jail{j}
	for len(jails) < jobs {
		jails = append(jails, newJail(t))
	}

	full := os.Getenv("RIGOUT_BASHDIFF_FULL") == "1"
	every := 8
	if full {
		every = 1
	}
	if v, err := strconv.Atoi(os.Getenv("RIGOUT_BASHDIFF_EVERY")); err == nil && v > 0 {
		every = v
	}
	t.Run("tables", func(t *testing.T) {
		var rows []checkCase
		for _, table := range append([][]checkCase{checkCases, diffAllowed}, groupCases()...) {
			rows = append(rows, table...)
		}
		if every > 1 {
			var some []checkCase
			for i, r := range rows {
				if i%every == 0 {
					some = append(some, r)
				}
			}
			t.Logf("every %dth row only: %d of %d", every, len(some), len(rows))
			rows = some
		}
		compareAll(t, jails, rows, &st)
	})

	t.Run("refused forms really run code", func(t *testing.T) {
		// The forms of issue 27 that hide "touch p" in a name or in
		// arithmetic: bash must really run touch.
		for _, c := range nameCases {
			if c.rule != validate.RuleHiddenCode || !strings.Contains(c.cmd, "touch p") {
				continue
			}
			r := j.run(t, c)
			if !slices.ContainsFunc(r.events, func(e event) bool { return e.kind == "exec" && filepath.Base(e.argv[0]) == "touch" }) {
				t.Errorf("bash did not run the touch hidden in %q: the checker refuses code bash does not run", c.cmd)
			}
			if _, err := os.Stat(filepath.Join(r.dir, "p")); err != nil {
				t.Errorf("bash did not create p for %q: %v", c.cmd, err)
			}
		}
	})

	t.Run("fuzz", func(t *testing.T) {
		n, seed := 40, uint64(27)
		if full {
			n = 300
		}
		if v := os.Getenv("RIGOUT_BASHDIFF_FUZZ"); v != "" {
			n, _ = strconv.Atoi(v)
		}
		if v := os.Getenv("RIGOUT_BASHDIFF_SEED"); v != "" {
			seed, _ = strconv.ParseUint(v, 10, 64)
		}
		fstart := time.Now()
		var rows []checkCase
		for _, cmd := range fuzzCommands(seed, n) {
			rows = append(rows, checkCase{cmd: cmd})
		}
		var fst diffStats
		compareAll(t, jails, rows, &fst)
		t.Logf("fuzz (seed %d): %d commands in %v, %d allowed, %d refused (%d shown by what bash did)",
			seed, fst.ran, time.Since(fstart).Round(time.Millisecond), fst.allowed, fst.refused, fst.shown)
		st.add(&fst)
	})

	if st.events == 0 || st.shown == 0 {
		t.Errorf("the traces show %d events and %d refusals shown: strace's output was not understood", st.events, st.shown)
	}
	t.Logf("bash ran %d commands under strace in %v: %d allowed (%d events judged), %d refused, of which %d shown by what bash did and %d the jail cannot show",
		st.ran, time.Since(start).Round(time.Millisecond), st.allowed, st.events, st.refused, st.shown, st.unshown)
	for _, s := range st.slow {
		t.Logf("  slow: %s", s)
	}
	for _, s := range st.known {
		t.Logf("  known divergence: %s", s)
	}
	for _, s := range st.harmless {
		t.Logf("  refused, harmless in the jail: %s", s)
	}
	for _, rule := range sortedKeys(st.unshownBy) {
		t.Logf("  not shown, %s: %d (e.g. %q)", rule, st.unshownBy[rule], st.unshownEx[rule])
	}
}

// compareAll compares rows, each jail running one at a time.
func compareAll(t *testing.T, jails []*jail, rows []checkCase, st *diffStats) {
	next := make(chan checkCase)
	go func() {
		defer close(next)
		for _, c := range rows {
			next <- c
		}
	}()
	t.Run("jails", func(t *testing.T) {
		for w, j := range jails {
			t.Run(fmt.Sprintf("jail%d", w), func(t *testing.T) {
				t.Parallel()
				deadline, timed := t.Deadline()
				for c := range next {
					if timed && time.Until(deadline) < 30*time.Second {
						// Fail with a reason rather than the test
						// binary's panic at its deadline.
						t.Errorf("stopped before %q: the test's deadline is near; run it with a larger -timeout (the tables take minutes)", c.cmd)
						return
					}
					j.compare(t, c, st)
				}
			})
		}
	})
	for range next { // after a failure, let the feeder end
	}
}

// add adds o's counts to st.
func (st *diffStats) add(o *diffStats) {
	st.ran += o.ran
	st.allowed += o.allowed
	st.refused += o.refused
	st.shown += o.shown
	st.unshown += o.unshown
	st.events += o.events
	st.known = append(st.known, o.known...)
	st.harmless = append(st.harmless, o.harmless...)
	st.slow = append(st.slow, o.slow...)
	for k, v := range o.unshownBy {
		if st.unshownBy == nil {
			st.unshownBy, st.unshownEx = map[string]int{}, map[string]string{}
		}
		if _, ok := st.unshownEx[k]; !ok {
			st.unshownEx[k] = o.unshownEx[k]
		}
		st.unshownBy[k] += v
	}
}

// diffStats counts what TestBashDifferential ran and found.
type diffStats struct {
	mu                                            sync.Mutex // compare runs in parallel
	known, harmless                               []string
	ran, allowed, refused, shown, unshown, events int
	unshownBy                                     map[string]int
	unshownEx                                     map[string]string
	slow                                          []string // commands that took over a second
}

// jailCannotShow are refusals whose grounds a run in the jail cannot
// show: the command's effect depends on what the line does not hold
// (hidden-code), on a program this machine lacks, or bash refuses the line
// itself.
var jailCannotShow = map[string]bool{
	validate.RuleHiddenCode:   true,
	validate.RuleRemoteScript: true, // the jail has no network
	validate.RuleParseError:   true,
	validate.RuleTooComplex:   true,
}

// compare runs c in the jail and reports a divergence between what bash
// did and the checker's verdict (see TestBashDifferential).
func (j *jail) compare(t *testing.T, c checkCase, st *diffStats) {
	t.Helper()
	d := c.policy.Check(c.cmd, c.options())
	began := time.Now()
	r := j.run(t, c)
	if os.Getenv("RIGOUT_BASHDIFF_VERBOSE") == "1" {
		fmt.Fprintf(os.Stderr, "bashdiff: %v %d events %q\n", time.Since(began).Round(time.Millisecond), len(r.events), c.cmd)
	}
	if el := time.Since(began); el > 2*time.Second {
		st.mu.Lock()
		st.slow = append(st.slow, fmt.Sprintf("%v %q", el.Round(time.Millisecond), c.cmd))
		st.mu.Unlock()
	}
	var refusedEv *event
	var refusedBy validate.Decision
	blocked := false
	seen := map[string]bool{}
	events := 0
	for i := range r.events {
		if !d.Allowed && (refusedEv != nil || blocked) {
			break // shown: the rest need not be judged
		}
		e := &r.events[i]
		argv, opts := j.judgeable(e, c)
		key := strings.Join(argv, "\x00") + "\x00" + opts.Dir
		if argv == nil || seen[key] {
			continue
		}
		seen[key] = true
		events++
		if e.kind != "exec" && e.kind != "kill" && e.blocked() {
			blocked = true // a change outside the tree, or a fork past the bound
		}
		if e.kind == "fork" {
			continue
		}
		ed := j.checkArgv(c.policy, key, argv, opts)
		if e.kind != "exec" && (ed.Rule == validate.RuleNotAllowlisted || ed.Rule == validate.RuleHiddenCode) {
			// A deletion, a write or a signal is no program of an
			// allow list, and the trace does not hold what was
			// written: the checker refuses tee to a start-up file
			// for want of its content, which the row shows.
			continue
		}
		if !ed.Allowed && refusedEv == nil {
			refusedEv, refusedBy = e, ed
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ran++
	st.events += events
	if d.Allowed {
		st.allowed++
		if refusedEv == nil {
			return
		}
		msg := fmt.Sprintf("the checker allows %s, but bash then did %s, which the checker refuses (%s: %s)",
			c.name(), j.describe(refusedEv), refusedBy.Rule, refusedBy.Reason)
		for _, k := range knownDivergences {
			if k.match.MatchString(c.cmd) {
				st.known = append(st.known, msg+"; known: "+k.why)
				return
			}
		}
		t.Errorf("DIVERGENCE: %s", msg)
		return
	}
	st.refused++
	if refusedEv != nil || blocked {
		st.shown++
		return
	}
	st.unshown++
	if st.unshownBy == nil {
		st.unshownBy, st.unshownEx = map[string]int{}, map[string]string{}
	}
	why := d.Rule
	switch {
	case jailCannotShow[d.Rule]:
	case len(r.missing) > 0:
		why = "program not installed (" + d.Rule + ")"
	default:
		// Refused, and harmless here: the checker judges more
		// dangerously than bash ran it in the jail (an empty
		// variable, a missing file or device, an interactive-only
		// hook, a name bash rejects). Reported, not failed: the
		// policy errs on the side of refusing.
		st.harmless = append(st.harmless, fmt.Sprintf("%s (%s); bash ran %s", c.name(), d.Rule, j.summary(r)))
	}
	if _, ok := st.unshownEx[why]; !ok {
		st.unshownEx[why] = c.name()
	}
	st.unshownBy[why]++
}

// knownDivergences are allowed rows that do, in the jail, what the
// checker refuses alone, with why that is accepted.
var knownDivergences = []struct {
	match *regexp.Regexp
	why   string
}{
	{regexp.MustCompile(`^sudo chown -R \$USER:\$USER ~$`),
		"the checker takes ~ for the caller's home, which chown -R may change, while the jail's HOME is judged as /root, a protected root"},
	{regexp.MustCompile(`\b(pkill|killall)( -\w+)* ["$]`),
		"a pkill or killall pattern computed at run time is not judged (docs/POLICY.md, what it still cannot see); run, it matched the gateway's name"},
}

// checkArgv is p.CheckArgv(argv, opts), remembered: the same argv comes
// back in many runs.
func (j *jail) checkArgv(p *validate.Policy, key string, argv []string, opts validate.Options) validate.Decision {
	k := judgeKey{p, opts.AllowSudo, key}
	if d, ok := j.judged[k]; ok {
		return d
	}
	d := p.CheckArgv(argv, opts)
	j.judged[k] = d
	return d
}

type judgeKey struct {
	p    *validate.Policy
	sudo bool
	key  string
}

// judgeable is what the checker judges for e: the argv it amounts to, with
// every path of the sentinel tree written as the machine's.
func (j *jail) judgeable(e *event, c checkCase) ([]string, validate.Options) {
	opts := validate.Options{AllowSudo: c.sudo}
	switch e.kind {
	case "exec":
		argv := make([]string, len(e.argv))
		for i, a := range e.argv {
			argv[i] = j.unmapText(a)
		}
		if c.dir != "" || e.dir != j.start {
			// A row without a Dir is judged with relative paths never
			// taken for protected roots: so are the programs run
			// where it started.
			opts.Dir = j.unmap(e.dir)
		}
		return argv, opts
	}
	if c.dir == "" && e.path != "" {
		// A row without a Dir does not know where it runs: a relative
		// path climbing out of its directory (mv .. x) is not judged
		// as the protected root it reaches in the jail.
		if p := j.unmap(e.path); p == "/" || strings.HasPrefix(j.unmap(j.start), p+"/") || p == j.unmap(j.start) {
			return nil, opts
		}
	}
	switch e.kind {
	case "delete":
		if e.isDir {
			// rmdir removes only an empty directory: emptying it
			// shows as deletions of its entries.
			return []string{"rmdir", j.unmap(e.path)}, opts
		}
		return []string{"rm", "-f", j.unmap(e.path)}, opts
	case "rename":
		return []string{"mv", "-f", j.unmap(e.path), j.unmap(e.path2)}, opts
	case "write":
		switch {
		case strings.Contains(e.flags, "O_TRUNC"):
			return []string{"tee", j.unmap(e.path)}, opts
		case strings.Contains(e.flags, "O_APPEND"):
			return []string{"tee", "-a", j.unmap(e.path)}, opts
		}
		// Opened for writing, neither truncated nor appended to:
		// touch, or a write in place the trace does not show.
		return []string{"touch", j.unmap(e.path)}, opts
	case "kill":
		return []string{"kill", "-s", e.argv[1], "--", e.argv[0]}, opts
	case "fork":
		return []string{"fork"}, opts
	}
	return nil, opts
}

func (j *jail) describe(e *event) string {
	argv, opts := j.judgeable(e, checkCase{})
	s := fmt.Sprintf("%s %q", e.kind, argv)
	if e.kind == "exec" {
		s += " in " + opts.Dir
	}
	if e.errno != "" {
		s += " (" + e.errno + ")"
	}
	return s
}

func (j *jail) summary(r runResult) string {
	var b []string
	for i := range r.events {
		if r.events[i].kind == "exec" && len(b) < 6 {
			argv, _ := j.judgeable(&r.events[i], checkCase{})
			b = append(b, fmt.Sprintf("%q", argv))
		}
	}
	if len(b) == 0 {
		return "no program"
	}
	return strings.Join(b, ", ")
}

// unmap writes a path of the sentinel tree as the machine's.
func (j *jail) unmap(p string) string {
	if p == j.root {
		return "/"
	}
	if strings.HasPrefix(p, j.root+"/") {
		return p[len(j.root):]
	}
	return p
}

// unmapText does the same for every sentinel path inside an argument.
func (j *jail) unmapText(s string) string {
	if s == j.root {
		return "/"
	}
	return strings.ReplaceAll(s, j.root+"/", "/")
}

// jail holds the programs and directories of TestBashDifferential's runs.
type jail struct {
	bin, unshare, strace, setpriv, bash string
	base                                string // root-owned: guard, traces, prelude, the tree
	root                                string // the sentinel tree, S
	guard                               string // a file nobody owns and must not be able to delete
	traces                              string
	prelude                             string
	script                              string // the command, as bash's script
	judged                              map[judgeKey]validate.Decision
	start                               string // where a row without a Dir runs
	runs                                int    // commands run, naming each run's directories
}

const nobody = 65534

func newJail(t *testing.T) *jail {
	t.Helper()
	skip := func(why string) {
		t.Helper()
		if os.Getenv("RIGOUT_REQUIRE_STRACE") == "1" {
			t.Fatal("RIGOUT_REQUIRE_STRACE=1 but " + why + ": the checker was not compared with bash")
		}
		t.Skip("SKIPPED: " + why + ", so the checker was not compared with bash")
	}
	if os.Geteuid() != 0 {
		skip("not running as root (the jail needs namespaces and setpriv)")
	}
	if jailLandlockABI() < 1 {
		skip("the kernel has no Landlock")
	}
	j := &jail{judged: map[judgeKey]validate.Decision{}}
	var err error
	for _, p := range []struct {
		dst  *string
		name string
	}{{&j.unshare, "unshare"}, {&j.strace, "strace"}, {&j.setpriv, "setpriv"}, {&j.bash, "bash"}} {
		if *p.dst, err = exec.LookPath(p.name); err != nil {
			skip(p.name + " is not installed")
		}
	}
	if j.bin, err = os.Executable(); err != nil {
		t.Fatal(err)
	}
	// Not in /tmp: the jail has a /tmp of its own, and the rows delete
	// in /tmp (rm -rf /tmp/*), which must not reach the sentinel tree.
	j.base, err = os.MkdirTemp("/var/tmp", "rigout-bashdiff-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Every jail ends with its run: a process still running from
		// this directory is a jail that outlived its run (a fork bomb
		// left running). Report it, and end it.
		time.Sleep(200 * time.Millisecond)
		for _, pid := range jailLeftovers(j.base) {
			t.Errorf("process %d of a jail outlived its run; killing it", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
		// The last run's tracer may take a moment to end.
		for i := 0; i < 20 && os.RemoveAll(j.base) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := os.Chmod(j.base, 0o755); err != nil {
		t.Fatal(err)
	}
	j.prelude = filepath.Join(j.base, "prelude.sh")
	j.script = filepath.Join(j.base, "cmd.sh")
	gdir := filepath.Join(j.base, "guard")
	j.guard = filepath.Join(gdir, "sentinel")
	must(t, os.Mkdir(gdir, 0o755))
	must(t, os.WriteFile(j.guard, []byte("nobody may delete this, but must not be able to\n"), 0o644))
	must(t, os.Chown(gdir, nobody, nobody))
	must(t, os.Chown(j.guard, nobody, nobody))
	// A program bash does not find is recorded as if it ran (its argv),
	// then fails like a missing program.
	must(t, os.WriteFile(j.prelude, []byte("command_not_found_handle() { exec -a \"$1\" /bin/false \"${@:2}\"; }\n"), 0o644))
	return j
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// jailLeftovers are the processes whose command line names base.
func jailLeftovers(base string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(base)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// mkdirs makes p and its missing parents, owned by nobody.
func mkdirs(p string) error {
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := mkdirs(filepath.Dir(p)); err != nil {
		return err
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	return os.Chown(p, nobody, nobody)
}

// runResult is what one command did.
type runResult struct {
	events  []event
	dir     string   // where bash ran
	missing []string // programs bash did not find
	out     string   // the tail of its output, for failure messages
	cut     bool     // stopped early: its trace had grown past maxTrace
}

// run runs c in a fresh sentinel tree and returns what strace saw.
func (j *jail) run(t *testing.T, c checkCase) runResult {
	t.Helper()
	// Fresh directories for every run: the PID namespace of the last
	// one ends asynchronously, so its tracer may still be writing. The
	// last run's are removed, once it is surely over.
	if j.runs > 0 {
		os.RemoveAll(j.root)
		os.RemoveAll(j.traces)
	}
	j.runs++
	j.root = filepath.Join(j.base, "s"+strconv.Itoa(j.runs))
	j.traces = filepath.Join(j.base, "trace"+strconv.Itoa(j.runs))
	j.start = filepath.Join(j.root, "work")
	must(t, os.Mkdir(j.traces, 0o700))
	must(t, os.Mkdir(j.root, 0o755))
	must(t, os.Chown(j.root, nobody, nobody))
	for _, d := range []string{"work", "root"} {
		must(t, mkdirs(filepath.Join(j.root, d)))
	}
	for name, body := range jailSeeds {
		p := filepath.Join(j.root, name)
		must(t, os.WriteFile(p, []byte(body), 0o644))
		must(t, os.Chown(p, nobody, nobody))
	}
	dir := j.start
	if c.dir != "" {
		if fi, err := os.Stat(c.dir); err == nil && fi.IsDir() {
			dir = c.dir
		} else {
			dir = filepath.Join(j.root, c.dir)
			must(t, mkdirs(dir))
		}
	}
	home := filepath.Join(j.root, "root")
	must(t, os.WriteFile(j.script, []byte(c.cmd), 0o644))
	spec := jailSpec{
		Writable: []string{j.root, j.traces},
		Hide:     []string{"/run"},
		Private:  []string{"/tmp"},
		NProc:    256,
		Argv: []string{j.strace, "-ff", "--seccomp-bpf", "-qq", "-xx", "-y", "-s", "4096", "-o", filepath.Join(j.traces, "t"),
			"-e", "trace=execve,chdir,fchdir,clone,clone3,fork,vfork,open,openat,creat,unlink,unlinkat,rmdir,rename,renameat,renameat2,kill",
			"--", j.setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
			j.bash, "--norc", "--noprofile", j.script},
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home,
			"USER=nobody", "LOGNAME=nobody", "LC_ALL=C", "BASH_ENV=" + j.prelude, "PYTHONDONTWRITEBYTECODE=1"},
	}
	raw, err := json.Marshal(spec)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, j.unshare, "--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc",
		"--", j.bin, "-test.run=^TestBashDiffJail$")
	cmd.Env = []string{jailEnv + "=" + string(raw)}
	// If this test dies, unshare dies, and with it the jail.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Dir = dir
	if c.stdin != nil {
		cmd.Stdin = strings.NewReader(*c.stdin)
	}
	out := &cappedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	must(t, cmd.Start())
	// A recursive delete of a system tree fails on every file and goes
	// on: once the traces hold maxTrace bytes, what it does is known.
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cmd.Wait() // the command's own failure is not the test's
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	cut := false
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			if !cut && traceSize(j.traces) > maxTrace {
				cut = true
				cancel()
			}
		}
	}
	if _, err := os.Stat(j.guard); err != nil {
		t.Fatalf("the jail did not hold: after %q the guard file is gone (%v)", c.cmd, err)
	}
	if strings.Contains(out.String(), "bashdiff jail:") {
		t.Fatalf("the jail failed for %q: %s", c.cmd, out.String())
	}
	events, err := readTraces(j.traces, dir, j.bash)
	if err != nil {
		t.Fatalf("%q: %v (output: %s)", c.cmd, err, tail(out.String()))
	}
	r := runResult{events: events, dir: dir, out: tail(out.String()), cut: cut}
	for _, e := range events {
		if e.kind == "exec" && e.path == "/bin/false" && filepath.Base(e.argv[0]) != "false" {
			r.missing = append(r.missing, e.argv[0])
		}
	}
	return r
}

// jailSeeds are the files of a fresh sentinel tree: those the rows read
// (a redirection from a missing file would keep the program from
// running), and a home with start-up files for the globs of ~/*.
var jailSeeds = map[string]string{
	"work/f": "e\n", "work/a": "a\n", "work/b": "b\n", "work/x": "x\n", "work/notes.txt": "x\n",
	"work/file.txt": "foo\n", "work/list": "build\n", "work/list.txt": "build\n", "work/count": "3\n",
	"work/files": "f\n", "work/image": "i\n", "work/disk.img": "i\n", "work/table.txt": "\n", "work/users.txt": "u:p\n",
	"work/script.ed": "q\n", "work/payload.b64": "dHJ1ZQo=\n", "work/requirements.txt": "\n",
	"root/.bashrc": "# sentinel\n", "root/.profile": "# sentinel\n", "root/notes": "sentinel\n",
}

// cappedBuffer keeps the first max bytes written to it (yes, say, writes
// without end).
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// maxTrace bounds the trace of one command, in bytes.
const maxTrace = 256 << 10

func traceSize(dir string) int64 {
	ents, _ := os.ReadDir(dir)
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func tail(s string) string {
	if len(s) > 400 {
		return "…" + s[len(s)-400:]
	}
	return s
}

// event is one thing a traced process did.
type event struct {
	kind        string   // exec, delete, rename, write, kill, fork (a fork refused)
	argv        []string // exec: its argv; kill: pid and signal
	path, path2 string   // absolute (exec: the program file)
	dir         string   // exec: the working directory
	isDir       bool     // delete: a directory
	flags       string   // write: the open flags
	errno       string   // "" when the call succeeded
}

// blocked reports that the call was refused for want of permission: the
// jail or the unprivileged user stopped a change.
func (e *event) blocked() bool {
	return e.errno == "EACCES" || e.errno == "EPERM" || e.errno == "EROFS"
}

var traceLine = regexp.MustCompile(`^(\w+)\((.*)\)\s+= (.*)$`)

// readTraces parses strace -ff -xx -y output files (prefix "t.") in
// process order. The first process's executions up to the harness's bash
// are left out.
func readTraces(dir, start, bash string) ([]event, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "t.")); err == nil {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("strace wrote no trace")
	}
	// In a new PID namespace a child's PID is above its parent's.
	sort.Ints(pids)
	cwd := map[int]string{pids[0]: start}
	var events []event
	harness := true
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join(dir, "t."+strconv.Itoa(pid)))
		if err != nil {
			return nil, err
		}
		if _, ok := cwd[pid]; !ok {
			cwd[pid] = start
		}
		for _, line := range strings.Split(string(b), "\n") {
			m := traceLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			name, args, ret := m[1], splitArgs(m[2]), m[3]
			errno := ""
			if strings.HasPrefix(ret, "-1 ") {
				errno = strings.Fields(ret)[1]
			}
			at := func(i int) string { // the path of an *at call's arguments i, i+1
				p := unhex(args[i+1])
				if filepath.IsAbs(p) {
					return filepath.Clean(p)
				}
				base := cwd[pid]
				if fp, ok := fdPath(args[i]); ok {
					base = fp
				}
				return filepath.Join(base, p)
			}
			rel := func(i int) string {
				p := unhex(args[i])
				if filepath.IsAbs(p) {
					return filepath.Clean(p)
				}
				return filepath.Join(cwd[pid], p)
			}
			switch {
			case name == "execve" && len(args) >= 2:
				argv := unlist(args[1])
				if harness && pid == pids[0] {
					if errno == "" && len(argv) > 0 && argv[0] == bash {
						harness = false
					}
					continue
				}
				if len(argv) == 0 {
					argv = []string{unhex(args[0])}
				}
				events = append(events, event{kind: "exec", argv: argv, path: unhex(args[0]), dir: cwd[pid], errno: errno})
			case (name == "chdir") && errno == "" && len(args) == 1:
				cwd[pid] = rel(0)
			case name == "fchdir" && errno == "" && len(args) == 1:
				if p, ok := fdPath(args[0]); ok {
					cwd[pid] = p
				}
			case name == "clone" || name == "clone3" || name == "fork" || name == "vfork":
				if child, err := strconv.Atoi(strings.Fields(ret)[0]); err == nil && child > 0 {
					cwd[child] = cwd[pid]
				}
				if errno == "EAGAIN" {
					// Past the jail's bound on processes.
					events = append(events, event{kind: "fork", errno: "EPERM"})
				}
			case (name == "unlink" || name == "rmdir") && len(args) >= 1:
				events = append(events, event{kind: "delete", path: rel(0), isDir: name == "rmdir", errno: errno})
			case name == "unlinkat" && len(args) >= 3:
				events = append(events, event{kind: "delete", path: at(0), isDir: strings.Contains(args[2], "AT_REMOVEDIR"), errno: errno})
			case name == "rename" && len(args) >= 2:
				events = append(events, event{kind: "rename", path: rel(0), path2: rel(1), errno: errno})
			case (name == "renameat" || name == "renameat2") && len(args) >= 4:
				events = append(events, event{kind: "rename", path: at(0), path2: at(2), errno: errno})
			case name == "open" && len(args) >= 2 && writeFlags(args[1]):
				events = append(events, event{kind: "write", path: rel(0), flags: args[1], errno: errno})
			case name == "openat" && len(args) >= 3 && writeFlags(args[2]):
				events = append(events, event{kind: "write", path: at(0), flags: args[2], errno: errno})
			case name == "creat" && len(args) >= 1:
				events = append(events, event{kind: "write", path: rel(0), flags: "O_TRUNC", errno: errno})
			case name == "kill" && len(args) == 2:
				events = append(events, event{kind: "kill", argv: []string{args[0], strings.TrimPrefix(args[1], "SIG")}, errno: errno})
			}
		}
	}
	return events, nil
}

func writeFlags(flags string) bool {
	for _, f := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE"} {
		if strings.Contains(flags, f) {
			return true
		}
	}
	return false
}

// splitArgs splits strace's argument text at the commas between
// arguments (with -xx no string holds a raw comma or quote).
func splitArgs(s string) []string {
	var args []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(args, strings.TrimSpace(s[start:]))
}

// unhex decodes a string argument written by strace -xx ("\x2f\x65"…).
func unhex(s string) string {
	if i := strings.LastIndexByte(s, '"'); i > 0 && s[0] == '"' {
		s = s[1:i]
	}
	s = strings.ReplaceAll(s, `\x`, "")
	b, err := hex.DecodeString(s)
	if err != nil {
		return s
	}
	return string(b)
}

// unlist decodes an argv array.
func unlist(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if s == "" {
		return nil
	}
	var out []string
	for _, a := range splitArgs(s) {
		if strings.HasPrefix(a, `"`) {
			out = append(out, unhex(a))
		}
	}
	return out
}

// fdPath is the path strace -y shows for a descriptor argument
// (3<\x2f…> or AT_FDCWD<\x2f…>).
func fdPath(s string) (string, bool) {
	i, k := strings.IndexByte(s, '<'), strings.LastIndexByte(s, '>')
	if i < 0 || k < i {
		return "", false
	}
	return unhex(`"` + s[i+1:k] + `"`), true
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// diffAllowed are near misses of the tables that are harmless to run:
// bash builtins, and programs that only read or write in the directory.
var diffAllowed = []checkCase{
	{cmd: "test -v HOME"},
	{cmd: "[[ -v 'x[1]' ]]"},
	{cmd: "[[ 3 -eq 0 ]] || true"},
	{cmd: "read x <<<hi; echo $x"},
	{cmd: `read -a arr <<<"a b"; echo ${arr[1]}`},
	{cmd: "printf -v 'x[1]' %s hi; echo ${x[1]}"},
	{cmd: "let 'x[1]=1' y=2+3; echo $y"},
	{cmd: "declare -a x; x[1]=1; declare -A m; m[key]=1; echo ${m[key]}"},
	{cmd: "declare -n r=x; x=1; echo $r"},
	{cmd: "typeset -i y=3+4; echo $y"},
	{cmd: "y=5; echo $((y))"},
	{cmd: "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i"},
	{cmd: "for ((i=0; i<3; i++)); do echo $i; done"},
	{cmd: "echo a > f; n=$(wc -l < f); echo $((n+1))"},
	{cmd: "for i in $(seq 1 3); do echo $((i*i)); done"},
	{cmd: `arr=(a b c); for i in "${!arr[@]}"; do echo "${arr[$i]}"; done`},
	{cmd: "x='hi'; echo ${x@P}"},
	{cmd: "x=HOME; echo ${!x}"},
	{cmd: "unset x 'x[1]'; getopts ab opt; true"},
	{cmd: "echo x >> notes.txt; cat notes.txt"},
	{cmd: "mkdir -p build && touch build/a && rm -rf build"},
	{cmd: "find . -name x -print"},
	{cmd: "echo e > f; sed 's/e/E/g' f"},
	{cmd: "echo a b > f; awk '{print $1}' f; awk '{print > \"out.txt\"}' f"},
	{cmd: "echo hi > f; tar -cf out.tar f && tar -tf out.tar"},
	{cmd: "bash -s", stdin: ptr("echo from stdin; ls")},
	{cmd: "cat", stdin: ptr("rm -rf /")},
	{cmd: "PROMPT_COMMAND='history -a'; PS1='$(date +%H:%M)> '; true"},
}
