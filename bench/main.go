// Command bench measures rigout side by side with the floor: the least the
// same work costs without rigout (a bare fork/exec, starting `true`, a plain
// net/http handler, an fsync'd JSON-lines file, parsing without the policy,
// OpenSSH). Every figure is a ratio of two series measured in the same run,
// interleaved (A B A B …), because the machines it runs on are shared and
// noisy: absolute times from different runs are not comparable.
//
// bench is its own module (bench/go.mod), so that its plotting
// dependencies stay out of the rigout module's graph. From the bench
// directory:
//
//	go run .            # full run, about 11 minutes here (budgets ≤ 26)
//	go run . --quick    # smaller counts, under three minutes
//
// It builds cmd/rigout (in the rigout module, with rigout's own go.mod) and
// bench/floorserver, runs every scenario, prints the table and writes
// bench/results/<date>.md (the table), <date>.json (every raw sample) and
// <date>-latency.png (latency distributions). Quick runs write
// <date>-quick.* so they never overwrite a full run. The exit status is 1
// when a scenario fails to run, 2 on a usage error.
//
// Helper processes listen on loopback only and are stopped by their PID;
// every loop is bounded in count and in time. See bench/README.md for the
// scenarios and how to read the table.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	rigexec "github.com/rigout/rigout/exec"
)

