package files_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/files"
)

func randomFile(t testing.TB, p string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o640); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTransfer(t *testing.T) {
	h := startSSHD(t)
	e := newEnv(t, setup{ssh: &h.cfg, cfg: files.Config{ProgressInterval: 5 * time.Millisecond}})
	dir := t.TempDir()
	src := filepath.Join(dir, "src.bin")
	data := randomFile(t, src, 24<<20+123)
	want := sum(data)

	var mu sync.Mutex
	var progress []float64
	e.c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			defer mu.Unlock()
			if p, ok := n.Params.AdditionalFields["progress"].(float64); ok {
				progress = append(progress, p)
			}
		}
	})
	call := func(args map[string]any) string {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name = "bulk_file_transfer"
		req.Params.Arguments = args
		req.Params.Meta = &mcp.Meta{ProgressToken: "up"}
		res, err := e.c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("bulk_file_transfer %v: %v %s", args, err, rigouttest.Text(res))
		}
		return rigouttest.Text(res)
	}

	up := filepath.Join(dir, "remote", "up.bin")
	out := call(map[string]any{"action": "upload", "source": src, "destination": up, "destination_host": "sftp1"})
	if !strings.Contains(out, "sha256 "+want+" (verified") || !strings.Contains(out, "sftp") {
		t.Fatalf("upload: %s", out)
	}
	if got, _ := os.ReadFile(up); sum(got) != want {
		t.Fatal("upload content")
	}
	if fi, _ := os.Stat(up); fi.Mode().Perm() != 0o640 {
		t.Fatalf("upload mode %v", fi.Mode())
	}
	mu.Lock()
	n := len(progress)
	mu.Unlock()
	if n == 0 {
		t.Error("no progress notifications for a 24 MiB upload")
	}

	down := filepath.Join(dir, "down.bin")
	call(map[string]any{"action": "download", "source": up, "destination": down, "source_host": "sftp1"})
	if got, _ := os.ReadFile(down); sum(got) != want {
		t.Fatal("download content")
	}
	// Host to host: sftp1 to sftp1, and the destination an existing directory.
	h2h := filepath.Join(dir, "h2h")
	if err := os.Mkdir(h2h, 0o755); err != nil {
		t.Fatal(err)
	}
	call(map[string]any{"action": "copy", "source": up, "destination": h2h, "source_host": "sftp1", "destination_host": "sftp1", "verify": false})
	if got, _ := os.ReadFile(filepath.Join(h2h, "up.bin")); sum(got) != want {
		t.Fatal("host-to-host content")
	}

	// sync: a tree; the second run copies only what changed.
	tree := filepath.Join(dir, "tree")
	for i := range 5 {
		if err := os.MkdirAll(filepath.Join(tree, "d"+strconv.Itoa(i%2)), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(tree, "d"+strconv.Itoa(i%2), fmt.Sprintf("f%d.txt", i)), strings.Repeat("x", i*1000))
	}
	mirror := filepath.Join(dir, "mirror")
	out = call(map[string]any{"action": "sync", "source": tree, "destination": mirror, "destination_host": "sftp1"})
	if !strings.Contains(out, "5 files") {
		t.Fatalf("sync: %s", out)
	}
	write(t, filepath.Join(tree, "d1", "f3.txt"), "changed")
	out = call(map[string]any{"action": "sync", "source": tree, "destination": mirror, "destination_host": "sftp1"})
	if !strings.Contains(out, "1 files") || readFile(t, filepath.Join(mirror, "d1", "f3.txt")) != "changed" {
		t.Fatalf("second sync: %s", out)
	}

	// The ledger has the hash and the byte count.
	found := false
	for _, ev := range rigouttest.Events(t, e.ledger, audit.Filter{Tool: "bulk_file_transfer"}) {
		if ev.Phase == audit.PhaseDone && strings.Contains(ev.Detail, want) && strings.Contains(ev.Detail, `"bytes":"`+strconv.Itoa(len(data))+`"`) {
			found = true
		}
	}
	if !found {
		t.Fatal("no ledger row with the transfer's hash and size")
	}

	// Bad input: upload without a destination host.
	res := e.call("bulk_file_transfer", map[string]any{"action": "upload", "source": src, "destination": up})
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "destination_host") {
		t.Fatalf("upload without destination_host: %s", rigouttest.Text(res))
	}
}

