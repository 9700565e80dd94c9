package files_test

import (
	"flag"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/files"
	"github.com/rigout/rigout/tools/shell"
)

var benchSize = flag.Int64("files.size", 1<<30, "bytes transferred by BenchmarkTransferVsOpenSSH")

// BenchmarkTransferVsOpenSSH uploads and downloads one file of
// -files.size bytes (default 1 GiB) over loopback to the real sshd,
// through bulk_file_transfer (verify on, the default, and off) and
// through OpenSSH's sftp(1), interleaved round by round in one run. It
// reports each side's median throughput and the ratios rigout/OpenSSH
// (and rigout's host-to-host copy, sftp1 to sftp1, which OpenSSH's sftp
// cannot do),
// and the highest live heap seen during rigout's transfers (sampled
// every 20 ms; it stays bounded whatever the size).
//
//	go test -run '^$' -bench TransferVsOpenSSH -benchtime 1x ./tools/files
func BenchmarkTransferVsOpenSSH(b *testing.B) {
	sftpBin, err := osexec.LookPath("sftp")
	if err != nil {
		b.Skip("SKIPPING: OpenSSH sftp not installed")
	}
	h := startSSHD(b)
	e := newEnv(b, setup{ssh: &h.cfg})
	dir := b.TempDir()
	src := filepath.Join(dir, "src.bin")
	f, err := os.Create(src)
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i*7 + i>>8)
	}
	for n := int64(0); n < *benchSize; n += int64(len(chunk)) {
		chunk[0]++
		if _, err := f.Write(chunk[:min(int64(len(chunk)), *benchSize-n)]); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	openssh := func(cmds string) time.Duration {
		batch := filepath.Join(dir, "batch")
		if err := os.WriteFile(batch, []byte(cmds), 0o600); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		out, err := osexec.Command(sftpBin, "-q", "-b", batch, "-i", h.key, "-P", fmt.Sprint(h.port),
			"-o", "UserKnownHostsFile="+h.cfg.KnownHostsFile, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
			h.cfg.Hosts[0].User+"@127.0.0.1").CombinedOutput()
		if err != nil {
			b.Fatalf("sftp: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	var peak uint64 // the highest live heap seen during rigout's transfers
	mine := func(args map[string]any) time.Duration {
		runtime.GC()
		stop := make(chan struct{})
		sampled := make(chan uint64)
		go func() {
			var m runtime.MemStats
			hi := uint64(0)
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				runtime.ReadMemStats(&m)
				hi = max(hi, m.HeapInuse)
				select {
				case <-stop:
					sampled <- hi
					return
				case <-t.C:
				}
			}
		}()
		start := time.Now()
		res := e.call("bulk_file_transfer", args)
		d := time.Since(start)
		close(stop)
		peak = max(peak, <-sampled)
		if res.IsError {
			b.Fatal(rigouttest.Text(res))
		}
		return d
	}
	remote, back := filepath.Join(dir, "remote.bin"), filepath.Join(dir, "back.bin")
	times := map[string][]time.Duration{}
	for b.Loop() {
		for range 3 {
			times["rigout upload"] = append(times["rigout upload"], mine(map[string]any{"action": "upload", "source": src, "destination": remote, "destination_host": "sftp1"}))
			times["rigout upload, no verify"] = append(times["rigout upload, no verify"], mine(map[string]any{"action": "upload", "source": src, "destination": remote, "destination_host": "sftp1", "verify": false}))
			times["openssh upload"] = append(times["openssh upload"], openssh(fmt.Sprintf("put %s %s\n", src, remote)))
			times["rigout download"] = append(times["rigout download"], mine(map[string]any{"action": "download", "source": remote, "destination": back, "source_host": "sftp1"}))
			times["rigout download, no verify"] = append(times["rigout download, no verify"], mine(map[string]any{"action": "download", "source": remote, "destination": back, "source_host": "sftp1", "verify": false}))
			times["openssh download"] = append(times["openssh download"], openssh(fmt.Sprintf("get %s %s\n", remote, back)))
			times["rigout host-to-host"] = append(times["rigout host-to-host"], mine(map[string]any{"action": "copy", "source": remote, "destination": back, "source_host": "sftp1", "destination_host": "sftp1"}))
		}
	}
	mbps := func(k string) float64 {
		ds := slices.Clone(times[k])
		slices.Sort(ds)
		return float64(*benchSize) / ds[len(ds)/2].Seconds() / 1e6
	}
	for _, k := range []string{"rigout upload", "rigout upload, no verify", "openssh upload", "rigout download", "rigout download, no verify", "openssh download", "rigout host-to-host"} {
		b.ReportMetric(mbps(k), strings.ReplaceAll(k, " ", "_")+"_MB/s")
	}
	b.ReportMetric(mbps("rigout upload")/mbps("openssh upload"), "upload_ratio")
	b.ReportMetric(mbps("rigout upload, no verify")/mbps("openssh upload"), "upload_noverify_ratio")
	b.ReportMetric(mbps("rigout download")/mbps("openssh download"), "download_ratio")
	b.ReportMetric(mbps("rigout download, no verify")/mbps("openssh download"), "download_noverify_ratio")
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MiB")
}

// BenchmarkRead10MB reads a 10 MB text file through file_operations read
// and through `cat` in execute_command, interleaved. Both return the
// first 1 MiB (their caps); the ratio is what the file tool costs
// against the shell route.
func BenchmarkRead10MB(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "ten.txt")
	line := strings.Repeat("x", 99) + "\n"
	if err := os.WriteFile(p, []byte(strings.Repeat(line, 100_000)), 0o644); err != nil {
		b.Fatal(err)
	}
	ff, err := files.New(files.Config{ReadLines: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	sh, err := shell.New(shell.Config{Local: &exec.Local{UnsafeNoSandbox: true}})
	if err != nil {
		b.Fatal(err)
	}
	gw := rigouttest.New(b, rigout.Config{Tools: append(ff.Tools(), sh.Tools()...)})
	c := rigouttest.Connect(b, gw)
	var readT, catT []time.Duration
	for b.Loop() {
		start := time.Now()
		if res := rigouttest.Call(b, c, "file_operations", map[string]any{"action": "read", "path": p}); res.IsError {
			b.Fatal(rigouttest.Text(res))
		}
		readT = append(readT, time.Since(start))
		start = time.Now()
		if res := rigouttest.Call(b, c, "execute_command", map[string]any{"argv": []any{"cat", p}}); res.IsError {
			b.Fatal(rigouttest.Text(res))
		}
		catT = append(catT, time.Since(start))
	}
	med := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	b.ReportMetric(float64(med(readT).Microseconds()), "read_µs")
	b.ReportMetric(float64(med(catT).Microseconds()), "cat_µs")
	b.ReportMetric(med(readT).Seconds()/med(catT).Seconds(), "read/cat")
}
