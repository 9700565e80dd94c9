package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
)

// sshHosts is how many loopback sshd instances scenario 7 starts.
const sshHosts = 10

// sshPrincipal is the caller identity bench's router calls carry.
const sshPrincipal = "bench"

// sshScenario is scenario 7: SSH to ten sshd instances on loopback with
// throwaway host and client keys, host keys checked strictly against a
// known_hosts file written for them. It is measured twice: through
// execute_command's `host` and `hosts` on `rigout serve` (auth and audit
// on, hosts declared in its configuration file), and on rigout's SSH
// executor, remote.Router, in this process, which isolates the executor from
// the MCP round trip.
//
//   - gateway: execute_command on a warm pooled connection, and on all ten
//     hosts by label, against OpenSSH over ControlMaster connections;
//   - warm: a command on a pooled connection (a new channel), against
//     OpenSSH reusing a ControlMaster connection (a new ssh process that
//     multiplexes over the master);
//   - fresh: a new router per command (TCP, handshake, login), against a
//     fresh `ssh` process;
//   - fan-out: FanOut to all ten hosts on warm connections, against the
//     same command on one host, and against ten `ssh` processes in
//     parallel, each over its host's ControlMaster.
func sshScenario(ctx context.Context, b *bench) error {
	sshd, err := lookSSHD()
	if err != nil {
		return err
	}
	lab, err := startSSHLab(ctx, b, sshd, sshHosts)
	if err != nil {
		return err
	}
	defer lab.stop()

	r, err := lab.router()
	if err != nil {
		return err
	}
	defer r.Close()
	masters := make([]*daemon, len(lab.ports))
	defer func() {
		for _, m := range masters {
			m.stop()
		}
	}()
	for i := range masters {
		if masters[i], err = lab.startMaster(ctx, i); err != nil {
			return err
		}
	}

	// rigout serve with the lab's hosts in its configuration file, the
	// lab's known_hosts and no ssh_config, auth and audit on.
	srv, err := b.startServe(ctx, "rigout serve (SSH hosts)", true, lab.serveFlags()...)
	if err != nil {
		return err
	}
	defer srv.stop()
	gw, err := httpClient(ctx, srv.url, srv.token)
	if err != nil {
		return fmt.Errorf("rigout serve: %w", err)
	}
	defer gw.Close()
	gwWarm := toolRequest("execute_command", map[string]any{"host": "h0", "argv": []string{"true"}})
	gwFan := toolRequest("execute_command", map[string]any{"hosts": "lab", "argv": []string{"true"}})
	warmGateway := func() (time.Duration, error) { return callTool(ctx, gw, gwWarm) }
	fanGateway := func() (time.Duration, error) { return callTool(ctx, gw, gwFan) }

	run := exec.Command{Argv: []string{"true"}, Timeout: 30 * time.Second}
	warmRigout := func() (time.Duration, error) {
		start := time.Now()
		t, err := r.Resolve(ctx, "h0", sshPrincipal)
		if err != nil {
			return 0, err
		}
		res, err := t.Runner.Run(ctx, run)
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("true exited %d", res.ExitCode)
		}
		return time.Since(start), err
	}
	freshRigout := func() (time.Duration, error) {
		start := time.Now()
		fr, err := lab.router()
		if err != nil {
			return 0, err
		}
		defer fr.Close()
		t, err := fr.Resolve(ctx, "h0", sshPrincipal)
		if err != nil {
			return 0, err
		}
		res, err := t.Runner.Run(ctx, run)
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("true exited %d", res.ExitCode)
		}
		return time.Since(start), err
	}
	hosts := make([]string, sshHosts)
	for i := range hosts {
		hosts[i] = "h" + strconv.Itoa(i)
	}
	fanOut := func() (time.Duration, error) {
		start := time.Now()
		res, err := r.FanOut(ctx, exec.FanOutRequest{Hosts: hosts, Principal: sshPrincipal, Command: run, Limit: sshHosts})
		if err != nil {
			return 0, err
		}
		for _, fr := range res {
			if fr.Err != nil {
				return 0, fmt.Errorf("%s: %w", fr.Host, fr.Err)
			}
			if fr.Result.ExitCode != 0 {
				return 0, fmt.Errorf("%s: true exited %d", fr.Host, fr.Result.ExitCode)
			}
		}
		return time.Since(start), nil
	}
	warmSSH := func() (time.Duration, error) {
		return lab.ssh(ctx, 0, "-o", "ControlMaster=no", "-o", "ControlPath="+masters[0].ctl)
	}
	fanOutSSH := func() (time.Duration, error) {
		start := time.Now()
		errs := make(chan error, len(masters))
		for i, m := range masters {
			go func() {
				_, err := lab.ssh(ctx, i, "-o", "ControlMaster=no", "-o", "ControlPath="+m.ctl)
				errs <- err
			}()
		}
		var first error
		for range masters {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return time.Since(start), first
	}
	freshSSH := func() (time.Duration, error) {
		return lab.ssh(ctx, 0, "-o", "ControlMaster=no", "-o", "ControlPath=none")
	}

	// Warm up: open the pooled connections to every host.
	for range 3 {
		if _, err := fanOut(); err != nil {
			return fmt.Errorf("warm-up fan-out: %w", err)
		}
		if _, err := warmSSH(); err != nil {
			return fmt.Errorf("warm-up ssh: %w", err)
		}
		if _, err := fanGateway(); err != nil {
			return fmt.Errorf("warm-up execute_command hosts: %w", err)
		}
	}
	pairs := []struct {
		key        string
		n          int
		rig, floor func() (time.Duration, error)
	}{
		{"gateway-warm", pick(b, 60, 400), warmGateway, warmSSH},
		{"gateway-fanout", pick(b, 20, 150), fanGateway, fanOutSSH},
		{"warm", pick(b, 60, 400), warmRigout, warmSSH},
		{"fresh", pick(b, 8, 40), freshRigout, freshSSH},
		{"fanout", pick(b, 20, 150), fanOut, warmRigout},
		{"fanout-ssh", pick(b, 20, 150), fanOut, fanOutSSH},
	}
	for _, p := range pairs {
		b.logf("scenario 7, %s: %d pairs", p.key, p.n)
		var rig, floor []float64
		for i := 0; i < p.n && ctx.Err() == nil; i++ {
			rd, fd, err := measurePair(i%2 == 1, p.rig, p.floor)
			if err != nil {
				if ctx.Err() != nil {
					break // the budget ran out: keep what was measured
				}
				return fmt.Errorf("%s: %w", p.key, err)
			}
			rig = append(rig, ms(rd))
			floor = append(floor, ms(fd))
		}
		b.res.AddSeries("7/"+p.key+"/rigout", "ms", rig)
		b.res.AddSeries("7/"+p.key+"/floor", "ms", floor)
	}
	for _, stat := range []string{"median", "p95"} {
		b.res.AddRow(Row{Scenario: "7", Name: "execute_command `host` over HTTP (auth + audit), warm, argv [true], " + statLabel(stat), Unit: "ms", Better: "lower", Stat: stat,
			Floor: "OpenSSH `ssh` over a ControlMaster connection", RigoutSeries: "7/gateway-warm/rigout", FloorSeries: "7/gateway-warm/floor"})
	}
	b.res.AddRow(Row{Scenario: "7", Name: fmt.Sprintf("execute_command `hosts` (%d by label) over HTTP (auth + audit), warm, p50", sshHosts), Unit: "ms", Better: "lower", Stat: "median",
		Floor: fmt.Sprintf("%d parallel `ssh` over ControlMaster connections", sshHosts), RigoutSeries: "7/gateway-fanout/rigout", FloorSeries: "7/gateway-fanout/floor"})
	for _, stat := range []string{"median", "p95"} {
		b.res.AddRow(Row{Scenario: "7", Name: "remote.Router warm call `true`, " + statLabel(stat), Unit: "ms", Better: "lower", Stat: stat,
			Floor: "OpenSSH `ssh` over a ControlMaster connection", RigoutSeries: "7/warm/rigout", FloorSeries: "7/warm/floor"})
	}
	b.res.AddRow(Row{Scenario: "7", Name: "remote.Router fresh connection `true`, p50", Unit: "ms", Better: "lower", Stat: "median",
		Floor: "a fresh OpenSSH `ssh`", RigoutSeries: "7/fresh/rigout", FloorSeries: "7/fresh/floor"})
	b.res.AddRow(Row{Scenario: "7", Name: fmt.Sprintf("remote.Router.FanOut to %d loopback sshd, warm, p50", sshHosts), Unit: "ms", Better: "lower", Stat: "median",
		Floor: "remote.Router on one host, warm", RigoutSeries: "7/fanout/rigout", FloorSeries: "7/fanout/floor",
		Note: "all ten sshd share this machine's cores with the client, so ten sessions cost about ten times the CPU of one; the next row is the fairer floor."})
	b.res.AddRow(Row{Scenario: "7", Name: fmt.Sprintf("remote.Router.FanOut to %d loopback sshd, warm, p50", sshHosts), Unit: "ms", Better: "lower", Stat: "median",
		Floor: fmt.Sprintf("%d parallel `ssh` over ControlMaster connections", sshHosts), RigoutSeries: "7/fanout-ssh/rigout", FloorSeries: "7/fanout-ssh/floor"})
	return nil
}

