package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

// transferFullBytes is the file scenario 8 moves in a full run.
const transferFullBytes = 1 << 30

// transferTimeout bounds one transfer, whatever the budget.
const transferTimeout = 5 * time.Minute

// fileTransfer is scenario 8: one file of 1 GiB (64 MiB quick) uploaded to
// and downloaded from a loopback sshd over SFTP, through `rigout serve`'s
// bulk_file_transfer (auth and audit on, the host in its configuration
// file, the connection pooled and warm) and through OpenSSH's sftp(1) in
// batch mode over a ControlMaster connection to the same sshd (so that
// neither side pays a handshake per transfer), the same file, round by
// round in alternating order. Both sides make the file durable:
// bulk_file_transfer publishes atomically (a temporary file, fsync,
// rename) and re-reads it to verify, as by default; sftp runs with -f
// (fsync after each transfer). Every transfer's destination is removed
// before it and hashed after it: a wrong size or SHA-256 fails the
// scenario, so a broken transfer cannot report a speed.
func fileTransfer(ctx context.Context, b *bench) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	sshd, err := lookSSHD()
	if err != nil {
		return err
	}
	sftpBin, err := osexec.LookPath("sftp")
	if err != nil {
		return errors.New("no OpenSSH sftp on this machine")
	}
	lab, err := startSSHLab(ctx, b, sshd, 1)
	if err != nil {
		return err
	}
	defer lab.stop()
	master, err := lab.startMaster(ctx, 0)
	if err != nil {
		return err
	}
	defer master.stop()
	srv, err := b.startServe(ctx, "rigout serve (SFTP host)", true, lab.serveFlags()...)
	if err != nil {
		return err
	}
	defer srv.stop()
	gw, err := httpClient(ctx, srv.url, srv.token)
	if err != nil {
		return fmt.Errorf("rigout serve: %w", err)
	}
	defer gw.Close()

	dir, err := os.MkdirTemp(b.tmp, "transfer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	size := pick(b, int64(64<<20), int64(transferFullBytes))
	t := &transferLab{lab: lab, gw: gw, sftp: sftpBin, ctl: master.ctl, dir: dir}

	// Warm up both sides (the pooled connection and its SFTP session, the
	// ControlMaster's first channel) with a small file.
	warm := filepath.Join(dir, "warm.bin")
	warmSum, err := writeSource(warm, 1<<20)
	if err != nil {
		return err
	}
	for _, side := range []string{"rigout", "sftp"} {
		for _, dir := range []string{"up", "down"} {
			if _, err := t.transfer(ctx, side, dir, warm, warmSum, 1<<20); err != nil {
				return fmt.Errorf("warm-up %s %s: %w", side, dir, err)
			}
		}
	}

	src := filepath.Join(dir, "src.bin")
	b.logf("scenario 8: writing a %d MiB source file", size>>20)
	sum, err := writeSource(src, size)
	if err != nil {
		return err
	}
	rounds := pick(b, 3, 3)
	speeds := map[string][]float64{}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		first, second := "rigout", "sftp"
		if r%2 == 1 {
			first, second = second, first
		}
		round := map[string]float64{}
		var err error
		for _, dir := range []string{"up", "down"} {
			for _, side := range []string{first, second} {
				var d time.Duration
				if d, err = t.transfer(ctx, side, dir, src, sum, size); err != nil {
					break
				}
				round[dir+"/"+side] = float64(size) / (1 << 20) / d.Seconds()
				b.logf("scenario 8, round %d: %s %s %.0f MiB/s", r+1, side, dir, round[dir+"/"+side])
			}
			if err != nil {
				break
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				break // the budget ran out: keep the complete rounds
			}
			return err
		}
		for k, v := range round {
			speeds[k] = append(speeds[k], v)
		}
	}
	if len(speeds["down/sftp"]) == 0 {
		return errors.New("time ran out before one round completed")
	}
	for k, v := range speeds {
		b.res.AddSeries("8/"+k, "MiB/s", v)
	}
	mib := size >> 20
	what := fmt.Sprintf("%d MiB", mib)
	if size == transferFullBytes {
		what = "1 GiB"
	}
	note := ""
	if size != transferFullBytes {
		note = fmt.Sprintf("quick mode moves %d MiB instead of 1 GiB", mib)
	}
	b.res.AddRow(Row{Scenario: "8", Name: "bulk_file_transfer upload, " + what + ", over HTTP (auth + audit) to a loopback sshd (SFTP, verify on)",
		Unit: "MiB/s", Better: "higher", Stat: "median", Note: note,
		Floor: "OpenSSH `sftp -f` put over a ControlMaster connection, same sshd, same file", RigoutSeries: "8/up/rigout", FloorSeries: "8/up/sftp"})
	b.res.AddRow(Row{Scenario: "8", Name: "bulk_file_transfer download, " + what + ", over HTTP (auth + audit) from a loopback sshd (SFTP, verify on)",
		Unit: "MiB/s", Better: "higher", Stat: "median",
		Floor: "OpenSSH `sftp -f` get over a ControlMaster connection, same sshd, same file", RigoutSeries: "8/down/rigout", FloorSeries: "8/down/sftp"})
	return nil
}

