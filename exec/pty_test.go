package exec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/internal/proctest"
)

// readUntil reads p until the output contains want or the deadline.
func readUntil(t *testing.T, p *exec.PTY, want string) string {
	t.Helper()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for !strings.Contains(out.String(), want) {
			n, err := p.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q in %q", want, out.String())
	}
	return out.String()
}

func TestLocalStartPTY(t *testing.T) {
	leakCheck(t)
	l := &exec.Local{Grace: 300 * time.Millisecond}
	if _, err := l.StartPTY(context.Background(), exec.Command{Shell: "cat", Stdin: strings.NewReader("x")}, exec.PTYSize{}); !errors.Is(err, exec.ErrPTYStdin) {
		t.Errorf("Stdin: %v", err)
	}
	p, err := l.StartPTY(context.Background(), exec.Command{Shell: `stty size; tty; echo "ids $(ps -o sid= -o pgid= -p $$ | tr -s ' ')"; echo ready; trap '' HUP; sleep 1000 & read line; echo "got $line"; sleep 1000`}, exec.PTYSize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := readUntil(t, p, "ready")
	if !strings.Contains(out, "30 100") || !strings.Contains(out, "/dev/pts/") {
		t.Errorf("size and terminal: %q", out)
	}
	// The program leads a session of its own, and its process group.
	if want := fmt.Sprintf("ids %d %d", p.Pid(), p.Pid()); !strings.Contains(strings.ReplaceAll(out, "ids  ", "ids "), want) {
		t.Errorf("want %q in %q", want, out)
	}
	if _, err := p.Write([]byte("typed\n")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, p, "got typed")
	// Close hangs up; the shell ignores SIGHUP, so the tree is killed
	// after the grace: nothing of the session group is left.
	pid := p.Pid()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	res, _ := p.Wait()
	if res.Signal != "SIGKILL" {
		t.Errorf("ended by %q, want SIGKILL (after SIGHUP was ignored): %+v", res.Signal, res)
	}
	proctest.WaitGroupGone(t, pid, 5*time.Second)
	if _, err := p.Read(make([]byte, 10)); !errors.Is(err, io.EOF) {
		t.Errorf("read after close: %v", err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("leader %d still there", pid)
	}
}