// lookSSHD finds OpenSSH's sshd, on PATH or in /usr/sbin.
func lookSSHD() (string, error) {
	sshd, err := osexec.LookPath("sshd")
	if err != nil {
		if sshd, err = osexec.LookPath("/usr/sbin/sshd"); err != nil {
			return "", errors.New("no sshd on this machine")
		}
	}
	// sshd refuses to start without its privilege separation directory,
	// which the package's service creates at boot; a freshly installed
	// OpenSSH that was never started as a service has none.
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/run/sshd"); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
				return "", fmt.Errorf("create /run/sshd for sshd: %w", err)
			}
		}
	}
	return sshd, nil
}

// measurePair runs rig and floor one after the other, floor first when
// floorFirst is set, and returns their durations.
func measurePair(floorFirst bool, rig, floor func() (time.Duration, error)) (rd, fd time.Duration, err error) {
	if floorFirst {
		if fd, err = floor(); err != nil {
			return 0, 0, err
		}
		rd, err = rig()
		return rd, fd, err
	}
	if rd, err = rig(); err != nil {
		return 0, 0, err
	}
	fd, err = floor()
	return rd, fd, err
}

// sshLab is a set of sshd instances on loopback with throwaway keys.
type sshLab struct {
	dir        string
	user       string
	clientKey  string
	knownHosts string
	configFile string // rigout's configuration file declaring the hosts
	ports      []int
	sshds      []*daemon
}

