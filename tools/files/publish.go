package files

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
)

// publishOptions say how a file is published.
type publishOptions struct {
	// prefix is streamed before the content (append: the old file).
	prefix io.Reader
	// createParents creates missing parent directories.
	createParents bool
	// mode is the mode of a new file; an existing file keeps its own.
	mode fs.FileMode
	// expectedSHA256, if set, must be the hash of the file now there.
	expectedSHA256 string
	// verify re-reads the temporary file and compares its hash with what
	// was sent before publishing it.
	verify bool
	// progress, if set, is told of every chunk written.
	progress func(n int)
	// concurrency is the number of writes in flight over SFTP.
	concurrency int
}

// published says what was written.
type published struct {
	Bytes    int64  // the file's size
	SHA256   string // hex SHA-256 of the whole file
	Replaced bool   // an existing file was replaced
}

// mismatchError means expected_sha256 did not match the file.
type mismatchError struct {
	Path, Expected, Actual string
}

func (e *mismatchError) Error() string {
	if e.Actual == "" {
		return fmt.Sprintf("%s does not exist, but expected_sha256 was given: nothing was written", e.Path)
	}
	return fmt.Sprintf("%s changed since it was read: its sha256 is %s, not the expected %s; read it again. Nothing was written", e.Path, e.Actual, e.Expected)
}

// hashFile returns the hex SHA-256 of the file at p.
func hashFile(fsys fileSystem, p string) (string, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// countingWriter hashes, counts and reports what passes through it.
type countingWriter struct {
	h        hash.Hash
	n        int64
	progress func(int)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.h.Write(b)
	w.n += int64(len(b))
	if w.progress != nil {
		w.progress(len(b))
	}
	return len(b), nil
}

// publish writes content to p atomically: into a new temporary file in
// the same directory, synced, then renamed over p. An interruption at any
// point leaves p as it was or complete; never torn. An existing file keeps
// its mode and, where permitted, its owner.
func publish(fsys fileSystem, p string, content io.Reader, o publishOptions) (published, error) {
	var res published
	mode := o.mode
	if mode == 0 {
		mode = 0o644
	}
	uid, gid := -1, -1
	fi, err := fsys.Stat(p)
	switch {
	case err == nil:
		if fi.IsDir() {
			return res, fmt.Errorf("%s is a directory", p)
		}
		if !fi.Mode().IsRegular() {
			return res, fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
		}
		mode = fi.Mode().Perm()
		uid, gid = owner(fi)
		res.Replaced = true
	case errors.Is(err, fs.ErrNotExist):
	default:
		return res, err
	}
	if o.expectedSHA256 != "" {
		actual := ""
		if res.Replaced {
			if actual, err = hashFile(fsys, p); err != nil {
				return res, err
			}
		}
		if actual != o.expectedSHA256 {
			return res, &mismatchError{Path: p, Expected: o.expectedSHA256, Actual: actual}
		}
	}
	dir := path.Dir(p)
	if _, err := fsys.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if !o.createParents {
			return res, fmt.Errorf("directory %s does not exist; set create_parents to create it", dir)
		}
		if err := mkdirAll(fsys, dir, 0o755); err != nil {
			return res, err
		}
	}
	tmp := tempName(p)
	f, err := fsys.Create(tmp, mode)
	if err != nil {
		return res, err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			_ = fsys.Remove(tmp)
		}
	}()
	cw := &countingWriter{h: sha256.New(), progress: o.progress}
	verified := false
	if wa, ok := f.(io.WriterAt); ok && o.verify && o.concurrency > 0 && o.prefix == nil {
		// Over SFTP: read each segment back while the next one uploads.
		got, err := uploadVerified(wa, f, content, cw)
		if err != nil {
			return res, err
		}
		if want := hex.EncodeToString(cw.h.Sum(nil)); got != want {
			return res, fmt.Errorf("verification failed: %s holds sha256 %s after writing %s; nothing was published", tmp, got, want)
		}
		verified = true
	} else if err := copyInto(f, content, o, cw); err != nil {
		return res, err
	}
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("sync %s: %w", tmp, err)
	}
	sum := hex.EncodeToString(cw.h.Sum(nil))
	if o.verify && !verified {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return res, err
		}
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return res, fmt.Errorf("verify %s: %w", tmp, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != sum {
			return res, fmt.Errorf("verification failed: %s holds sha256 %s after writing %s; nothing was published", tmp, got, sum)
		}
	}
	if err := f.Close(); err != nil {
		return res, err
	}
	done = true
	cleanup := func() { _ = fsys.Remove(tmp) }
	if err := fsys.Chmod(tmp, mode); err != nil {
		cleanup()
		return res, err
	}
	if uid >= 0 {
		_ = fsys.Chown(tmp, uid, gid) // only root may give a file away; best effort
	}
	if err := fsys.Rename(tmp, p); err != nil {
		cleanup()
		return res, err
	}
	res.Bytes, res.SHA256 = cw.n, sum
	return res, nil
}

