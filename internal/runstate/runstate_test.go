package runstate

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name may hold spaces and parentheses.
	line := "4711 (a) (b c) S 1 4711 4711 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10 18446744073709551615"
	state, start, err := parseStat(line)
	if err != nil || state != "S" || start != 123456 {
		t.Fatalf("parseStat = %q, %d, %v; want S, 123456, nil", state, start, err)
	}
	if _, _, err := parseStat("4711 (x) S 1 2"); err == nil {
		t.Fatal("a short stat line parsed")
	}
}

func TestSelfMatchesProc(t *testing.T) {
	id, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if id.PID != os.Getpid() || id.StartTime == 0 || id.BootID == "" {
		t.Fatalf("Self() = %+v", id)
	}
}

// startSleep starts a process the test owns and stops it at the end.
func startSleep(t *testing.T) *osexec.Cmd {
	t.Helper()
	cmd := osexec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestLockLifecycle(t *testing.T) {
	dir := t.TempDir()
	if st := Inspect(dir); st.State != NotRunning {
		t.Fatalf("empty dir: %v", st.State)
	}
	l, stale, err := Acquire(dir)
	if err != nil || stale != nil {
		t.Fatalf("Acquire = %v, %v", stale, err)
	}
	if err := l.Write(Runtime{URL: "http://127.0.0.1:1/mcp", Version: "test"}); err != nil {
		t.Fatal(err)
	}
	st := Inspect(dir)
	if st.State != Running || st.Runtime.PID != os.Getpid() || st.Runtime.URL != "http://127.0.0.1:1/mcp" {
		t.Fatalf("Inspect = %+v", st)
	}
	for _, f := range []string{RuntimeFile, PIDFile, LockFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want mode 0600", f, fi.Mode(), err)
		}
	}
	// flock is per open file description: a second Acquire fails even in
	// this process, and names the holder.
	_, _, err = Acquire(dir)
	var re *RunningError
	if !errors.As(err, &re) || !errors.Is(err, ErrRunning) || re.Runtime == nil || re.Runtime.PID != os.Getpid() {
		t.Fatalf("second Acquire = %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if st := Inspect(dir); st.State != NotRunning {
		t.Fatalf("after Release: %v (%s)", st.State, st.Reason)
	}
}

func TestRecycledPIDIsStaleAndNeverSignalled(t *testing.T) {
	dir := t.TempDir()
	cmd := startSleep(t)
	id, err := Of(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	wrong := id
	wrong.StartTime++ // the PID as a gateway that has since died would have recorded it
	l, _, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeRuntime(t, dir, wrong)
	st := Inspect(dir)
	if st.State != Stale || st.Reason == "" {
		t.Fatalf("Inspect = %+v, want stale", st)
	}
	if _, err := Open(wrong); !errors.Is(err, ErrNotSame) {
		t.Fatalf("Open(recycled) = %v, want ErrNotSame", err)
	}
	// The right identity opens, and signal 0 reaches it.
	p, err := Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Signal(0); err != nil {
		t.Fatal(err)
	}
	if p.Wait(10 * time.Millisecond) {
		t.Fatal("Wait says a sleeping process exited")
	}
	l.Release()

	// Stale files are cleaned by the next Acquire, which says what it found.
	writeRuntime(t, dir, wrong)
	l, stale, err := Acquire(dir)
	if err != nil || stale == nil || stale.State != Stale {
		t.Fatalf("Acquire over stale state = %+v, %v", stale, err)
	}
	l.Release()
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the unrelated process did not survive: %v", err)
	}
}

func TestWaitSeesExit(t *testing.T) {
	cmd := osexec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() // reap, or it stays a zombie
	defer func() { cmd.Process.Kill(); <-done }()
	id, _ := Of(cmd.Process.Pid)
	p, err := Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !p.Wait(5 * time.Second) {
		t.Fatal("Wait did not see the exit")
	}
}

func TestPIDFileWithoutRuntimeIsStale(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, PIDFile), []byte("1\n"), 0o600)
	st := Inspect(dir)
	if st.State != Stale || st.Runtime != nil {
		t.Fatalf("Inspect = %+v, want stale without a runtime", st)
	}
}

func writeRuntime(t *testing.T, dir string, id Identity) {
	t.Helper()
	b := []byte(`{"pid":` + itoa(id.PID) + `,"start_time":` + itoa(int(id.StartTime)) + `,"boot_id":"` + id.BootID + `","url":"http://127.0.0.1:1/mcp"}`)
	if err := os.WriteFile(filepath.Join(dir, RuntimeFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
