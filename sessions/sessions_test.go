package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/proctest"
	"github.com/rigout/rigout/sessions"
)

// markers marks the processes these tests start; none may outlive them.
var markers = proctest.NewMarkers()

func TestMain(m *testing.M) { goleak.VerifyTestMain(markers.Main(m, 5*time.Second)) }

func newManager(t *testing.T, cfg sessions.Config) *sessions.Manager {
	t.Helper()
	if cfg.Local == nil {
		cfg.Local = &exec.Local{UnsafeNoSandbox: true, Grace: 200 * time.Millisecond}
	}
	if cfg.SpoolDir == "" {
		cfg.SpoolDir = t.TempDir()
	}
	m, err := sessions.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// marker returns a unique `sleep` duration whose argv finds survivors.
func marker() string { return markers.Next() }

// survivors counts processes whose argv contains arg.
func survivors(t *testing.T, arg string) int {
	t.Helper()
	return len(proctest.WithArg(arg))
}

// waitRunning waits until exactly one process carries arg.
func waitRunning(t *testing.T, arg string) {
	t.Helper()
	proctest.WaitWithArg(t, arg, 1, 10*time.Second)
}

// waitGone waits until no process carries arg.
func waitGone(t *testing.T, arg string) {
	t.Helper()
	proctest.WaitWithArg(t, arg, 0, 10*time.Second)
}

func TestHandOffReadsDone(t *testing.T) {
	rec := &audittest.Recorder{}
	m := newManager(t, sessions.Config{Audit: rec})
	ctx := context.Background()
	p, err := m.Start(ctx, "alice", exec.Command{Shell: "sleep 1; echo done"})
	if err != nil {
		t.Fatal(err)
	}
	// The caller's wait is over: the process keeps running.
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = p.Wait(wctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait: %v", err)
	}
	q, err := m.Get("alice", p.ID())
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	var next int64
	for range 10 {
		rr, err := q.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Offset: next, Wait: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rr.Stdout.Data...)
		next = rr.Stdout.Next
		if !rr.Info.Running {
			if rr.Info.ExitCode != 0 {
				t.Fatalf("exit %d", rr.Info.ExitCode)
			}
			break
		}
	}
	if string(out) != "done\n" {
		t.Fatalf("stdout %q", out)
	}
	evs := rec.Events()
	if len(evs) != 2 || evs[0].Type != audit.TypeProcessStart || evs[1].Type != audit.TypeProcessExit ||
		evs[1].Principal != "alice" || *evs[1].ExitCode != 0 || evs[1].StdoutBytes != 5 {
		t.Fatalf("events %+v", evs)
	}
}

func TestFastStderrKept(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	p, err := m.Start(ctx, "alice", exec.Command{Shell: "echo oops >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	rr, err := p.Read(ctx, sessions.ReadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if string(rr.Stderr.Data) != "oops\n" || len(rr.Stdout.Data) != 0 || rr.Info.ExitCode != 3 {
		t.Fatalf("stderr %q stdout %q exit %d", rr.Stderr.Data, rr.Stdout.Data, rr.Info.ExitCode)
	}
	rr, _ = p.Read(ctx, sessions.ReadRequest{Stream: exec.Stderr, Tail: 1})
	if string(rr.Stderr.Data) != "oops\n" || rr.Stdout != nil {
		t.Fatalf("tail %+v", rr)
	}
}

func TestOtherPrincipal(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	mk := marker()
	p, err := m.Start(ctx, "alice", exec.Command{Argv: []string{"sleep", mk}})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.List("bob"); len(got) != 0 {
		t.Fatalf("bob lists %v", got)
	}
	if _, err := m.Get("bob", p.ID()); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("bob gets: %v", err)
	}
	if err := m.Forget("bob", p.ID()); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("bob forgets: %v", err)
	}
	if got := m.List("alice"); len(got) != 1 || got[0].ID != p.ID() || !got[0].Running {
		t.Fatalf("alice lists %v", got)
	}
	waitRunning(t, mk) // exec may not have replaced the fork yet
}