// concurrentWriter is an SFTP file's pipelined upload.
type concurrentWriter interface {
	ReadFromWithConcurrency(io.Reader, int) (int64, error)
}

// copyInto streams content (after o.prefix) into f, through cw. Over SFTP
// it keeps many requests in flight each way: a download uses the source
// file's pipelined WriteTo, an upload the destination's
// ReadFromWithConcurrency, and a host-to-host copy both, joined by a pipe.
func copyInto(f openFile, content io.Reader, o publishOptions, cw *countingWriter) error {
	src := content
	if o.prefix != nil {
		src = io.MultiReader(o.prefix, content)
	}
	cf, ok := f.(concurrentWriter)
	if !ok || o.concurrency <= 0 {
		_, err := io.CopyBuffer(io.MultiWriter(onlyWriter{f}, cw), src, make([]byte, 256<<10))
		return err
	}
	if wt, isWT := content.(io.WriterTo); isWT && o.prefix == nil {
		pr, pw := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err := wt.WriteTo(pw)
			pw.CloseWithError(err)
		}()
		_, err := cf.ReadFromWithConcurrency(io.TeeReader(pr, cw), o.concurrency)
		pr.CloseWithError(errors.New("files: upload ended"))
		<-done
		return err
	}
	_, err := cf.ReadFromWithConcurrency(io.TeeReader(src, cw), o.concurrency)
	return err
}

// verifySegment is how much an SFTP upload writes before reading it back.
const verifySegment = 8 << 20

// uploadVerified streams content into w in segments, each written with
// pipelined requests (WriteAt), and reads every written segment back from
// r on another goroutine while the next one uploads, so the verification
// uses the connection's other direction instead of a second pass. It
// returns the hex SHA-256 of what it read back.
func uploadVerified(w io.WriterAt, r io.ReaderAt, content io.Reader, cw *countingWriter) (string, error) {
	type segment struct {
		off int64
		n   int
	}
	segs := make(chan segment, 1)
	result := make(chan error, 1)
	vh := sha256.New()
	go func() {
		buf := make([]byte, verifySegment)
		var err error
		for s := range segs {
			if err != nil {
				continue // drain
			}
			if _, rerr := r.ReadAt(buf[:s.n], s.off); rerr != nil && rerr != io.EOF {
				err = fmt.Errorf("verify: %w", rerr)
				continue
			}
			vh.Write(buf[:s.n])
		}
		result <- err
	}()
	buf := make([]byte, verifySegment)
	var off int64
	var werr error
	for {
		n, err := io.ReadFull(content, buf)
		if n > 0 {
			cw.Write(buf[:n])
			if _, werr = w.WriteAt(buf[:n], off); werr != nil {
				break
			}
			segs <- segment{off, n}
			off += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			werr = err
			break
		}
	}
	close(segs)
	verr := <-result
	if werr != nil {
		return "", werr
	}
	if verr != nil {
		return "", verr
	}
	return hex.EncodeToString(vh.Sum(nil)), nil
}

// onlyWriter hides a file's other methods, so io.Copy streams through a
// fixed buffer instead of a ReadFrom shortcut.
type onlyWriter struct{ io.Writer }
