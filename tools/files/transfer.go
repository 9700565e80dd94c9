package files

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/tools/internal/family"
)

// sftpConcurrency is the number of SFTP writes an upload keeps in flight,
// as OpenSSH sftp's default (-R 64).
const sftpConcurrency = 64

const bulkFileTransferDescription = "Copy files or trees between two hosts (local included): streamed, " +
	"SHA-256 verified, atomic. sync copies only missing or changed files."

var bulkFileTransferInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["upload", "download", "copy", "sync"]},
    "source": {"type": "string", "minLength": 1},
    "destination": {"type": "string", "minLength": 1, "description": "Target file, or a directory to put it in."},
    "source_host": {"type": "string", "description": "Default local."},
    "destination_host": {"type": "string", "description": "Default local."},
    "verify": {"type": "boolean", "description": "Re-hash before publishing; default true."}
  },
  "required": ["action", "source", "destination"],
  "additionalProperties": false
}`)

// BulkFileTransfer returns the bulk_file_transfer tool.
func (f *Family) BulkFileTransfer() rigout.Tool {
	return rigout.Tool{
		Name:        "bulk_file_transfer",
		Description: bulkFileTransferDescription,
		InputSchema: bulkFileTransferInput,
		Risk:        rigout.Mutating,
		Recorded:    []string{"action", "source", "destination"},
		Hosts:       []rigout.HostArg{{Name: "source_host"}, {Name: "destination_host"}},
		DefaultHost: "local",
		Paths: []rigout.PathArg{
			{Name: "source", Resolve: f.resolver("source_host")},
			{Name: "destination", Resolve: f.resolver("destination_host")},
		},
		Handler: f.bulkFileTransfer,
	}
}

type transferArgs struct {
	Action          string `json:"action"`
	SourceHost      string `json:"source_host"`
	DestinationHost string `json:"destination_host"`
	Verify          *bool  `json:"verify"`
}

// transferStats counts a transfer's work.
type transferStats struct {
	files, skipped int
	bytes          atomic.Int64
	lastSHA        string
}

func (f *Family) bulkFileTransfer(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a transferArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	switch a.Action {
	case "upload":
		if a.DestinationHost == "" {
			return family.Invalid(call, "upload needs destination_host (the source is on this machine)")
		}
	case "download":
		if a.SourceHost == "" {
			return family.Invalid(call, "download needs source_host (the destination is on this machine)")
		}
	}
	srcHost, dstHost := hostArg(call, "source_host"), hostArg(call, "destination_host")
	if a.Action == "upload" {
		if local, err := f.isLocal(ctx, srcHost, call.Principal().Name); err != nil || !local {
			return family.Invalid(call, "upload reads from this machine; use copy for %s", srcHost)
		}
	}
	if a.Action == "download" {
		if local, err := f.isLocal(ctx, dstHost, call.Principal().Name); err != nil || !local {
			return family.Invalid(call, "download writes to this machine; use copy for %s", dstHost)
		}
	}
	src, _ := call.Path("source")
	dst, _ := call.Path("destination")
	verify := a.Verify == nil || *a.Verify

	sfs, err := f.open(ctx, call, srcHost)
	if err != nil {
		return failed(call, "cannot reach "+srcHost, err)
	}
	defer sfs.Close()
	dfs, err := f.open(ctx, call, dstHost)
	if err != nil {
		return failed(call, "cannot reach "+dstHost, err)
	}
	defer dfs.Close()
	route := sfs.Route() + " → " + dfs.Route()
	call.Outcome.Route = route
	call.Outcome.Detail = map[audit.DetailKey]string{audit.DetailSource: srcHost + ":" + src, audit.DetailDestination: dstHost + ":" + dst}

	fi, err := sfs.Stat(src)
	if err != nil {
		return failed(call, "source "+src, err)
	}
	target := dst
	if !fi.IsDir() {
		if dfi, err := dfs.Stat(dst); err == nil && dfi.IsDir() {
			target = path.Join(dst, path.Base(src))
		}
	}
	if target == src && srcHost == dstHost {
		return family.Invalid(call, "source and destination are the same file: %s", src)
	}
	argv := []string{"cp", "--", src, target}
	if fi.IsDir() {
		argv = []string{"cp", "-r", "--", src, target}
	}
	if res := f.judge(ctx, call, dstHost, argv...); res != nil {
		return res, nil
	}

	var st transferStats
	stop := f.reportProgress(ctx, call, &st, fi)
	start := time.Now()
	err = f.transferTree(ctx, sfs, dfs, src, target, fi, a.Action == "sync", verify, &st)
	stop()
	elapsed := time.Since(start)
	n := st.bytes.Load()
	call.Outcome.Detail[audit.DetailBytes] = strconv.FormatInt(n, 10)
	call.Outcome.Detail[audit.DetailFiles] = strconv.Itoa(st.files)
	if !fi.IsDir() {
		call.Outcome.Detail[audit.DetailSHA256] = st.lastSHA
	}
	if err != nil {
		return failed(call, fmt.Sprintf("%s after %d files", a.Action, st.files), err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s:%s → %s:%s: %d files, %d bytes in %v", a.Action, srcHost, src, dstHost, target, st.files, n, elapsed.Round(time.Millisecond))
	if s := elapsed.Seconds(); s > 0 && n > 0 {
		fmt.Fprintf(&sb, " (%.1f MB/s)", float64(n)/s/1e6)
	}
	if !fi.IsDir() {
		fmt.Fprintf(&sb, "\nsha256 %s", st.lastSHA)
		if verify {
			sb.WriteString(" (verified at the destination)")
		}
	}
	if st.skipped > 0 {
		fmt.Fprintf(&sb, "\n%d files unchanged or not regular (links, devices) were skipped", st.skipped)
	}
	fmt.Fprintf(&sb, "\n(via %s)", route)
	return rigout.TextResult(sb.String()), nil
}

// transferTree copies src (a file, or a directory tree) to dst.
func (f *Family) transferTree(ctx context.Context, sfs, dfs fileSystem, src, dst string, fi fs.FileInfo, sync, verify bool, st *transferStats) error {
	if !fi.IsDir() {
		return f.transferFile(sfs, dfs, src, dst, fi, sync, verify, st)
	}
	return walk(ctx, sfs, src, func(p string, e fs.FileInfo) error {
		to := path.Join(dst, strings.TrimPrefix(p, src))
		switch {
		case e.IsDir():
			return mkdirAll(dfs, to, e.Mode().Perm()|0o700)
		case e.Mode().IsRegular():
			return f.transferFile(sfs, dfs, p, to, e, sync, verify, st)
		}
		st.skipped++
		return nil
	})
}

func (f *Family) transferFile(sfs, dfs fileSystem, src, dst string, fi fs.FileInfo, sync, verify bool, st *transferStats) error {
	if sync {
		// Unchanged: same size and modification time, to the second (what
		// SFTP carries), as sync sets it.
		if d, err := dfs.Stat(dst); err == nil && d.Mode().IsRegular() && d.Size() == fi.Size() && fi.ModTime().Unix() == d.ModTime().Unix() {
			st.skipped++
			return nil
		}
	}
	in, err := sfs.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	o := publishOptions{mode: fi.Mode().Perm(), createParents: true, verify: verify,
		progress: func(n int) { st.bytes.Add(int64(n)) }}
	if _, ok := dfs.(*sftpFS); ok {
		o.concurrency = sftpConcurrency
	}
	pub, err := publish(dfs, dst, in, o)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if err := dfs.Chtimes(dst, fi.ModTime(), fi.ModTime()); err != nil {
		return fmt.Errorf("%s: set modification time: %w", dst, err)
	}
	st.files++
	st.lastSHA = pub.SHA256
	return nil
}

// reportProgress sends progress notifications while a transfer runs, if
// the client asked for them. Call the returned function when it ends.
func (f *Family) reportProgress(ctx context.Context, call *rigout.Call, st *transferStats, fi fs.FileInfo) func() {
	if !call.WantsProgress(ctx) {
		return func() {}
	}
	total := 0.0
	if !fi.IsDir() {
		total = float64(fi.Size())
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(f.cfg.ProgressInterval)
		defer t.Stop()
		last := int64(-1)
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				n := st.bytes.Load()
				if n <= last {
					continue // progress must increase
				}
				last = n
				_ = call.Progress(pctx, float64(n), total, fmt.Sprintf("%d bytes copied", n))
			}
		}
	}()
	return func() { cancel(); <-done }
}
