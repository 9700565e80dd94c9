package remote_test

import (
	"context"
	"fmt"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
)

// BenchmarkSSH compares, side by side in one run, against one sshd and one
// user, running `true`:
//
//   - rigout-warm: remote.SSH.Run on a warm pooled connection (a new
//     channel per command);
//   - openssh-controlmaster: ssh -o ControlMaster=auto -o ControlPath=… -o
//     ControlPersist=60 host true, with the master already up;
//   - openssh-fresh: ssh host true, a new connection every time.
//
// Run it with:
//
//	go test -run '^$' -bench BenchmarkSSH -v ./exec
//
// Two variants: "norc" sets SHLVL=1 in the session (sshd SetEnv), which
// stops Debian's bash from sourcing ~/.bashrc for commands started by sshd;
// "rc" leaves it on, as on a real host. Each side starts the same login
// shell for every command, so the rc files cost both sides the same; on a
// host whose ~/.bashrc is slow (pyenv, nvm, conda init…) that cost
// dominates every remote command, and no transport can hide it. The
// ratios logged at the end compare the norc variant.
func BenchmarkSSH(b *testing.B) {
	if _, err := osexec.LookPath("ssh"); err != nil {
		b.Skip("ssh not installed: apt-get install openssh-client")
	}
	u, err := user.Current()
	if err != nil {
		b.Fatal(err)
	}
	for _, variant := range []struct {
		name string
		rc   bool
	}{{"norc", false}, {"rc", true}} {
		b.Run(variant.name, func(b *testing.B) {
			e := newSSHEnv(b)
			d := startSSHD(b, sshdOpts{authorized: []*sshtest.Key{e.key}, rc: variant.rc})
			for _, l := range d.knownLines() {
				e.appendKnown(l)
			}
			keyFile := filepath.Join(e.home, ".ssh", "id_ed25519")
			base := []string{"-F", "/dev/null", "-o", "BatchMode=yes", "-o", "UserKnownHostsFile=" + e.userKnown,
				"-o", "StrictHostKeyChecking=yes", "-o", "IdentitiesOnly=yes", "-i", keyFile,
				"-p", strconv.Itoa(d.port), "-l", u.Username}
			ssh := func(extra ...string) error {
				args := append(append(append([]string{}, base...), extra...), "127.0.0.1", "true")
				out, err := osexec.Command("ssh", args...).CombinedOutput()
				if err != nil {
					return fmt.Errorf("ssh: %v: %s", err, out)
				}
				return nil
			}
			perOp := map[string]time.Duration{}

			r := e.router(func(c *remote.RouterConfig) { c.LocalUser = u.Username })
			tg, err := r.Resolve(context.Background(), d.addr, "bench")
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command{Argv: []string{"true"}, Timeout: 30 * time.Second}
			if _, err := tg.Runner.Run(context.Background(), cmd); err != nil {
				b.Fatal(err)
			}
			b.Run("rigout-warm", func(b *testing.B) {
				for b.Loop() {
					res, err := tg.Runner.Run(context.Background(), cmd)
					if err != nil || res.ExitCode != 0 {
						b.Fatalf("%v exit %d", err, res.ExitCode)
					}
				}
				perOp["rigout"] = b.Elapsed() / time.Duration(b.N)
			})

			cp := filepath.Join(b.TempDir(), "cm")
			master := []string{"-o", "ControlMaster=auto", "-o", "ControlPath=" + cp, "-o", "ControlPersist=60"}
			if err := ssh(master...); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { stopMaster(b, base, cp) })
			b.Run("openssh-controlmaster", func(b *testing.B) {
				for b.Loop() {
					if err := ssh(master...); err != nil {
						b.Fatal(err)
					}
				}
				perOp["master"] = b.Elapsed() / time.Duration(b.N)
			})
			// The machine may be shared and its load may change between the
			// runs above; alternating the two in one loop compares them
			// under the same load.
			b.Run("interleaved", func(b *testing.B) {
				var tr, tm time.Duration
				for b.Loop() {
					t0 := time.Now()
					res, err := tg.Runner.Run(context.Background(), cmd)
					if err != nil || res.ExitCode != 0 {
						b.Fatalf("%v exit %d", err, res.ExitCode)
					}
					t1 := time.Now()
					if err := ssh(master...); err != nil {
						b.Fatal(err)
					}
					tr += t1.Sub(t0)
					tm += time.Since(t1)
				}
				b.ReportMetric(float64(tr.Microseconds())/float64(b.N), "rigout-µs/op")
				b.ReportMetric(float64(tm.Microseconds())/float64(b.N), "controlmaster-µs/op")
				b.ReportMetric(float64(tr)/float64(tm), "rigout/controlmaster")
				perOp["rigout-i"], perOp["master-i"] = tr/time.Duration(b.N), tm/time.Duration(b.N)
			})
			b.Run("openssh-fresh", func(b *testing.B) {
				for b.Loop() {
					if err := ssh("-o", "ControlMaster=no", "-o", "ControlPath=none"); err != nil {
						b.Fatal(err)
					}
				}
				perOp["fresh"] = b.Elapsed() / time.Duration(b.N)
			})
			if perOp["rigout"] > 0 && perOp["master"] > 0 && perOp["fresh"] > 0 && perOp["master-i"] > 0 {
				b.Logf("%s: rigout warm %v/op, OpenSSH ControlMaster %v/op (rigout takes %.2f× its time), fresh ssh %v/op (rigout is %.1f× faster); interleaved: rigout %v/op, ControlMaster %v/op, ratio %.2f",
					variant.name, perOp["rigout"], perOp["master"], float64(perOp["rigout"])/float64(perOp["master"]),
					perOp["fresh"], float64(perOp["fresh"])/float64(perOp["rigout"]),
					perOp["rigout-i"], perOp["master-i"], float64(perOp["rigout-i"])/float64(perOp["master-i"]))
			}
		})
	}
}

var masterPID = regexp.MustCompile(`pid=(\d+)`)

// stopMaster asks the ControlPersist master to exit, and kills it by its
// PID if it is still there.
func stopMaster(b *testing.B, base []string, cp string) {
	check := func() int {
		out, err := osexec.Command("ssh", append(append([]string{}, base...), "-o", "ControlPath="+cp, "-O", "check", "127.0.0.1")...).CombinedOutput()
		if err != nil {
			return 0
		}
		if m := masterPID.FindSubmatch(out); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			return n
		}
		return 0
	}
	pid := check()
	_ = osexec.Command("ssh", append(append([]string{}, base...), "-o", "ControlPath="+cp, "-O", "exit", "127.0.0.1")...).Run()
	if pid > 0 && eventually(2*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
		return
	}
	if pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
}
