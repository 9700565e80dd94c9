package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	osexec "os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cloudflaredInstall is what --tunnel cloudflare says when cloudflared is
// missing: rigout downloads nothing itself.
const cloudflaredInstall = `--tunnel cloudflare needs cloudflared on PATH, and rigout downloads nothing. Install it, then start again:
  Debian/Ubuntu: add Cloudflare's package repository (https://pkg.cloudflare.com), then apt-get install cloudflared
  macOS:         brew install cloudflared
  other systems: https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/downloads/
Or give the URL of a tunnel or proxy you run yourself with --public-url`

// quickTunnelRE finds the URL cloudflared prints for a quick tunnel.
var quickTunnelRE = regexp.MustCompile(`https://[a-z0-9-]+\.trycloudflare\.com`)

// tunnel is a supervised cloudflared quick tunnel to the gateway.
type tunnel struct {
	URL  string // https://NAME.trycloudflare.com
	Host string
	cmd  *osexec.Cmd
	done chan struct{} // closed when cloudflared exits
	err  error         // its exit, once done is closed
	once sync.Once
}

// startTunnel runs `cloudflared tunnel --url LOCAL` and waits up to wait
// for the public URL it prints. env is the environment cloudflared gets
// (the gateway's, without its secrets).
func startTunnel(ctx context.Context, local string, env []string, wait time.Duration, logger *slog.Logger) (*tunnel, error) {
	bin, err := osexec.LookPath("cloudflared")
	if err != nil {
		return nil, errors.New(cloudflaredInstall)
	}
	cmd := osexec.Command(bin, "tunnel", "--no-autoupdate", "--url", local)
	cmd.Env = env
	cmd.SysProcAttr = tunnelProcAttr() // its own process group (and, on Linux, death signal)
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = cmd.Stderr // both to the same pipe: cloudflared logs to stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cloudflared: %w", err)
	}
	t := &tunnel{cmd: cmd, done: make(chan struct{})}
	found := make(chan string, 1)
	var mu sync.Mutex
	var tail []string
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			if tail = append(tail, line); len(tail) > 20 {
				tail = tail[1:]
			}
			mu.Unlock()
			logger.Debug("cloudflared", "line", line)
			if m := quickTunnelRE.FindString(line); m != "" && !sent {
				found <- m
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		t.err = cmd.Wait()
		close(t.done)
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case u := <-found:
		pu, err := url.Parse(u)
		if err != nil {
			t.Stop()
			return nil, fmt.Errorf("cloudflared printed %q: %w", u, err)
		}
		t.URL, t.Host = u, pu.Hostname()
		return t, nil
	case <-t.done:
		mu.Lock()
		defer mu.Unlock()
		return nil, fmt.Errorf("cloudflared exited before it printed a tunnel URL (%v); its last lines:\n  %s", t.err, strings.Join(tail, "\n  "))
	case <-timer.C:
	case <-ctx.Done():
	}
	t.Stop()
	mu.Lock()
	defer mu.Unlock()
	return nil, fmt.Errorf("cloudflared printed no tunnel URL within %v; its last lines:\n  %s", wait, strings.Join(tail, "\n  "))
}

// Done is closed when cloudflared exits.
func (t *tunnel) Done() <-chan struct{} { return t.done }

// Stop ends cloudflared's process group: SIGTERM, then SIGKILL after 5 s.
func (t *tunnel) Stop() {
	t.once.Do(func() {
		pgid := t.cmd.Process.Pid
		select {
		case <-t.done:
			return
		default:
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-t.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-t.done
		}
	})
}

// childEnv is the gateway's environment without what must not reach a
// program it starts (see secrets.private).
func childEnv(sec *secrets) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !sec.private(name) {
			env = append(env, kv)
		}
	}
	return env
}
