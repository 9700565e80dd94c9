package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Bounds on helper processes.
const (
	startTimeout = 30 * time.Second // from start to "listening on"
	stopTimeout  = 10 * time.Second // from SIGTERM to exit, before SIGKILL
	callTimeout  = 60 * time.Second // one tool call
)

// build compiles the rigout binary and the floor server into the run's
// temporary directory, once.
func (b *bench) build(ctx context.Context) error {
	b.buildOnce.Do(func() {
		b.logf("building cmd/rigout and bench/floorserver")
		// Two modules, two builds: rigout with its own go.mod, exactly as
		// an embedder or a user builds it, and the floor server in the
		// bench module.
		for _, pkg := range []struct{ dir, path string }{
			{b.root, "./cmd/rigout"},
			{filepath.Join(b.root, "bench"), "./floorserver"},
		} {
			cmd := osexec.CommandContext(ctx, "go", "build", "-o", b.tmp+string(filepath.Separator), pkg.path)
			cmd.Dir = pkg.dir
			if out, err := cmd.CombinedOutput(); err != nil {
				b.buildErr = fmt.Errorf("go build %s: %v\n%s", pkg.path, err, out)
				return
			}
		}
		b.rigout = filepath.Join(b.tmp, "rigout")
		b.floor = filepath.Join(b.tmp, "floorserver")
		if b.base != "" {
			// Both binaries written the same way, just now: how much of a
			// binary's file pages the kernel maps depends on how its page
			// cache was filled (a file `go build` wrote maps some 3 MiB
			// more than a copy of it), and idle RSS would compare that.
			for name, bin := range map[string]*string{"rigout-this": &b.rigout, "rigout-base": &b.base} {
				dst := filepath.Join(b.tmp, name)
				if b.buildErr = copyFile(*bin, dst); b.buildErr != nil {
					return
				}
				*bin = dst
			}
		}
	})
	return b.buildErr
}

// baseEnv is this process's environment without RIGOUT_ variables, so
// that a developer's own configuration does not leak into the run.
func baseEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RIGOUT_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// proc is a helper process that serves HTTP on loopback.
type proc struct {
	name   string
	cmd    *osexec.Cmd
	url    string
	token  string // bearer token, empty without auth
	exited chan struct{}
	// stderr keeps the last lines the process wrote, for error messages.
	stderr *tail
}

// listenRE finds the URL in the line every helper prints once it listens.
// It is compiled once and never changed.
var listenRE = regexp.MustCompile(`listening on (http://\S+)`)

// startListener starts argv with env and waits until it prints
// "listening on URL" on stderr. The process is stopped by its PID with
// stop.
func startListener(ctx context.Context, name string, argv, env []string) (*proc, error) {
	cmd := osexec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = os.TempDir()
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{}), stderr: &tail{max: 20}}
	urls := make(chan string, 1)
	go func() {
		// Drain stderr for the process's whole life so it never blocks.
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			p.stderr.add(line)
			if m := listenRE.FindStringSubmatch(line); m != nil && !sent {
				urls <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, errPipe)
		_ = cmd.Wait()
		close(p.exited)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case p.url = <-urls:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before listening: %s", name, p.stderr)
	case <-timer.C:
		p.stop()
		return nil, fmt.Errorf("%s did not listen within %v: %s", name, startTimeout, p.stderr)
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
}