// serveFlags are the flags of a `rigout serve` that reaches the lab's hosts:
// its configuration file, its known_hosts and no ssh_config.
func (l *sshLab) serveFlags() []string {
	return []string{"--config", l.configFile, "--known-hosts", l.knownHosts, "--ssh-config", filepath.Join(l.dir, "no-ssh-config")}
}

// daemon is a helper process stopped by its PID.
type daemon struct {
	cmd    *osexec.Cmd
	exited chan struct{}
	ctl    string // ControlPath of an ssh master
	stderr *tail
}

func startDaemon(cmd *osexec.Cmd) (*daemon, error) {
	d := &daemon{cmd: cmd, exited: make(chan struct{}), stderr: &tail{max: 10}}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			d.stderr.add(sc.Text())
		}
		_ = cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

// stop sends SIGTERM by PID, then SIGKILL after stopTimeout, and waits.
func (d *daemon) stop() {
	if d == nil {
		return
	}
	select {
	case <-d.exited:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-d.exited:
	case <-t.C:
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

// startSSHLab generates keys and starts n sshd instances on free loopback
// ports, each in the foreground (-D) so that bench holds its PID.
func startSSHLab(ctx context.Context, b *bench, sshd string, n int) (*sshLab, error) {
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(b.tmp, "ssh-")
	if err != nil {
		return nil, err
	}
	lab := &sshLab{dir: dir, user: u.Username, clientKey: filepath.Join(dir, "client"), knownHosts: filepath.Join(dir, "known_hosts"),
		configFile: filepath.Join(dir, "rigout.json")}
	hostKey := filepath.Join(dir, "host")
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), nil, 0o600); err != nil {
		return nil, err
	}
	for _, k := range []string{hostKey, lab.clientKey} {
		if out, err := osexec.CommandContext(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rigout-bench", "-f", k).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, err := os.ReadFile(lab.clientKey + ".pub")
	if err != nil {
		return nil, err
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		return nil, err
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return nil, err
	}
	keyFields := strings.Fields(string(hostPub))
	if len(keyFields) < 2 {
		return nil, fmt.Errorf("unexpected host key %q", hostPub)
	}
	var known strings.Builder
	for i := range n {
		port, err := freePort()
		if err != nil {
			lab.stop()
			return nil, err
		}
		cfg := filepath.Join(dir, fmt.Sprintf("sshd_config.%d", i))
		conf := strings.Join([]string{
			"Port " + strconv.Itoa(port),
			"ListenAddress 127.0.0.1",
			"HostKey " + hostKey,
			"PidFile none",
			"AuthorizedKeysFile " + authorized,
			"StrictModes no",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PubkeyAuthentication yes",
			"PermitRootLogin prohibit-password",
			"UsePAM no",
			"UseDNS no",
			"PrintMotd no",
			"PrintLastLog no",
			"LogLevel ERROR",
			"MaxSessions 200",
			"MaxStartups 200",
			// SFTP inside sshd, for scenario 8 (rigout's file tools and
			// OpenSSH sftp alike): no sftp-server path to find.
			"Subsystem sftp internal-sftp",
			// The login shell runs `bash -c CMD`, and bash started by sshd
			// reads ~/.bashrc; an operator's (pyenv init, say) can cost
			// hundreds of milliseconds on both sides and hide what SSH
			// costs. An empty home for the session avoids it.
			"SetEnv HOME=" + home,
		}, "\n") + "\n"
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			lab.stop()
			return nil, err
		}
		d, err := startDaemon(osexec.Command(sshd, "-D", "-e", "-f", cfg))
		if err != nil {
			lab.stop()
			return nil, fmt.Errorf("sshd: %w", err)
		}
		lab.sshds = append(lab.sshds, d)
		lab.ports = append(lab.ports, port)
		fmt.Fprintf(&known, "[127.0.0.1]:%d %s %s\n", port, keyFields[0], keyFields[1])
	}
	if err := os.WriteFile(lab.knownHosts, []byte(known.String()), 0o600); err != nil {
		lab.stop()
		return nil, err
	}
	conf, err := json.Marshal(map[string]any{"hosts": lab.hostConfigs()})
	if err != nil {
		lab.stop()
		return nil, err
	}
	if err := os.WriteFile(lab.configFile, conf, 0o600); err != nil {
		lab.stop()
		return nil, err
	}
	for i, port := range lab.ports {
		if err := waitBanner(ctx, port, lab.sshds[i]); err != nil {
			lab.stop()
			return nil, err
		}
	}
	return lab, nil
}

// stop stops every sshd by its PID.
func (l *sshLab) stop() {
	for _, d := range l.sshds {
		d.stop()
	}
}

// router builds an remote.Router that knows the lab's hosts h0…h(n-1),
// checks their keys strictly and logs in with the throwaway key.
func (l *sshLab) router() (*remote.Router, error) {
	return remote.NewRouter(remote.RouterConfig{
		Hosts:               l.hostConfigs(),
		UserKnownHostsFiles: []string{l.knownHosts},
		HostKeyPolicy:       remote.HostKeyStrict,
		HomeDir:             l.dir,
		LocalUser:           l.user,
	})
}

// hostConfigs declares the lab's hosts h0…h(n-1), labelled "lab".
func (l *sshLab) hostConfigs() []remote.HostConfig {
	var hosts []remote.HostConfig
	for i, port := range l.ports {
		hosts = append(hosts, remote.HostConfig{Name: "h" + strconv.Itoa(i), Address: "127.0.0.1", Port: port, User: l.user,
			Key: l.clientKey, Labels: []string{"lab"}})
	}
	return hosts
}

// sshArgs are the OpenSSH client options for host i: no user
// configuration, the throwaway key only, strict host keys.
func (l *sshLab) sshArgs(i int, extra ...string) []string {
	args := []string{"-F", "/dev/null", "-i", l.clientKey, "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=" + l.knownHosts,
		"-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-p", strconv.Itoa(l.ports[i])}
	return append(args, extra...)
}

// ssh runs `ssh … true` to host i and returns how long it took.
func (l *sshLab) ssh(ctx context.Context, i int, opts ...string) (time.Duration, error) {
	args := append(l.sshArgs(i, opts...), l.user+"@127.0.0.1", "true")
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	start := time.Now()
	out, err := osexec.CommandContext(ctx, "ssh", args...).CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("ssh: %v: %s", err, oneLine(string(out)))
	}
	return d, nil
}

