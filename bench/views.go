package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rigout/rigout/exec"
)

// principalKey carries the principal of a call in scenario 14.
type principalKey struct{}

// viewCost is scenario 14: what a principal's view of the machine costs
// (exec.SandboxConfig.Views, on by default in the rigout binary). In this
// process, through exec.Local: the first call of each of n new
// principals (its spawner started, its view built, then `true`) against
// the call right after it, warm, of the same principal; then, with the n
// spawners idle, each one's RSS and RssAnon against an idle `sleep`.
func viewCost(ctx context.Context, b *bench) error {
	dir := filepath.Join(b.tmp, "views")
	n := pick(b, 8, 40)
	sb, err := exec.NewSandbox(exec.SandboxConfig{
		Protected: []string{"/usr", "/etc"},
		Critical:  []string{"/etc/passwd"},
		Views: &exec.ViewConfig{
			TmpDir:        filepath.Join(dir, "tmp"),
			MaxPrincipals: n + 1,
			Principal: func(ctx context.Context) exec.Principal {
				name, _ := ctx.Value(principalKey{}).(string)
				return exec.Principal{Name: name}
			},
		},
	})
	if err != nil {
		return err
	}
	defer sb.Close()
	if st := sb.Status(); !st.Views {
		return fmt.Errorf("no per-principal views here: %s", st.ViewsReason)
	}
	l := &exec.Local{Sandbox: sb}
	call := func(name string) (time.Duration, error) {
		cctx, cancel := context.WithTimeout(context.WithValue(ctx, principalKey{}, name), callTimeout)
		defer cancel()
		t0 := time.Now()
		res, err := l.Run(cctx, exec.Command{Argv: []string{"true"}, Dir: "/"})
		d := time.Since(t0)
		if err == nil && (res.ExitCode != 0 || !res.Sandboxed) {
			err = fmt.Errorf("true in a view: exit %d, sandboxed %v: %s", res.ExitCode, res.Sandboxed, res.Stderr.Data)
		}
		return d, err
	}
	var first, warm []float64
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		name := "bench-principal-" + strconv.Itoa(i)
		d1, err := call(name)
		if err != nil {
			return err
		}
		d2, err := call(name)
		if err != nil {
			return err
		}
		first, warm = append(first, ms(d1)), append(warm, ms(d2))
	}
	b.res.AddSeries("14/first", "ms", first)
	b.res.AddSeries("14/warm", "ms", warm)
	b.res.AddRow(Row{Scenario: "14", Name: "first call of a new principal (spawner started, view built, `true`), p50", Unit: "ms", Better: "lower",
		Stat: "median", Floor: "the same principal's next call, warm", RigoutSeries: "14/first", FloorSeries: "14/warm"})

	// Memory of the idle views, against as many idle sleep processes.
	time.Sleep(500 * time.Millisecond)
	spawners, err := spawnerPIDs()
	if err != nil {
		return err
	}
	if len(spawners) != len(first) {
		return fmt.Errorf("%d spawners running for %d principals", len(spawners), len(first))
	}
	var sleeps []*osexec.Cmd
	defer func() {
		for _, c := range sleeps {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	for range spawners {
		c := osexec.Command("sleep", "600")
		if err := c.Start(); err != nil {
			return err
		}
		sleeps = append(sleeps, c)
	}
	time.Sleep(200 * time.Millisecond)
	for _, field := range []string{"VmRSS", "RssAnon"} {
		var sp, sl []float64
		for i, pid := range spawners {
			v, err := rssKiB(pid, field)
			if err != nil {
				return err
			}
			w, err := rssKiB(sleeps[i].Process.Pid, field)
			if err != nil {
				return err
			}
			sp, sl = append(sp, float64(v)), append(sl, float64(w))
		}
		key := "14/" + strings.ToLower(field)
		b.res.AddSeries(key+"-view", "KiB", sp)
		b.res.AddSeries(key+"-sleep", "KiB", sl)
		b.res.AddRow(Row{Scenario: "14", Name: field + " per idle principal view (its spawner)", Unit: "KiB", Better: "lower",
			Stat: "median", Floor: "an idle `sleep` process", RigoutSeries: key + "-view", FloorSeries: key + "-sleep"})
	}
	return nil
}

// spawnerPIDs returns the spawners this process started: its children
// named rigout-sandbox-spawner.
func spawnerPIDs() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(stat), ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != self {
			continue
		}
		argv, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.HasPrefix(string(argv), "rigout-sandbox-spawner\x00") {
			out = append(out, pid)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no spawner found among this process's children")
	}
	return out, nil
}
