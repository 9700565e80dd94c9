// Command release builds rigout's release archives: for each target, a
// CGO_ENABLED=0 build of ./cmd/rigout (the pure-Go SQLite ledger, so no C
// compiler and no cross toolchain) stamped with the version, commit and
// build date, packed with the SSH helpers, the README and docs/*.md into
// rigout_VERSION_OS_ARCH.tar.gz, and a SHA256SUMS file over the archives
// in the format `sha256sum -c` reads.
//
// Every archive holds, beside rigout, rigout-helper-linux-amd64 and
// rigout-helper-linux-arm64 (./cmd/rigout-helper, CGO_ENABLED=0, built
// once per release): the program rigout uploads to Linux hosts, whatever
// the gateway's own platform (docs/SSH_HELPER.md). The gateway finds them
// beside its own executable.
//
//	go run ./internal/release                       # all four targets into dist/
//	go run ./internal/release -targets linux/amd64  # one
//	go run ./internal/release -version v0.2.0 -out /tmp/dist
//
// The build date is SOURCE_DATE_EPOCH when that is set (reproducible
// archives: the same tree, version and date give the same bytes), else
// now. Each build's start and duration are printed as it goes, since a
// first build compiles every dependency (SQLite included) for its target.
package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec/remote"
)

// defaultTargets are the platforms a release ships for.
var defaultTargets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// SumsFile is the checksum file written beside the archives.
const SumsFile = "SHA256SUMS"

// options is one release run.
type options struct {
	Root    string    // the module root (where go.mod is)
	Out     string    // the directory the archives go to
	Version string    // stamped as main.linkedVersion
	Commit  string    // stamped as main.linkedCommit
	Date    time.Time // stamped as main.linkedDate, and the archives' file times
	Targets []string  // GOOS/GOARCH pairs
	Helpers []string  // the linux/ARCH helpers every archive holds
	Log     io.Writer // progress
}

// artifact is one built archive.
type artifact struct {
	Target string
	Path   string
	SHA256 string
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(log)
	o := options{Log: log, Helpers: remote.HelperPlatforms()}
	var targets string
	fs.StringVar(&o.Out, "out", "dist", "directory for the archives and "+SumsFile)
	fs.StringVar(&o.Version, "version", "v"+rigout.Version, "release version to stamp")
	fs.StringVar(&o.Commit, "commit", "", "commit to stamp (default: git rev-parse HEAD)")
	fs.StringVar(&targets, "targets", strings.Join(defaultTargets, ","), "comma-separated GOOS/GOARCH list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	o.Root = root
	o.Targets = strings.Split(targets, ",")
	if o.Commit == "" {
		if o.Commit, err = gitHead(ctx, root); err != nil {
			return fmt.Errorf("%w (pass -commit when building outside a git checkout)", err)
		}
	}
	if o.Date, err = buildDate(os.Getenv("SOURCE_DATE_EPOCH"), time.Now); err != nil {
		return err
	}
	arts, err := build(ctx, o)
	if err != nil {
		return err
	}
	for _, a := range arts {
		fmt.Fprintf(log, "%s  %s\n", a.SHA256, a.Path)
	}
	return nil
}

// buildDate is SOURCE_DATE_EPOCH (seconds since the epoch) if set, else
// now, in UTC to the second.
func buildDate(epoch string, now func() time.Time) (time.Time, error) {
	if epoch == "" {
		return now().UTC().Truncate(time.Second), nil
	}
	s, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || s < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", epoch)
	}
	return time.Unix(s, 0).UTC(), nil
}

func moduleRoot(ctx context.Context) (string, error) {
	out, err := osexec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the rigout module: run from its checkout")
	}
	return filepath.Dir(mod), nil
}