// startMaster starts an OpenSSH ControlMaster to host i in the foreground
// (bench holds its PID) and waits until its control socket answers.
func (l *sshLab) startMaster(ctx context.Context, i int) (*daemon, error) {
	ctl := filepath.Join(l.dir, "ctl-"+strconv.Itoa(i))
	args := append(l.sshArgs(i, "-N", "-o", "ControlMaster=yes", "-o", "ControlPath="+ctl, "-o", "ControlPersist=no"), l.user+"@127.0.0.1")
	d, err := startDaemon(osexec.Command("ssh", args...))
	if err != nil {
		return nil, err
	}
	d.ctl = ctl
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		check := osexec.CommandContext(ctx, "ssh", append(l.sshArgs(i, "-o", "ControlPath="+ctl, "-O", "check"), l.user+"@127.0.0.1")...)
		if check.Run() == nil {
			return d, nil
		}
		select {
		case <-d.exited:
			return nil, fmt.Errorf("ssh ControlMaster exited: %s", d.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	d.stop()
	return nil, fmt.Errorf("ssh ControlMaster did not come up: %s", d.stderr)
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitBanner waits until sshd on port sends its SSH banner.
func waitBanner(ctx context.Context, port int, d *daemon) error {
	deadline := time.Now().Add(startTimeout)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			if strings.HasPrefix(line, "SSH-") {
				return nil
			}
		}
		select {
		case <-d.exited:
			return fmt.Errorf("sshd on port %d exited: %s", port, d.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("sshd on port %d did not answer: %s", port, d.stderr)
}