// transferLab moves files between this machine and the lab's one sshd,
// whose "remote" files are on this machine too, so that both ends can be
// checked.
type transferLab struct {
	lab  *sshLab
	gw   *client.Client
	sftp string
	ctl  string // the ControlMaster's socket
	dir  string
}

// transfer moves src up to the host (dir "up", into remote.bin) or the
// host's copy of it back down (dir "down", from remote.bin into back.bin),
// through rigout or sftp, and returns how long it took. The destination is
// removed first and checked after: its size and SHA-256 must be size and
// sum.
func (t *transferLab) transfer(ctx context.Context, side, dir, src, sum string, size int64) (time.Duration, error) {
	remote := filepath.Join(t.dir, "remote-"+filepath.Base(src))
	back := filepath.Join(t.dir, "back-"+filepath.Base(src))
	from, to := src, remote
	if dir == "down" {
		from, to = remote, back
	}
	if err := os.Remove(to); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	var d time.Duration
	var err error
	if side == "rigout" {
		d, err = t.rigout(ctx, dir, from, to, sum)
	} else {
		d, err = t.openSSH(ctx, dir, from, to)
	}
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", side, dir, err)
	}
	if err := checkFile(to, size, sum); err != nil {
		return 0, fmt.Errorf("%s %s: %w", side, dir, err)
	}
	return d, nil
}

// rigout calls bulk_file_transfer and checks that it reports the
// expected hash.
func (t *transferLab) rigout(ctx context.Context, dir, from, to, sum string) (time.Duration, error) {
	args := map[string]any{"action": "upload", "source": from, "destination": to, "destination_host": "h0"}
	if dir == "down" {
		args = map[string]any{"action": "download", "source": from, "destination": to, "source_host": "h0"}
	}
	cctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	start := time.Now()
	res, err := t.gw.CallTool(cctx, toolRequest("bulk_file_transfer", args))
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("tools/call bulk_file_transfer: %w", err)
	}
	if res.IsError {
		return 0, fmt.Errorf("bulk_file_transfer: error result: %s", resultText(res))
	}
	if text := resultText(res); !strings.Contains(text, "sha256 "+sum) {
		return 0, fmt.Errorf("bulk_file_transfer reports no sha256 %s: %s", sum, text)
	}
	return d, nil
}

// openSSH runs one sftp batch: put or get, then fsync (-f), over the
// ControlMaster connection.
func (t *transferLab) openSSH(ctx context.Context, dir, from, to string) (time.Duration, error) {
	batch := filepath.Join(t.dir, "batch")
	cmd := "put " + from + " " + to + "\n"
	if dir == "down" {
		cmd = "get " + from + " " + to + "\n"
	}
	if err := os.WriteFile(batch, []byte(cmd), 0o600); err != nil {
		return 0, err
	}
	l := t.lab
	args := []string{"-q", "-f", "-b", batch, "-F", "/dev/null", "-i", l.clientKey, "-P", strconv.Itoa(l.ports[0]),
		"-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=" + l.knownHosts, "-o", "StrictHostKeyChecking=yes",
		"-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-o", "ControlMaster=no", "-o", "ControlPath=" + t.ctl,
		l.user + "@127.0.0.1"}
	cctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	start := time.Now()
	out, err := osexec.CommandContext(cctx, t.sftp, args...).CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("sftp: %v: %s", err, oneLine(string(out)))
	}
	return d, nil
}

// writeSource writes size bytes of seeded pseudo-random data (which no
// layer can compress away) to p and returns their hex SHA-256.
func writeSource(p string, size int64) (string, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	r := rand.NewChaCha8([32]byte{'r', 'i', 'g', 'o', 'u', 't'})
	if _, err := io.CopyN(io.MultiWriter(f, h), r, size); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checkFile fails unless p holds size bytes whose SHA-256 is sum.
func checkFile(p string, size int64, sum string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%s holds %d bytes, want %d", p, n, size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("%s has sha256 %s, want %s", p, got, sum)
	}
	return nil
}
