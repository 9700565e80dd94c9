package exec

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// HelperServeConfig configures the far side of the helper protocol
// (ServeHelper), as the rigout-helper program passes it from its flags.
type HelperServeConfig struct {
	// Home is the login's home directory. If empty, $HOME.
	Home string
	// CacheDir is the helper's cache directory (absolute, or relative to
	// Home): it holds the helper itself and, in state/tmp, each
	// principal's private /tmp. Commands cannot read it. If empty,
	// ".cache/rigout".
	CacheDir string
	// Hidden are further paths commands cannot read (absolute, or
	// relative to Home).
	Hidden []string
	// SHA256 is the hash the starting command verified, reported back in
	// the hello.
	SHA256 string
	// Runs says what code is running, reported back in the hello as
	// HelperInfo.Runs: "sealed memfd" after ExecSealedHelper and
	// VerifySealedHelper, else why not.
	Runs string
}

// helperPrincipalKey carries a run's principal to ViewConfig.Principal.
type helperPrincipalKey struct{}

// ServeHelper is the far side of rigout's SSH helper: it reads requests
// from in and writes replies to out (framed JSON, see docs/SSH_HELPER.md)
// until in ends or ctx is done. It first writes a hello saying what it
// enforces on this host: commands run by a Local whose Sandbox gives each
// principal a view of the host where the kernel allows (else Landlock
// alone, else nothing, and the hello says which), with the login's key
// and agent paths and the helper's own directory hidden; file operations
// resolve names beneath their root with openat2 and follow no symbolic
// link. When in ends, every running command is cancelled and waited for.
//
// The program calling ServeHelper must call ServeSandboxSpawner first in
// main, as for local views.
func ServeHelper(ctx context.Context, in io.Reader, out io.Writer, cfg HelperServeConfig) error {
	home := cfg.Home
	if home == "" {
		home = os.Getenv("HOME")
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(home, p)
	}
	cache := cfg.CacheDir
	if cache == "" {
		cache = ".cache/rigout"
	}
	cache = abs(cache)
	hidden := []string{abs(".ssh"), abs(".gnupg"), cache}
	for _, env := range []string{"SSH_AUTH_SOCK", "XDG_RUNTIME_DIR"} {
		if v := os.Getenv(env); filepath.IsAbs(v) {
			hidden = append(hidden, v)
		}
	}
	for _, h := range cfg.Hidden {
		hidden = append(hidden, abs(h))
	}
	tmp := filepath.Join(cache, "state", "tmp")

	info := HelperInfo{Version: HelperVersion, SHA256: cfg.SHA256, Runs: cfg.Runs, Commands: "none", Files: helperFilesSupport()}
	var sb *Sandbox
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		info.Sandbox = "no sandbox: " + err.Error()
	} else {
		var err error
		sb, err = NewSandbox(SandboxConfig{
			Hidden: hidden,
			Views: &ViewConfig{
				Writable: []string{home},
				Hidden:   hidden,
				TmpDir:   tmp,
				Principal: func(ctx context.Context) Principal {
					p, _ := ctx.Value(helperPrincipalKey{}).(Principal)
					return p
				},
			},
		})
		if err != nil {
			info.Sandbox = "no sandbox: " + err.Error()
			sb = nil
		} else {
			_ = sb.Ready()
			st := sb.Status()
			info.Sandbox = st.String()
			switch {
			case st.Views:
				info.Commands = "view"
				info.Files = "in the principal's view, beneath the root"
			case st.Enforced:
				info.Commands = "landlock"
			}
		}
	}
	local := &Local{Sandbox: sb, Private: func(name string) bool {
		// The agent socket is hidden in a view; its variable goes too.
		return strings.HasPrefix(name, "RIGOUT_") || name == "SSH_AUTH_SOCK"
	}}
	defer func() {
		if sb != nil {
			sb.Close()
		}
	}()

	var wmu sync.Mutex
	reply := func(r HelperReply) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = WriteHelperFrame(out, r)
	}
	reply(HelperReply{Hello: &info})

	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	if c, ok := in.(io.Closer); ok {
		// A signal or the caller ending ctx ends the read loop too.
		stop := context.AfterFunc(ctx, func() { c.Close() })
		defer stop()
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	type run struct {
		cancel context.CancelFunc
		proc   *Process    // once started
		pty    *PTY        // a terminal, once started
		stdin  chan []byte // when StdinFollows; nil data is the end
		done   <-chan struct{}
		sig    syscall.Signal // a signal that came before the start
	}
	// mu protects running.
	var mu sync.Mutex
	running := map[uint64]*run{}

	for {
		var req HelperRequest
		if err := ReadHelperFrame(in, &req); err != nil {
			cancelAll()
			if err == io.EOF || ctx.Err() != nil {
				return nil
			}
			return err
		}
		switch req.Op {
		case "cancel":
			mu.Lock()
			if r := running[req.ID]; r != nil {
				r.cancel()
			}
			mu.Unlock()
		case "stdin":
			mu.Lock()
			r := running[req.ID]
			mu.Unlock()
			if r != nil && r.stdin != nil {
				data := req.Data
				if req.EOF {
					data = nil
				} else if data == nil {
					data = []byte{}
				}
				// Blocks (and so holds up this helper's requests) only
				// when the command reads its input slower than it comes.
				select {
				case r.stdin <- data:
				case <-r.done:
				}
			}
		case "signal":
			mu.Lock()
			switch r := running[req.ID]; {
			case r == nil:
			case r.proc != nil:
				_ = r.proc.Signal(syscall.Signal(req.Signal))
			case r.pty != nil:
				signalPTY(r.pty, syscall.Signal(req.Signal), r.cancel)
			default:
				r.sig = syscall.Signal(req.Signal)
			}
			mu.Unlock()
		case "run":
			if req.Run == nil {
				reply(HelperReply{ID: req.ID, Err: "run request without a command"})
				continue
			}
			rctx, cancel := context.WithCancel(context.WithValue(ctx, helperPrincipalKey{}, req.Run.Principal))
			rn := &run{cancel: cancel, done: rctx.Done()}
			// A command's input is an OS pipe, passed to it as is: when it
			// exits, nothing waits on input that has not come yet.
			if req.Run.PTY != nil {
				// A terminal's input is typed into it as it comes.
				rn.stdin = make(chan []byte, 64)
				mu.Lock()
				running[req.ID] = rn
				mu.Unlock()
				wg.Go(func() {
					defer func() {
						mu.Lock()
						delete(running, req.ID)
						mu.Unlock()
						cancel()
					}()
					servePTY(rctx, local, req.ID, req.Run, rn.stdin, reply, func(p *PTY) {
						mu.Lock()
						rn.pty = p
						if rn.sig != 0 {
							signalPTY(p, rn.sig, cancel)
						}
						mu.Unlock()
					})
				})
				continue
			}
			var stdin, stdinR *os.File
			if req.Run.StdinFollows {
				var err error
				if stdinR, stdin, err = os.Pipe(); err != nil {
					cancel()
					reply(HelperReply{ID: req.ID, Err: "stdin pipe: " + err.Error(), Result: &Result{Route: "local", ExitCode: -1}})
					continue
				}
				rn.stdin = make(chan []byte, 64)
				wg.Go(func() {
					defer stdin.Close()
					for {
						select {
						case data := <-rn.stdin:
							if data == nil {
								return
							}
							if _, err := stdin.Write(data); err != nil {
								return
							}
						case <-rctx.Done():
							return
						}
					}
				})
			}
			mu.Lock()
			running[req.ID] = rn
			mu.Unlock()
			wg.Go(func() {
				defer func() {
					mu.Lock()
					delete(running, req.ID)
					mu.Unlock()
					cancel()
				}()
				r := req.Run
				cmd := Command{Shell: r.Shell, Argv: r.Argv, Dir: r.Dir, Env: r.Env, Secrets: r.Secrets,
					Timeout: r.Timeout, MaxOutput: r.MaxOutput}
				if stdinR != nil {
					cmd.Stdin = stdinR
					defer stdin.Close() // unblocks a write the command will never read
				}
				if r.Stream {
					cmd.OnOutput = func(s Stream, p []byte) {
						reply(HelperReply{ID: req.ID, More: true, Out: &HelperOut{Stream: s, Data: p}})
					}
				}
				proc, err := local.Start(rctx, cmd)
				if stdinR != nil {
					stdinR.Close() // the command has its own
				}
				if err != nil {
					reply(HelperReply{ID: req.ID, Err: err.Error(), Result: &Result{Route: "local", ExitCode: -1}})
					return
				}
				mu.Lock()
				rn.proc = proc
				if rn.sig != 0 {
					_ = proc.Signal(rn.sig)
				}
				mu.Unlock()
				reply(HelperReply{ID: req.ID, More: true, Pid: proc.Pid()})
				res, err := proc.Wait()
				rep := HelperReply{ID: req.ID, Result: &res}
				if err != nil {
					rep.Err = err.Error()
				}
				reply(rep)
			})
		case "file":
			if req.File == nil {
				reply(HelperReply{ID: req.ID, Err: "file request without an operation"})
				continue
			}
			wg.Go(func() {
				var rep HelperReply
				if f := req.File; f.Op == "hostreadlink" {
					rep = hostReadlink(ctx, sb, info.Commands == "view", f)
				} else if f.Principal != nil && info.Commands == "view" {
					rep = viewFileOp(ctx, sb, *f.Principal, f)
				} else {
					rep = helperFileOp(req.File)
				}
				rep.ID = req.ID
				reply(rep)
			})
		default:
			reply(HelperReply{ID: req.ID, Err: "unknown operation " + req.Op})
		}
	}
}

