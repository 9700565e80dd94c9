package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/sshdtest"
)

// TestStampedArchive builds this machine's archive with the release
// command's own code, checks it against SHA256SUMS, unpacks it, and runs
// the binary: `rigout version --json` and /health of a serving gateway
// both report the stamped version, commit and build date.
func TestStampedArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds rigout with CGO_ENABLED=0")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := moduleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	o := options{
		Root:    root,
		Out:     t.TempDir(),
		Version: "v9.8.7-test",
		Commit:  "0123456789abcdef0123456789abcdef01234567",
		Date:    time.Date(2026, 12, 6, 12, 34, 56, 0, time.UTC),
		Targets: []string{hostTarget()},
		Helpers: []string{helperTarget(t)},
		Log:     &log,
	}
	arts, err := build(ctx, o)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}
	if len(arts) != 1 || filepath.Base(arts[0].Path) != "rigout_v9.8.7-test_"+strings.ReplaceAll(hostTarget(), "/", "_")+".tar.gz" {
		t.Fatalf("artifacts = %+v", arts)
	}

	data, err := os.ReadFile(arts[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums, err := os.ReadFile(filepath.Join(o.Out, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := hex.EncodeToString(sum[:]) + "  " + filepath.Base(arts[0].Path) + "\n"; string(sums) != want {
		t.Errorf("%s = %q, want %q", SumsFile, sums, want)
	}

	unpacked := t.TempDir()
	bin := unpack(t, data, unpacked, o.Helpers)
	out, err := osexec.CommandContext(ctx, bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("rigout version --json: %v", err)
	}
	var v struct {
		Version   string `json:"version"`
		Commit    string `json:"commit"`
		BuildDate string `json:"build_date"`
		CGO       bool   `json:"cgo"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	if v.Version != o.Version || v.Commit != o.Commit || v.BuildDate != "2026-12-06T12:34:56Z" || v.CGO {
		t.Errorf("version --json = %s; want version %s, commit %s, build_date 2026-12-06T12:34:56Z, cgo false", out, o.Version, o.Commit)
	}
	text, err := osexec.CommandContext(ctx, bin, "version").Output()
	if err != nil || !strings.Contains(string(text), "rigout v9.8.7-test\ncommit "+o.Commit) || !strings.Contains(string(text), "built 2026-12-06T12:34:56Z") {
		t.Errorf("rigout version = %q, %v", text, err)
	}

	health := serveHealth(ctx, t, bin)
	if health["version"] != o.Version || health["commit"] != o.Commit[:12] || health["build_date"] != "2026-12-06T12:34:56Z" {
		t.Errorf("/health = %v; want version %s, commit %s, build_date 2026-12-06T12:34:56Z", health, o.Version, o.Commit[:12])
	}

	t.Run("helper beside rigout", func(t *testing.T) {
		testHelperBeside(ctx, t, bin, o.Helpers[0])
	})
}

// helperTarget is the linux helper this machine can run: the release
// test builds only that one (the cross build of the other is the same
// command with another GOARCH).
func helperTarget(t *testing.T) string {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the helper runs on linux/amd64 and linux/arm64, not %s", hostTarget())
	}
	return hostTarget()
}

// testHelperBeside runs the released rigout, with the archive's helper
// beside it, against a real OpenSSH sshd on loopback: `rigout hosts test`
// uploads the helper, verifies it and reports it running, shipped from
// beside the binary. The same binary alone in a directory reports that it
// found no helper (instead of falling back silently).
func testHelperBeside(ctx context.Context, t *testing.T, bin, platform string) {
	srv := sshdtest.Start(t, sshdtest.Options{SetEnv: map[string]string{"HOME": t.TempDir()}})
	dir := t.TempDir()
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(srv.KnownHostsLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host := srv.Router.Hosts[0]
	cfg := filepath.Join(dir, "rigout.json")
	conf := fmt.Sprintf(`{"hosts": [{"name": "box", "address": "127.0.0.1", "port": %d, "user": %q, "key": %q}]}`, host.Port, host.User, host.Key)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(t.TempDir(), "rigout")
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, bin string
		want      []string
	}{
		{"released layout", bin, []string{"helper: rigout-helper " + exec.HelperVersion + " (commands: ", "shipped: " + platform + " beside " + bin}},
		{"binary alone", alone, []string{"helper: none: no rigout helper shipped (none found: no rigout-helper-linux-<arch> beside " + alone}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := osexec.CommandContext(ctx, tt.bin, "hosts", "test", "box", "--config", cfg, "--known-hosts", known,
				"--ssh-config", filepath.Join(dir, "no_ssh_config"), "--state-dir", t.TempDir())
			c.Env = append(os.Environ(), "HOME="+t.TempDir())
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("rigout hosts test: %v\n%s", err, out)
			}
			t.Logf("rigout hosts test:\n%s", out)
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("rigout hosts test says:\n%s\nwant %q", out, w)
				}
			}
		})
	}
}

// unpack extracts the archive into dir, checks it holds exactly the
// binary, the helpers, the README and docs/*.md under one directory, and
// returns the binary.
func unpack(t *testing.T, archive []byte, dir string, helpers []string) string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		p := filepath.Join(dir, filepath.Base(h.Name))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	prefix := "rigout_v9.8.7-test_" + strings.ReplaceAll(hostTarget(), "/", "_") + "/"
	want := []string{prefix + "rigout"}
	for _, h := range helpers {
		want = append(want, prefix+remote.HelperFileName(h))
	}
	want = append(want, prefix+"README.md")
	if len(names) <= len(want) || !slices.Equal(names[:len(want)], want) {
		t.Fatalf("archive holds %q, want %q and docs/*.md", names, want)
	}
	// The README links to docs/: the archive carries them.
	for _, n := range names[len(want):] {
		if !strings.HasPrefix(n, prefix+"docs/") || !strings.HasSuffix(n, ".md") {
			t.Errorf("archive holds %q besides the binary, the helpers, the README and docs/*.md", n)
		}
	}
	if !slices.Contains(names, prefix+"docs/CONFIGURATION.md") {
		t.Errorf("archive holds %q, without docs/CONFIGURATION.md", names)
	}
	return filepath.Join(dir, "rigout")
}

// serveHealth starts `bin serve` on a loopback port of its own choosing,
// with a state directory of its own, reads /health and stops it.
func serveHealth(ctx context.Context, t *testing.T, bin string) map[string]any {
	t.Helper()
	c := osexec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--no-ssh", "--state-dir", t.TempDir())
	c.Env = append(os.Environ(), "HOME="+t.TempDir())
	c.WaitDelay = 5 * time.Second
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = c.Stdout // the banner goes to either, depending on the mode
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), " listening on "); ok {
				found <- strings.TrimSpace(after)
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, out)
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(time.Minute):
	}
	if url == "" {
		_ = c.Process.Kill()
		t.Fatalf("serve printed no address within a minute")
	}
	base, _, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+base+"/health", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestArchiveIsReproducible: the same inputs give the same bytes.
func TestArchiveIsReproducible(t *testing.T) {
	dir := t.TempDir()
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	files := []archiveFile{{"rigout", 0o755, []byte("\x7fELF not really")}, {"README.md", 0o644, []byte("readme")}}
	a, err := writeArchive(filepath.Join(dir, "a.tar.gz"), "x", date, files)
	if err != nil {
		t.Fatal(err)
	}
	b, err := writeArchive(filepath.Join(dir, "b.tar.gz"), "x", date, files)
	if err != nil {
		t.Fatal(err)
	}
	c, err := writeArchive(filepath.Join(dir, "c.tar.gz"), "x", date.Add(time.Second), files)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("same inputs, different archives: %s vs %s", a, b)
	}
	if a == c {
		t.Errorf("another date gave the same archive %s", a)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"target without arch", func() error { _, _, err := checkTarget("linux"); return err }()},
		{"windows target", func() error { _, _, err := checkTarget("windows/amd64"); return err }()},
		{"386 target", func() error { _, _, err := checkTarget("linux/386"); return err }()},
		{"empty version", checkStamp("version", "")},
		{"version with a space", checkStamp("version", "v1 -X main.x=y")},
		{"version with a quote", checkStamp("version", `v1"`)},
		{"date not a number", func() error { _, err := buildDate("yesterday", time.Now); return err }()},
		{"negative date", func() error { _, err := buildDate("-5", time.Now); return err }()},
	} {
		if tc.err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	for _, good := range defaultTargets {
		if _, _, err := checkTarget(good); err != nil {
			t.Errorf("checkTarget(%s): %v", good, err)
		}
	}
	if d, err := buildDate("1765000000", time.Now); err != nil || d != time.Unix(1765000000, 0).UTC() {
		t.Errorf("buildDate(1765000000) = %v, %v", d, err)
	}
}