// pid is the process's ID.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM to the process, by its PID, and SIGKILL if it has not
// exited stopTimeout later. It waits for the exit.
func (p *proc) stop() {
	if p == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// newToken returns a random bearer token.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startServe starts `rigout serve` on a free loopback port with a fresh
// state directory. With auth it uses a random token from
// RIGOUT_AUTH_TOKEN; without, it passes --no-auth. The audit ledger is
// always on, as in the shipped binary.
// Extra arguments are appended to the command line.
func (b *bench) startServe(ctx context.Context, name string, withAuth bool, extra ...string) (*proc, error) {
	return b.startServeOf(ctx, b.rigout, name, withAuth, extra...)
}

// startServeOf is startServe with another rigout binary (--base).
func (b *bench) startServeOf(ctx context.Context, bin, name string, withAuth bool, extra ...string) (*proc, error) {
	state, err := os.MkdirTemp(b.tmp, "state-")
	if err != nil {
		return nil, err
	}
	argv := append([]string{bin, "serve", "--addr", "127.0.0.1:0", "--log-level", "warn", "--workdir", b.tmp}, extra...)
	env := baseEnv("RIGOUT_STATE_DIR=" + state)
	token := ""
	if withAuth {
		token = newToken()
		env = append(env, "RIGOUT_AUTH_TOKEN="+token)
	} else {
		argv = append(argv, "--no-auth")
	}
	p, err := startListener(ctx, name, argv, env)
	if err != nil {
		return nil, err
	}
	p.token = token
	return p, nil
}

// startFloor starts the floor server.
func (b *bench) startFloor(ctx context.Context) (*proc, error) {
	return startListener(ctx, "floorserver", []string{b.floor, "--addr", "127.0.0.1:0"}, baseEnv())
}

// startBare starts this program as a rigout gateway without auth and
// without audit (see runBare).
func (b *bench) startBare(ctx context.Context) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	state, err := os.MkdirTemp(b.tmp, "bare-state-")
	if err != nil {
		return nil, err
	}
	return startListener(ctx, "bare gateway", []string{self, bareArg, "--workdir", b.tmp, "--state-dir", state}, baseEnv())
}

// httpClient connects an MCP client to url over streamable HTTP, with its
// own keep-alive connection, and negotiates the latest protocol version.
func httpClient(ctx context.Context, url, token string) (*client.Client, error) {
	hc := &http.Client{Transport: &http.Transport{
		MaxIdleConns:        4,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     time.Minute,
	}}
	opts := []mcptransport.StreamableHTTPCOption{mcptransport.WithHTTPBasicClient(hc)}
	if token != "" {
		opts = append(opts, mcptransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if err := initialize(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// stdioClient starts `rigout stdio` as the client's subprocess with the
// given state directory and initializes it.
func (b *bench) stdioClient(ctx context.Context, state string) (*client.Client, error) {
	tr := mcptransport.NewStdioWithOptions(b.rigout, nil, []string{"stdio", "--log-level", "warn", "--workdir", b.tmp},
		mcptransport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*osexec.Cmd, error) {
			cmd := osexec.CommandContext(ctx, command, args...)
			cmd.Env = baseEnv("RIGOUT_STATE_DIR=" + state)
			return cmd, nil
		}))
	if err := tr.Start(ctx); err != nil {
		return nil, err
	}
	c := client.NewClient(tr)
	if err := initialize(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func initialize(ctx context.Context, c *client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "rigout-bench", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return nil
}

// callTool calls a tool and returns how long the round trip took. A result
// with IsError set is an error: every call bench makes must succeed.
func callTool(ctx context.Context, c *client.Client, req mcp.CallToolRequest) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	start := time.Now()
	res, err := c.CallTool(ctx, req)
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("tools/call %s: %w", req.Params.Name, err)
	}
	if res.IsError {
		return d, fmt.Errorf("tools/call %s: error result: %s", req.Params.Name, resultText(res))
	}
	return d, nil
}

func toolRequest(name string, args map[string]any) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	return req
}

func resultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			sb.WriteString(t.Text)
		}
	}
	s := sb.String()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// rssKiB returns a field of /proc/PID/status in KiB: "VmRSS" (resident
// now) or "VmHWM" (peak resident since start or the last resetPeak).
func rssKiB(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			f := strings.Fields(string(v))
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// resetPeak resets the process's VmHWM to its current RSS (Linux 4.0+).
func resetPeak(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// tail keeps the last max lines added to it. It is safe for concurrent
// use.
type tail struct {
	max int

	// mu protects lines.
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(no output)"
	}
	return strings.Join(t.lines, " | ")
}

// copyFile copies an executable to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