func gitHead(ctx context.Context, root string) (string, error) {
	out, err := osexec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse HEAD: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// checkTarget refuses what is not a GOOS/GOARCH pair the release knows.
func checkTarget(t string) (goos, goarch string, err error) {
	goos, goarch, ok := strings.Cut(t, "/")
	if !ok || goos == "" || goarch == "" {
		return "", "", fmt.Errorf("target %q: want GOOS/GOARCH, e.g. linux/amd64", t)
	}
	if goos != "linux" && goos != "darwin" {
		return "", "", fmt.Errorf("target %q: rigout runs as a gateway on linux and darwin only", t)
	}
	if goarch != "amd64" && goarch != "arm64" {
		return "", "", fmt.Errorf("target %q: release architectures are amd64 and arm64", t)
	}
	return goos, goarch, nil
}

// checkStamp refuses a stamp that could not survive -ldflags' quoting.
func checkStamp(name, v string) error {
	if v == "" || strings.ContainsAny(v, " \t\n'\"\\") {
		return fmt.Errorf("%s %q: want a non-empty value without spaces or quotes", name, v)
	}
	return nil
}

// ldflags are the linker flags that strip the binary and stamp it.
func ldflags(o options) string {
	return strings.Join([]string{
		"-s", "-w",
		"-X", "main.linkedVersion=" + o.Version,
		"-X", "main.linkedCommit=" + o.Commit,
		"-X", "main.linkedDate=" + o.Date.Format(time.RFC3339),
	}, " ")
}

// build builds every target of o, writes the SUMS file, and returns the
// archives in target order.
func build(ctx context.Context, o options) ([]artifact, error) {
	if err := errors.Join(checkStamp("version", o.Version), checkStamp("commit", o.Commit)); err != nil {
		return nil, err
	}
	if len(o.Targets) == 0 {
		return nil, errors.New("no targets")
	}
	for _, t := range o.Targets {
		if _, _, err := checkTarget(t); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "rigout-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	readme, err := os.ReadFile(filepath.Join(o.Root, "README.md"))
	if err != nil {
		return nil, err
	}
	docs, err := readDocs(o.Root)
	if err != nil {
		return nil, err
	}
	// The helpers, built once, go into every archive.
	var helpers []archiveFile
	for _, t := range o.Helpers {
		goos, goarch, err := checkTarget(t)
		if err != nil || goos != "linux" {
			return nil, fmt.Errorf("helper %q: want linux/amd64 or linux/arm64", t)
		}
		bin := filepath.Join(work, "helpers", remote.HelperFileName(t))
		if err := goBuild(ctx, o, "rigout-helper "+t, goos, goarch, "-s -w", bin, "./cmd/rigout-helper"); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		helpers = append(helpers, archiveFile{remote.HelperFileName(t), 0o755, data})
	}
	var arts []artifact
	for _, t := range o.Targets {
		goos, goarch, _ := checkTarget(t)
		bin := filepath.Join(work, goos+"-"+goarch, "rigout")
		if err := goBuild(ctx, o, t, goos, goarch, ldflags(o), bin, "./cmd/rigout"); err != nil {
			return nil, err
		}
		exe, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("rigout_%s_%s_%s", o.Version, goos, goarch)
		path := filepath.Join(o.Out, name+".tar.gz")
		files := append([]archiveFile{{"rigout", 0o755, exe}}, helpers...)
		files = append(files, archiveFile{"README.md", 0o644, readme})
		files = append(files, docs...)
		sum, err := writeArchive(path, name, o.Date, files)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", t, err)
		}
		arts = append(arts, artifact{Target: t, Path: path, SHA256: sum})
	}
	if err := writeSums(filepath.Join(o.Out, SumsFile), arts); err != nil {
		return nil, err
	}
	return arts, nil
}

// readDocs reads the Markdown files of root/docs, sorted by name, as
// archive entries docs/NAME.md: the README links to them.
func readDocs(root string) ([]archiveFile, error) {
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var docs []archiveFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, archiveFile{"docs/" + filepath.Base(p), 0o644, b})
	}
	return docs, nil
}

// goBuild builds pkg for goos/goarch without cgo into out, reproducibly
// (-trimpath, no VCS stamp), and says how long it took.
func goBuild(ctx context.Context, o options, what, goos, goarch, flags, out, pkg string) error {
	fmt.Fprintf(o.Log, "building %s (CGO_ENABLED=0) ...\n", what)
	start := time.Now()
	c := osexec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", flags, "-o", out, pkg)
	c.Dir = o.Root
	c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	c.Stdout, c.Stderr = o.Log, o.Log
	if err := c.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", what, err)
	}
	fmt.Fprintf(o.Log, "built %s in %s\n", what, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// archiveFile is one entry of an archive.
type archiveFile struct {
	name string
	mode int64
	data []byte
}

// writeArchive writes a gzipped tar holding files under dir/, in order,
// every entry owned by root and dated date, and returns its SHA-256.
func writeArchive(path, dir string, date time.Time, files []archiveFile) (sum string, err error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	h := sha256.New()
	gz, err := gzip.NewWriterLevel(io.MultiWriter(f, h), gzip.BestCompression)
	if err != nil {
		return "", err
	}
	gz.ModTime = date
	tw := tar.NewWriter(gz)
	for _, e := range files {
		hdr := &tar.Header{
			Name: dir + "/" + e.name, Mode: e.mode, Size: int64(len(e.data)),
			ModTime: date, Typeflag: tar.TypeReg, Uname: "root", Gname: "root", Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return "", err
		}
		if _, err := tw.Write(e.data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeSums writes "SHA256  NAME" lines, sorted by name, as sha256sum does.
func writeSums(path string, arts []artifact) error {
	var lines []string
	for _, a := range arts {
		lines = append(lines, a.SHA256+"  "+filepath.Base(a.Path)+"\n")
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	return os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
}

// hostTarget is this machine's GOOS/GOARCH.
func hostTarget() string { return runtime.GOOS + "/" + runtime.GOARCH }
