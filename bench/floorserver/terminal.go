package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// terminalStart bounds how long a new shell may take to print its prompt.
const terminalStart = 20 * time.Second

// terminals are the shells floorserver holds on pseudo-terminals. It is
// safe for concurrent use.
type terminals struct {
	// mu protects the following.
	mu   sync.Mutex
	next int
	open map[string]*terminal
}

// terminal is one shell on a pseudo-terminal.
type terminal struct {
	cmd     *exec.Cmd
	master  *os.File
	drained chan struct{} // closed when the output reader ends
}

// create starts bash on a new pseudo-terminal, as rigout's terminal
// sessions do (no profile, no rc, no line editing, interactive, TERM=dumb),
// and waits until it prints its first prompt.
func (ts *terminals) create(shell string) toolResult {
	cmd := exec.Command(shell, "--noprofile", "--norc", "--noediting", "-i")
	cmd.Env = append(os.Environ(), "TERM=dumb", "PAGER=cat")
	m, err := pty.Start(cmd)
	if err != nil {
		return errorResult(err)
	}
	master, err := pollable(m)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return errorResult(err)
	}
	t := &terminal{cmd: cmd, master: master, drained: make(chan struct{})}
	prompt := make(chan struct{})
	go func() {
		defer close(t.drained)
		buf := make([]byte, 4096)
		first := true
		for {
			n, err := master.Read(buf)
			if n > 0 && first {
				close(prompt)
				first = false
			}
			if err != nil {
				if first {
					close(prompt)
				}
				return
			}
		}
	}()
	timer := time.NewTimer(terminalStart)
	defer timer.Stop()
	select {
	case <-prompt:
	case <-timer.C:
		t.hangUp()
		return errorResult(fmt.Errorf("the shell printed nothing within %v", terminalStart))
	}
	select {
	case <-t.drained:
		t.hangUp()
		return errorResult(errors.New("the shell exited at once"))
	default:
	}
	ts.mu.Lock()
	ts.next++
	id := "f" + strconv.Itoa(ts.next)
	ts.open[id] = t
	ts.mu.Unlock()
	return toolResult{Content: []text{{Type: "text", Text: "session_id: " + id}},
		Structured: map[string]any{"session_id": id, "pid": cmd.Process.Pid}}
}

// close hangs up the session's terminal and waits for its shell to exit.
func (ts *terminals) close(id string) toolResult {
	ts.mu.Lock()
	t := ts.open[id]
	delete(ts.open, id)
	ts.mu.Unlock()
	if t == nil {
		return errorResult(fmt.Errorf("no session %q", id))
	}
	t.hangUp()
	return toolResult{Content: []text{{Type: "text", Text: "session " + id + " closed"}}}
}

// closeAll hangs up every session.
func (ts *terminals) closeAll() {
	ts.mu.Lock()
	all := ts.open
	ts.open = map[string]*terminal{}
	ts.mu.Unlock()
	for _, t := range all {
		t.hangUp()
	}
}

// pollable returns a non-blocking duplicate of a PTY master and closes
// the original: pty's ioctls leave the master blocking, and Close could
// then not end a Read in progress; a non-blocking file goes through the
// runtime's poller, whose Close does.
func pollable(m *os.File) (*os.File, error) {
	defer m.Close()
	fd, err := syscall.Dup(int(m.Fd()))
	if err != nil {
		return nil, fmt.Errorf("dup the terminal: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("terminal: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// hangUp closes the terminal's master side, which sends the shell SIGHUP,
// and waits for it to exit; SIGKILL after five seconds.
func (t *terminal) hangUp() {
	_ = t.master.Close()
	waited := make(chan struct{})
	go func() {
		_ = t.cmd.Wait()
		close(waited)
	}()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case <-waited:
	case <-timer.C:
		_ = t.cmd.Process.Kill()
		<-waited
	}
	<-t.drained
}

func errorResult(err error) toolResult {
	return toolResult{Content: []text{{Type: "text", Text: err.Error()}}, IsError: true}
}