func TestWriteThenCtrlD(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	p, err := m.Start(ctx, "alice", exec.Command{Argv: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(ctx, []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	rr, err := p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Wait: 5 * time.Second})
	if err != nil || string(rr.Stdout.Data) != "hello\n" || !rr.Info.Running {
		t.Fatalf("read %q running %v: %v", rr.Stdout.Data, rr.Info.Running, err)
	}
	if err := p.CloseInput(); err != nil {
		t.Fatal(err)
	}
	res, err := p.Wait(ctx)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d: %v", res.ExitCode, err)
	}
	if _, err := p.Write(ctx, []byte("x")); !errors.Is(err, sessions.ErrFinished) {
		t.Fatalf("write after exit: %v", err)
	}
}

func TestStopEndsTree(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	mk := marker()
	p, err := m.Start(ctx, "alice", exec.Command{Shell: "sleep " + mk + " & sleep " + mk + "; wait"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for survivors(t, mk) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	res, err := p.Wait(ctx)
	if err != nil || res.Signal == "" {
		t.Fatalf("signal %q: %v", res.Signal, err)
	}
	waitGone(t, mk)
	if in := p.Info(); in.Stopped != "stopped" || in.Running {
		t.Fatalf("info %+v", in)
	}
	if err := p.Stop(); !errors.Is(err, sessions.ErrFinished) {
		t.Fatalf("second stop: %v", err)
	}
}

func TestSignalInt(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	mk := marker()
	p, err := m.Start(ctx, "alice", exec.Command{Argv: []string{"sleep", mk}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	res, _ := p.Wait(ctx)
	if res.Signal != "SIGINT" {
		t.Fatalf("signal %q", res.Signal)
	}
	waitGone(t, mk)
}

func TestReaperRetention(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m := newManager(t, sessions.Config{Now: clock, Retention: time.Minute})
	ctx := context.Background()
	p, err := m.Start(ctx, "alice", exec.Command{Shell: "echo hi"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = p.Wait(ctx)
	m.Reap()
	if _, err := m.Get("alice", p.ID()); err != nil {
		t.Fatalf("forgotten too early: %v", err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	m.Reap()
	if _, err := m.Get("alice", p.ID()); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("kept past retention: %v", err)
	}
	if ents, _ := os.ReadDir(m.SpoolDir()); len(ents) != 0 {
		t.Fatalf("spool files left: %v", ents)
	}
}

func TestReaperCeiling(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m := newManager(t, sessions.Config{Now: clock, MaxLifetime: time.Hour})
	ctx := context.Background()
	p, err := m.Start(ctx, "alice", exec.Command{Argv: []string{"sleep", marker()}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	m.Reap()
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if in := p.Info(); in.Stopped != "ceiling" {
		t.Fatalf("info %+v", in)
	}
}

func TestMaxFinished(t *testing.T) {
	m := newManager(t, sessions.Config{MaxFinished: 2})
	ctx := context.Background()
	for i := range 4 {
		p, err := m.Start(ctx, "alice", exec.Command{Shell: fmt.Sprint("echo ", i)})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = p.Wait(ctx)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(m.List("alice")) > 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := m.List("alice"); len(got) != 2 {
		t.Fatalf("kept %d", len(got))
	}
}

func TestCaps(t *testing.T) {
	m := newManager(t, sessions.Config{MaxPerPrincipal: 1, MaxTotal: 2})
	ctx := context.Background()
	sleep := func() exec.Command { return exec.Command{Argv: []string{"sleep", marker()}} }
	if _, err := m.Start(ctx, "alice", sleep()); err != nil {
		t.Fatal(err)
	}
	_, err := m.Start(ctx, "alice", sleep())
	var le *sessions.LimitError
	if !errors.As(err, &le) || !le.PerPrincipal || le.Limit != 1 || !strings.Contains(err.Error(), "alice already runs 1") {
		t.Fatalf("per principal: %v", err)
	}
	if _, err := m.Start(ctx, "bob", sleep()); err != nil {
		t.Fatal(err)
	}
	_, err = m.Start(ctx, "carol", sleep())
	if !errors.As(err, &le) || le.PerPrincipal || le.Limit != 2 {
		t.Fatalf("overall: %v", err)
	}
}

func TestCloseLeavesNothing(t *testing.T) {
	m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true, Grace: 200 * time.Millisecond}, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mk := marker()
	for _, who := range []string{"alice", "bob", "carol"} {
		if _, err := m.Start(ctx, who, exec.Command{Shell: "sleep " + mk + " & sleep " + mk}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, mk)
	if _, err := os.Stat(m.SpoolDir()); !os.IsNotExist(err) {
		t.Fatalf("spool directory left: %v", err)
	}
	if _, err := m.Start(ctx, "alice", exec.Command{Shell: "true"}); !errors.Is(err, sessions.ErrClosed) {
		t.Fatalf("start after close: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSpoolModesAndCaps(t *testing.T) {
	m := newManager(t, sessions.Config{SpoolMax: 1000, MemoryMax: 100})
	ctx := context.Background()
	// 3000 bytes of stdout: 1000 spooled, the last 100..200 in memory.
	p, err := m.Start(ctx, "alice", exec.Command{Shell: "for i in $(seq 1 300); do printf '%09d\\n' $i; done"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(m.SpoolDir())
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("spool dir mode %v: %v", fi.Mode(), err)
	}
	// stderr stayed empty, so it never needed a file.
	ents, _ := os.ReadDir(m.SpoolDir())
	if len(ents) != 1 || ents[0].Name() != p.ID()+".stdout" {
		t.Fatalf("spool files %v, want %s.stdout alone", ents, p.ID())
	}
	for _, e := range ents {
		fi, _ := e.Info()
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", e.Name(), fi.Mode())
		}
		if strings.HasSuffix(e.Name(), ".stdout") && fi.Size() != 1000 {
			t.Errorf("stdout spool %d bytes, want the cap 1000", fi.Size())
		}
	}
	rr, _ := p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Offset: 990, Max: 20})
	if c := rr.Stdout; string(c.Data) != "000000100\n" || c.Next != 1000 || c.Total != 3000 {
		t.Fatalf("across the cap: %+v %q", c, c.Data)
	}
	rr, _ = p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Offset: 1000})
	if c := rr.Stdout; c.Skipped == 0 || c.Next != 3000 || !bytes.HasSuffix(c.Data, []byte("000000300\n")) {
		t.Fatalf("past the cap: skipped %d next %d %q", c.Skipped, c.Next, c.Data)
	}
	rr, _ = p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Tail: 2})
	if string(rr.Stdout.Data) != "000000299\n000000300\n" {
		t.Fatalf("tail %q", rr.Stdout.Data)
	}
}

func TestSpoolTotalDropsOldest(t *testing.T) {
	m := newManager(t, sessions.Config{SpoolTotal: 1500, MemoryMax: 100})
	ctx := context.Background()
	var ps []*sessions.Process
	for range 2 {
		p, err := m.Start(ctx, "alice", exec.Command{Shell: "head -c 1000 /dev/zero"})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = p.Wait(ctx)
		ps = append(ps, p)
	}
	ents, _ := os.ReadDir(m.SpoolDir())
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if slicesContains(names, ps[0].ID()+".stdout") || !slicesContains(names, ps[1].ID()+".stdout") {
		t.Fatalf("spool files %v: want the oldest dropped", names)
	}
}

// TestSpoolCreatedWhenOutgrown: a stream that fits in memory gets no spool
// file, within its call or handed off; once it outgrows its tail the file
// is created and holds every byte from the start, the ones printed before
// included.
func TestSpoolCreatedWhenOutgrown(t *testing.T) {
	m := newManager(t, sessions.Config{MemoryMax: 100})
	ctx := context.Background()
	res, p, err := m.RunOn(ctx, "alice", m.Local(), exec.Command{Shell: "printf small"}, 10*time.Second)
	if err != nil || p != nil || string(res.Stdout.Data) != "small" {
		t.Fatalf("within the call: %v %v %q", err, p, res.Stdout.Data)
	}
	if ents, _ := os.ReadDir(m.SpoolDir()); len(ents) != 0 {
		t.Fatalf("spool files for a small output: %v", ents)
	}
	// Handed off with 40 bytes printed, then 400 more once it is read.
	_, p, err = m.RunOn(ctx, "alice", m.Local(), exec.Command{
		Shell: "printf '%040d' 0; read x; printf '%0400d' 1", Timeout: 20 * time.Second}, 300*time.Millisecond)
	if err != nil || p == nil {
		t.Fatalf("not handed off: %v", err)
	}
	rr, err := p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Wait: 5 * time.Second})
	if err != nil || rr.Stdout.Total != 40 {
		t.Fatalf("first read: %v %+v", err, rr.Stdout)
	}
	if ents, _ := os.ReadDir(m.SpoolDir()); len(ents) != 0 {
		t.Fatalf("spool files while the output fits in memory: %v", ents)
	}
	if _, err := p.Write(ctx, []byte("go\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%040d%0400d", 0, 1)
	rr, err = p.Read(ctx, sessions.ReadRequest{Stream: exec.Stdout, Max: 1000})
	if err != nil || string(rr.Stdout.Data) != want || rr.Stdout.Skipped != 0 {
		t.Fatalf("whole stream: %v skipped %d %q", err, rr.Stdout.Skipped, rr.Stdout.Data)
	}
	fi, err := os.Stat(filepath.Join(m.SpoolDir(), p.ID()+".stdout"))
	if err != nil || fi.Size() != int64(len(want)) || fi.Mode().Perm() != 0o600 {
		t.Fatalf("spool file: %v %v", err, fi)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestReadWaitBounded(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	p, err := m.Start(ctx, "alice", exec.Command{Argv: []string{"sleep", marker()}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rr, err := p.Read(ctx, sessions.ReadRequest{Wait: 200 * time.Millisecond})
	if err != nil || !rr.Info.Running || len(rr.Stdout.Data) != 0 {
		t.Fatalf("read %+v: %v", rr, err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 5*time.Second {
		t.Fatalf("waited %v", d)
	}
}

// TestManyProcessesLeaveNothing starts the overall cap of processes for
// several principals and closes the Manager: no process, file descriptor
// or goroutine (TestMain) is left.
func TestManyProcessesLeaveNothing(t *testing.T) {
	fds := func() int { ents, _ := os.ReadDir("/proc/self/fd"); return len(ents) }
	before := fds()
	m, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true, Grace: 200 * time.Millisecond}, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mk := marker()
	for i := range sessions.DefaultMaxTotal {
		who := fmt.Sprint("p", i%8)
		if _, err := m.Start(ctx, who, exec.Command{Argv: []string{"sleep", mk}}); err != nil {
			t.Fatal(i, err)
		}
	}
	if _, err := m.Start(ctx, "p9", exec.Command{Argv: []string{"sleep", mk}}); err == nil {
		t.Fatal("started past the overall cap")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, mk)
	if after := fds(); after > before {
		t.Fatalf("%d file descriptors before, %d after", before, after)
	}
}

func TestWriteDoesNotBlockOutput(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	// cat echoes what it reads: a large write only completes while its
	// output is being drained.
	p, err := m.Start(ctx, "alice", exec.Command{Argv: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if n, err := p.Write(wctx, big); err != nil || n != len(big) {
		t.Fatalf("wrote %d: %v", n, err)
	}
	if err := p.CloseInput(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if in := p.Info(); in.StdoutBytes != int64(len(big)) {
		t.Fatalf("cat echoed %d bytes", in.StdoutBytes)
	}
}

func TestRunQuickKeepsNothing(t *testing.T) {
	rec := &audittest.Recorder{}
	m := newManager(t, sessions.Config{Audit: rec})
	ctx := context.Background()
	res, p, err := m.Run(ctx, "alice", exec.Command{Shell: "echo quick; echo err >&2"}, 5*time.Second)
	if err != nil || p != nil {
		t.Fatalf("run: %v %v", p, err)
	}
	if string(res.Stdout.Data) != "quick\n" || string(res.Stderr.Data) != "err\n" || res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	if len(m.List("alice")) != 0 || len(rec.Events()) != 0 {
		t.Fatalf("kept %v, recorded %v", m.List("alice"), rec.Events())
	}
	if ents, _ := os.ReadDir(m.SpoolDir()); len(ents) != 0 {
		t.Fatalf("spool files left: %v", ents)
	}
}

func TestRunHandsOffWithoutRestart(t *testing.T) {
	rec := &audittest.Recorder{}
	m := newManager(t, sessions.Config{Audit: rec})
	ctx := context.Background()
	// The file counts how many times the command started.
	count := filepath.Join(t.TempDir(), "starts")
	_, p, err := m.Run(ctx, "alice", exec.Command{Shell: "echo x >> " + count + "; sleep 0.5; echo done"}, 100*time.Millisecond)
	if err != nil || p == nil {
		t.Fatalf("not handed off: %v", err)
	}
	if got := m.List("alice"); len(got) != 1 || got[0].ID != p.ID() {
		t.Fatalf("list %v", got)
	}
	res, err := p.Wait(ctx)
	if err != nil || string(res.Stdout.Data) != "done\n" {
		t.Fatalf("result %q: %v", res.Stdout.Data, err)
	}
	if b, _ := os.ReadFile(count); string(b) != "x\n" {
		t.Fatalf("started %q", b)
	}
	evs := rec.Events()
	if len(evs) != 2 || evs[0].Type != audit.TypeProcessStart || evs[1].Type != audit.TypeProcessExit {
		t.Fatalf("events %+v", evs)
	}
}

func TestRunCapAtHandOff(t *testing.T) {
	m := newManager(t, sessions.Config{MaxPerPrincipal: 1})
	ctx := context.Background()
	if _, err := m.Start(ctx, "alice", exec.Command{Argv: []string{"sleep", marker()}}); err != nil {
		t.Fatal(err)
	}
	// Quick commands still run at the cap.
	if res, p, err := m.Run(ctx, "alice", exec.Command{Shell: "echo ok"}, 5*time.Second); err != nil || p != nil || res.ExitCode != 0 {
		t.Fatalf("quick at the cap: %v", err)
	}
	mk := marker()
	res, p, err := m.Run(ctx, "alice", exec.Command{Argv: []string{"sleep", mk}}, 100*time.Millisecond)
	var le *sessions.LimitError
	if !errors.As(err, &le) || p != nil || !res.Canceled {
		t.Fatalf("long at the cap: %+v %v", res, err)
	}
	waitGone(t, mk)
}

func TestRunCanceledStops(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	mk := marker()
	res, p, err := m.Run(ctx, "alice", exec.Command{Argv: []string{"sleep", mk}}, time.Minute)
	if err != nil || p != nil || !res.Canceled {
		t.Fatalf("%+v %v", res, err)
	}
	waitGone(t, mk)
}

// TestMaxFinishedPerPrincipal: a principal that runs many short processes
// loses its own oldest results past MaxFinished, never another's.
func TestMaxFinishedPerPrincipal(t *testing.T) {
	m := newManager(t, sessions.Config{MaxFinished: 3})
	ctx := context.Background()
	run := func(who string, i int) {
		p, err := m.Start(ctx, who, exec.Command{Shell: fmt.Sprint("echo ", i)})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = p.Wait(ctx)
	}
	run("alice", 0)
	for i := range 8 {
		run("mallory", i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(m.List("mallory")) > 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if a, b := len(m.List("alice")), len(m.List("mallory")); a != 1 || b != 2 {
		t.Fatalf("kept alice %d, mallory %d; want 1 and 2", a, b)
	}
}