// signalPTY passes a signal to a terminal run: SIGHUP hangs the terminal
// up (the shell passes it on to its jobs); any other signal ends the run
// (cancel: the terminal is closed, and what is left on it killed).
func signalPTY(p *PTY, sig syscall.Signal, cancel context.CancelFunc) {
	if sig == syscall.SIGHUP {
		_ = p.Hangup()
		return
	}
	cancel()
}

// servePTY runs r on a terminal in its principal's view (Local.StartPTY)
// for request id: the first reply has the pid, then the terminal's output
// streams as Stdout, input from stdin (nil: the end) is typed into it, and
// the last reply has the Result. When ctx ends the terminal is closed:
// hung up, then what is left on it killed after the grace period.
// started is called with the terminal once it runs.
func servePTY(ctx context.Context, local *Local, id uint64, r *HelperRun, stdin <-chan []byte, reply func(HelperReply), started func(*PTY)) {
	cmd := Command{Shell: r.Shell, Argv: r.Argv, Dir: r.Dir, Env: r.Env, Secrets: r.Secrets, Timeout: r.Timeout}
	p, err := local.StartPTY(ctx, cmd, *r.PTY)
	if err != nil {
		reply(HelperReply{ID: id, Err: err.Error(), Result: &Result{Route: "local", ExitCode: -1}})
		return
	}
	started(p)
	reply(HelperReply{ID: id, More: true, Pid: p.Pid()})
	go func() {
		for {
			select {
			case data := <-stdin:
				if data == nil {
					return
				}
				if _, err := p.Write(data); err != nil {
					return
				}
			case <-p.Done():
				return
			}
		}
	}()
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		for {
			n, err := p.Read(buf)
			if n > 0 {
				reply(HelperReply{ID: id, More: true, Out: &HelperOut{Stream: Stdout, Data: buf[:n]}})
			}
			if err != nil {
				return
			}
		}
	}()
	stop := context.AfterFunc(ctx, func() { _ = p.Close() })
	defer stop()
	res, err := p.Wait()
	// What the program wrote last is still on the terminal: read it, then
	// free the terminal (which ends the read).
	select {
	case <-read:
	case <-time.After(time.Second):
	}
	_ = p.Close()
	<-read
	rep := HelperReply{ID: id, Result: &res}
	if err != nil {
		rep.Err = err.Error()
	}
	reply(rep)
}

// hostReadlink answers the command policy's question about a symbolic
// link of the host (validate.Options.Readlink): f.Name, absolute, read in
// the principal's view where the host gives views (so that /proc/PID/cwd
// names the principal's own processes and hidden paths stay hidden), else
// as the login sees it.
func hostReadlink(ctx context.Context, sb *Sandbox, views bool, f *HelperFile) HelperReply {
	fail := func(err error) HelperReply {
		rep := HelperReply{Err: err.Error()}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			rep.Errno = int(errno)
		}
		return rep
	}
	if !filepath.IsAbs(f.Name) {
		return HelperReply{Err: "exec: readlink of a relative name " + f.Name, Errno: int(syscall.EINVAL)}
	}
	var link string
	var err error
	if views && f.Principal != nil {
		vf, verr := sb.Files(context.WithValue(ctx, helperPrincipalKey{}, *f.Principal))
		if verr != nil {
			return fail(verr)
		}
		link, err = vf.Readlink("", f.Name)
	} else {
		link, err = os.Readlink(f.Name)
	}
	if err != nil {
		return fail(err)
	}
	return HelperReply{Link: link}
}
