package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/rigout/rigout/exec"
)

// startPTYViaHelper starts cmd on a terminal on the host through its
// helper, in the principal's view there (Local.StartPTY on the host). used
// is false when the helper is off or, under HelperAuto, could not run: why
// then says why (empty when off), and the caller takes the plain SSH path.
func (s *SSH) startPTYViaHelper(ctx context.Context, cmd exec.Command, size exec.PTYSize) (_ *exec.PTY, used bool, why string, _ error) {
	mode := s.helperMode()
	if mode == HelperOff {
		return nil, false, "", nil
	}
	if err := cmd.Validate(); err != nil {
		return nil, true, "", err
	}
	if s.r.cfg.Check != nil {
		if err := s.r.cfg.Check(ctx, s.ep.Name, cmd); err != nil {
			return nil, true, "", err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, true, "", fmt.Errorf("exec: not started: %w", err)
	}
	h, c, err := s.helper(ctx)
	if err != nil {
		var he *HelperError
		if !errors.As(err, &he) {
			return nil, true, "", err
		}
		if mode == HelperRequire {
			return nil, true, "", fmt.Errorf("%w: %w", ErrHelperRequired, err)
		}
		return nil, false, he.Reason, nil
	}
	if err := cmd.Proceed(); err != nil {
		c.release()
		return nil, true, "", err
	}
	sz := size.OrDefault()
	run := &exec.HelperRun{Shell: cmd.Shell, Argv: cmd.Argv, Dir: cmd.Dir, Env: cmd.Env, Secrets: cmd.Secrets,
		Timeout: cmd.Timeout, Principal: s.helperPrincipal(ctx), Stream: true, PTY: &sz}
	id, pc, err := h.begin(exec.HelperRequest{Op: "run", Run: run})
	if err != nil {
		c.release()
		return nil, true, "", err
	}
	route := s.ep.Route() + " via " + h.info.String()
	sandboxed := h.info.Commands != "none"
	unsandboxed := ""
	if !sandboxed {
		unsandboxed = "remote host: the rigout helper runs there, with no sandbox (" + h.info.Sandbox + ")"
	}
	pr, pw := io.Pipe()
	started := make(chan struct{})
	ended := make(chan struct{})
	var rep exec.HelperReply
	var werr error
	s.r.pool.goTracked(func() {
		defer close(ended)
		rep, werr = h.await(ctx, id, pc, s.r.cfg.Grace+s.r.cfg.Drain+2*time.Second, func(r exec.HelperReply) {
			if r.Pid != 0 {
				select {
				case <-started:
				default:
					close(started)
				}
			}
			if r.Out != nil {
				_, _ = pw.Write(r.Out.Data) // fails once the PTY is closed
			}
		})
		pw.Close()
	})
	select {
	case <-started:
	case <-ended:
		c.release()
		switch {
		case werr != nil:
			return nil, true, "", fmt.Errorf("exec: terminal on %s: %w", s.ep.Name, werr)
		case rep.Err != "":
			return nil, true, "", fmt.Errorf("exec: terminal on %s through the rigout helper: %s", s.ep.Name, rep.Err)
		}
		return nil, true, "", fmt.Errorf("exec: terminal on %s: the helper ended it before it started", s.ep.Name)
	}
	start := time.Now()
	wait := func() (exec.Result, error) {
		<-ended
		res := exec.Result{Route: route, ExitCode: -1, Duration: time.Since(start), Sandboxed: sandboxed, Unsandboxed: unsandboxed}
		if werr != nil {
			if cause := c.lost(); cause != nil {
				return res, &DisconnectError{Host: s.ep.Name, Err: cause}
			}
			return res, fmt.Errorf("exec: terminal on %s: %w", s.ep.Name, werr)
		}
		if rep.Result != nil {
			res = *rep.Result
			res.Route, res.Sandboxed, res.Unsandboxed = route, sandboxed && rep.Result.Sandboxed, rep.Result.Unsandboxed
		}
		if rep.Err != "" && ctx.Err() == nil {
			return res, fmt.Errorf("exec: terminal on %s through the rigout helper: %s", s.ep.Name, rep.Err)
		}
		return res, nil
	}
	p := exec.NewPTY(exec.PTYParts{
		Output: pr, Input: helperPTYInput{h: h, id: id}, Route: route,
		Sandboxed: sandboxed, Unsandboxed: unsandboxed,
		Hangup:  func() error { return h.send(exec.HelperRequest{ID: id, Op: "signal", Signal: int(syscall.SIGHUP)}) },
		Kill:    func() { _ = h.send(exec.HelperRequest{ID: id, Op: "cancel"}) },
		Wait:    wait,
		Release: c.release,
		Free:    func() { _ = pr.Close() },
		Grace:   s.r.cfg.Grace,
	})
	return p, true, "", nil
}

// helperPTYInput types what is written into a terminal on the host.
type helperPTYInput struct {
	h  *helperClient
	id uint64
}

func (w helperPTYInput) Write(b []byte) (int, error) {
	if err := w.h.send(exec.HelperRequest{ID: w.id, Op: "stdin", Data: b}); err != nil {
		return 0, fmt.Errorf("exec: terminal input: %w", err)
	}
	return len(b), nil
}