func main() {
	// Scenario 14 starts this program again as a view's spawner.
	rigexec.ServeSandboxSpawner()
	if len(os.Args) > 1 && os.Args[1] == bareArg {
		os.Exit(runBare(os.Args[2:], os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command-line flags.
type options struct {
	quick bool
	out   string
	only  map[string]bool // scenario IDs to run; nil means all
	rev   string
	base  string // a rigout binary to measure beside this tree's in scenarios 1 and 6
}

// run parses the flags, runs every scenario and writes the results. It
// returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "smaller counts and shorter windows: under three minutes, for development")
	out := fs.String("out", "", "directory for the results (default bench/results in the repository)")
	only := fs.String("only", "", "comma-separated scenario numbers to run, e.g. 2,3 (default all)")
	rev := fs.String("rev", "", "source revision to record in the results (default: git describe of the repository)")
	base := fs.String("base", "", "a rigout binary (e.g. built from main) that scenarios 1 and 6 also measure, interleaved with this tree's, and compare against")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	opts := options{quick: *quick, out: *out, rev: *rev}
	if *base != "" {
		abs, err := filepath.Abs(*base)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench: --base: %v\n", err)
			return 2
		}
		opts.base = abs
	}
	if opts.out == "" {
		opts.out = filepath.Join(root, "bench", "results")
	}
	if *only != "" {
		opts.only = map[string]bool{}
		for _, id := range strings.Split(*only, ",") {
			opts.only[strings.TrimSpace(id)] = true
		}
	}
	if opts.rev == "" {
		opts.rev = gitDescribe(root)
	}
	command := "cd bench && go run ."
	for _, a := range args {
		if strings.ContainsAny(a, " \t'\"$`\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		command += " " + a
	}
	return execute(ctx, opts, root, command, scenarios(), stdout, stderr)
}

// execute runs scenarios and writes the results; run's testable core.
func execute(ctx context.Context, opts options, root, command string, list []scenario, stdout, stderr io.Writer) int {
	tmp, err := os.MkdirTemp("", "rigout-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	mode := "full"
	if opts.quick {
		mode = "quick"
	}
	res := newResults(mode, command, time.Now())
	res.Revision = opts.rev
	res.Machine = machine()
	b := &bench{quick: opts.quick, root: root, tmp: tmp, res: res, log: stderr, base: opts.base}

	// Build before any budget starts, so that a slow compile on a busy
	// machine does not eat a scenario's time.
	for _, s := range list {
		if s.NeedsBuild && s.NotYet == "" && (opts.only == nil || opts.only[s.ID]) {
			if err := b.build(ctx); err != nil {
				fmt.Fprintf(stderr, "bench: %v\n", err)
				return 1
			}
			break
		}
	}

	for _, s := range list {
		if opts.only != nil && !opts.only[s.ID] {
			continue
		}
		if s.NotYet != "" {
			res.AddRow(Row{Scenario: s.ID, Name: s.Title, Status: statusNotYet, Note: s.NotYet})
			continue
		}
		budget := s.Full
		if opts.quick {
			budget = s.Quick
		}
		b.logf("scenario %s: %s (budget %v)", s.ID, s.Title, budget)
		start := time.Now()
		if err := runScenario(ctx, b, s, budget); err != nil {
			b.logf("scenario %s failed: %v", s.ID, err)
			res.AddRow(Row{Scenario: s.ID, Name: s.Title, Status: statusFailed, Note: oneLine(err.Error())})
		} else {
			b.logf("scenario %s done in %v", s.ID, time.Since(start).Round(time.Millisecond))
		}
		if ctx.Err() != nil {
			break
		}
	}
	res.Machine.LoadEnd = loadAvg()
	res.finish(time.Now())

	prefix := resultPrefix(res.Date, opts)
	if err := os.MkdirAll(opts.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	written := []string{}
	plotName := ""
	if hasLatency(res) {
		plotName = prefix + "-latency.png"
		png := filepath.Join(opts.out, plotName)
		if err := latencyPlot(res, png); err != nil {
			fmt.Fprintf(stderr, "bench: plot: %v\n", err)
			return 1
		}
		written = append(written, png)
	}
	md, js, err := res.writeFiles(opts.out, prefix, plotName)
	if err != nil {
		fmt.Fprintf(stderr, "bench: writing results: %v\n", err)
		return 1
	}
	written = append(written, md, js)
	res.table(stdout)
	fmt.Fprintf(stderr, "wrote %s\n", strings.Join(written, ", "))
	if n := res.Failed(); n > 0 {
		fmt.Fprintf(stderr, "bench: %d scenario row(s) failed\n", n)
		return 1
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "bench: interrupted")
		return 1
	}
	return 0
}

// runScenario runs one scenario within its budget and turns a panic into an
// error.
func runScenario(ctx context.Context, b *bench, s scenario, budget time.Duration) (err error) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return s.Run(ctx, b)
}

// scenario is one thing bench measures.
type scenario struct {
	ID    string
	Title string
	// NotYet says why the scenario cannot run yet (its feature has not
	// landed). If set, Run is not called and the table says "not yet".
	NotYet string
	// Quick and Full bound the scenario's wall time in each mode; its
	// loops stop when the time runs out and report what they measured.
	Quick, Full time.Duration
	// Run measures and adds series and rows to b.res. An error means the
	// scenario failed to run.
	Run func(ctx context.Context, b *bench) error
	// NeedsBuild says Run uses the rigout and floorserver binaries.
	NeedsBuild bool
}

// scenarios is the list bench runs, in order.
func scenarios() []scenario {
	return []scenario{
		{ID: "1", Title: "cold start", Quick: 8 * time.Second, Full: time.Minute, Run: coldStart, NeedsBuild: true},
		{ID: "2", Title: "local call latency", Quick: 20 * time.Second, Full: 3 * time.Minute, Run: localLatency, NeedsBuild: true},
		{ID: "3", Title: "HTTP throughput", Quick: 27 * time.Second, Full: 4 * time.Minute, Run: throughput, NeedsBuild: true},
		{ID: "4", Title: "validator", Quick: 4 * time.Second, Full: 40 * time.Second, Run: validator},
		{ID: "5", Title: "audit ledger", Quick: 14 * time.Second, Full: 2 * time.Minute, Run: auditLedger},
		{ID: "6", Title: "memory", Quick: 40 * time.Second, Full: 4 * time.Minute, Run: memory, NeedsBuild: true},
		{ID: "7", Title: "SSH: warm call, fresh call, fan-out", Quick: 18 * time.Second, Full: 2 * time.Minute, Run: sshScenario, NeedsBuild: true},
		{ID: "8", Title: "file transfer: 1 GiB up and down vs OpenSSH sftp", Quick: 12 * time.Second, Full: 2 * time.Minute, Run: fileTransfer, NeedsBuild: true},
		{ID: "9", Title: "kernel sandbox: sandboxed vs unsandboxed local call", Quick: 5 * time.Second, Full: 40 * time.Second, Run: sandboxCost, NeedsBuild: true},
		{ID: "10", Title: "spool write throughput of a background process", Quick: time.Second, Full: 30 * time.Second, Run: spoolThroughput},
		{ID: "11", Title: "terminal session: warm session vs one-shot call", Quick: 900 * time.Millisecond, Full: 39 * time.Second, Run: terminalLatency, NeedsBuild: true},
		{ID: "12", Title: "audit ledger engines: PostgreSQL vs SQLite through rigout serve", Quick: 10 * time.Second, Full: 2 * time.Minute, Run: ledgerEngines, NeedsBuild: true},
		{ID: "13", Title: "audit ledger queries: 10M rows vs 100k", Quick: 5 * time.Second, Full: 3 * time.Minute, Run: ledgerQuery},
		{ID: "14", Title: "per-principal view: first call, idle memory", Quick: 5 * time.Second, Full: 30 * time.Second, Run: viewCost},
	}
}

// bench is the state of one run, shared by the scenarios.
type bench struct {
	quick bool
	root  string // the rigout module's directory, the repository root
	tmp   string // removed when the run ends
	res   *Results
	log   io.Writer

	buildOnce sync.Once
	buildErr  error
	rigout    string // binary built from ./cmd/rigout
	base      string // --base: another rigout binary to compare against, or ""
	floor     string // binary built from bench/floorserver
}

// pick returns quick or full by mode.
func pick[T any](b *bench, quick, full T) T {
	if b.quick {
		return quick
	}
	return full
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench: "+format+"\n", args...)
}

// repoRoot is the directory of the rigout module that the bench module in
// the working directory builds against: bench/go.mod replaces it with "../",
// so this is the repository root. The go command resolves the replacement,
// which keeps the answer right however the bench module is reached.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/rigout/rigout").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("run bench from the bench directory (cd bench && go run .): go list -m github.com/rigout/rigout: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("run bench from the bench directory (cd bench && go run .): the rigout module has no local directory")
	}
	return dir, nil
}

// gitDescribe names the source revision, or "" outside a git checkout.
func gitDescribe(root string) string {
	out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return "git " + strings.TrimSpace(string(out))
}

// machine describes this machine.
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadStart: loadAvg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					kib, _ := strconv.ParseInt(f[0], 10, 64)
					m.MemoryMiB = kib / 1024
				}
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// loadAvg is the 1-minute load average, or 0 if unknown.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// plural writes "1 client", "8 clients".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// resultPrefix names a run's result files: <date> for a full run of every
// scenario, with "-quick" for quick runs and "-only-2-3" when --only chose
// scenarios, so that neither can overwrite the full run that is committed.
func resultPrefix(date string, opts options) string {
	prefix := date
	if opts.quick {
		prefix += "-quick"
	}
	if opts.only != nil {
		ids := slices.SortedFunc(maps.Keys(opts.only), func(a, b string) int {
			x, errA := strconv.Atoi(a)
			y, errB := strconv.Atoi(b)
			if errA != nil || errB != nil {
				return strings.Compare(a, b)
			}
			return x - y
		})
		prefix += "-only-" + strings.Join(ids, "-")
	}
	return prefix
}