// The kill -9 test: a child process (this test binary, re-executed) runs
// a gateway that uploads many large files at once over SFTP onto targets
// that already hold old content; the parent kills it with SIGKILL while
// the uploads stream, then checks that every target holds its old
// content or its new content, whole: never a torn file. 20 uploads of
// 1 to 20 MiB (the 100 are bounded to 20 for a 2-CPU test
// machine); the sizes differ so that some finish before the kill.
const killUploads = 20

func killSizeOf(i int) int { return (i + 1) << 20 }

func TestKill9DuringUploads(t *testing.T) {
	if os.Getenv("RIGOUT_FILES_UPLOADER") == "1" {
		uploader(t)
		return
	}
	h := startSSHD(t)
	dir := t.TempDir()
	olds, news := map[int]string{}, map[int]string{}
	for i := range killUploads {
		olds[i] = sum(randomFile(t, filepath.Join(dir, fmt.Sprintf("target%d", i)), 100<<10+7))
		news[i] = sum(randomFile(t, filepath.Join(dir, fmt.Sprintf("source%d", i)), killSizeOf(i)))
	}
	cmd := osexec.Command(os.Args[0], "-test.run=^TestKill9DuringUploads$", "-test.v")
	cmd.Env = append(os.Environ(), "RIGOUT_FILES_UPLOADER=1", "UPLOAD_DIR="+dir,
		"UPLOAD_PORT="+strconv.Itoa(h.port), "UPLOAD_KEY="+h.key, "UPLOAD_KNOWN="+h.cfg.KnownHostsFile)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once some uploads have finished and others still stream.
	deadline := time.Now().Add(60 * time.Second)
	for {
		tmps, _ := filepath.Glob(filepath.Join(dir, ".target*.rigout-*.tmp"))
		streaming, done := 0, 0
		for _, p := range tmps {
			if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
				streaming++
			}
		}
		for i := range killUploads {
			if fi, err := os.Stat(filepath.Join(dir, fmt.Sprintf("target%d", i))); err == nil && fi.Size() == int64(killSizeOf(i)) {
				done++
			}
		}
		if done > 0 && streaming > 0 || done == 0 && streaming >= killUploads/2 && time.Now().After(deadline.Add(-50*time.Second)) {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("uploads never started streaming:\n%s", log.String())
		}
		time.Sleep(time.Millisecond)
	}
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	complete, old := 0, 0
	for i := range killUploads {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("target%d", i)))
		if err != nil {
			t.Fatalf("target%d: %v", i, err)
		}
		switch sum(b) {
		case news[i]:
			complete++
		case olds[i]:
			old++
		default:
			t.Errorf("target%d is torn: %d bytes, neither its old nor its new content", i, len(b))
		}
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".target*.rigout-*.tmp"))
	t.Logf("after kill -9: %d targets complete, %d old, %d temporary files left behind", complete, old, len(tmps))
	if old == 0 {
		t.Errorf("the kill came after every upload finished: the test did not interrupt anything")
	}
}

// uploader is the child of TestKill9DuringUploads.
func uploader(t *testing.T) {
	dir := os.Getenv("UPLOAD_DIR")
	port, _ := strconv.Atoi(os.Getenv("UPLOAD_PORT"))
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	cfg := remote.RouterConfig{
		Local:          &exec.Local{UnsafeNoSandbox: true},
		Hosts:          []remote.HostConfig{{Name: "sftp1", Address: "127.0.0.1", Port: port, User: u.Username, Key: os.Getenv("UPLOAD_KEY")}},
		KnownHostsFile: os.Getenv("UPLOAD_KNOWN"),
		HostKeyPolicy:  remote.HostKeyStrict,
		HomeDir:        t.TempDir(),
	}
	e := newEnv(t, setup{ssh: &cfg})
	var wg sync.WaitGroup
	for i := range killUploads {
		wg.Go(func() {
			e.call("bulk_file_transfer", map[string]any{
				"action": "upload", "destination_host": "sftp1",
				"source": filepath.Join(dir, fmt.Sprintf("source%d", i)), "destination": filepath.Join(dir, fmt.Sprintf("target%d", i)),
			})
		})
	}
	wg.Wait()
	t.Log("all uploads finished before the kill")
}
