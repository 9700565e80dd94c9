package exec_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
)

func TestStartSignalWait(t *testing.T) {
	l := &exec.Local{Grace: 100 * time.Millisecond}
	up := make(chan struct{}, 1)
	p, err := l.Start(context.Background(), exec.Command{Shell: "echo up; sleep 100",
		OnOutput: func(exec.Stream, []byte) { up <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	if p.Pid() <= 0 {
		t.Fatalf("pid %d", p.Pid())
	}
	<-up
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != "SIGTERM" || string(res.Stdout.Data) != "up\n" {
		t.Fatalf("signal %q stdout %q", res.Signal, res.Stdout.Data)
	}
	if err := p.Signal(syscall.SIGKILL); !errors.Is(err, exec.ErrProcessDone) {
		t.Fatalf("signal after exit: %v", err)
	}
}

func TestStartError(t *testing.T) {
	var l exec.Local
	if _, err := l.Start(context.Background(), exec.Command{Argv: []string{"/nonexistent/prog"}}); err == nil {
		t.Fatal("started a missing program")
	}
}
