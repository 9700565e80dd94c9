package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// exportFollowPage is how many rows one poll of export --follow reads.
const exportFollowPage = 1000

// readCursor returns the seq stored in a cursor file: 0 if the file does
// not exist yet, an error if it holds anything but a non-negative integer.
func readCursor(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("--cursor-file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("--cursor-file %s: holds %q, not the seq of the last exported event; delete it to export from the start", path, s)
	}
	return n, nil
}

// writeCursor replaces the cursor file with seq, atomically: a crash
// leaves the old cursor or the new one, never a torn file.
func writeCursor(path string, seq int64) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("--cursor-file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := fmt.Fprintf(tmp, "%d\n", seq); err != nil {
		tmp.Close()
		return fmt.Errorf("--cursor-file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("--cursor-file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--cursor-file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--cursor-file: %w", err)
	}
	return nil
}

// auditExportFollow writes every event after the cursor as a JSON line,
// then every new one as it is committed, until ctx is done. After each
// batch is written (and, for --out, synced) the cursor file is replaced
// with the last seq written, so a restarted export resumes after it. It
// reads the ledger only, so it runs beside the gateway and across its
// restarts; unlike a one-shot export it records no audit.export row.
func auditExportFollow(ctx context.Context, l *sqlite.Ledger, f *auditFlags, stdout io.Writer) (err error) {
	last := f.afterSeq
	if f.cursorFile != "" {
		c, err := readCursor(f.cursorFile)
		if err != nil {
			return err
		}
		last = max(last, c)
	}
	var file *os.File
	w := stdout
	if f.out != "" {
		// A followed export appends: it is resumed into the same file.
		if file, err = os.OpenFile(f.out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
			return err
		}
		defer func() {
			if cerr := file.Close(); err == nil {
				err = cerr
			}
		}()
		w = file
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		q := f.filter
		q.AfterSeq, q.Limit, q.Newest = last, exportFollowPage, false
		evs, err := l.Query(ctx, q)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		// A filtered query may skip rows; the cursor still moves past
		// what was read, which is the last row returned.
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil {
				return err
			}
		}
		if len(evs) > 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
			if file != nil {
				if err := file.Sync(); err != nil {
					return err
				}
			}
			last = evs[len(evs)-1].Seq
			if f.cursorFile != "" {
				if err := writeCursor(f.cursorFile, last); err != nil {
					return err
				}
			}
			if len(evs) == exportFollowPage {
				continue // more are waiting
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// checkExportFormat accepts the one export format, JSON lines.
func checkExportFormat(format string) error {
	switch format {
	case "", "jsonl", "ndjson":
		return nil
	}
	return fmt.Errorf("--format %q: the export format is jsonl (one audit event per line)", format)
}

// eventSeqs is for tests and tools that read an export: the seq of each
// line. It refuses a line that is not an event.
func eventSeqs(r io.Reader) ([]int64, error) {
	var seqs []int64
	dec := json.NewDecoder(r)
	for {
		var e audit.Event
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			return seqs, nil
		}
		if err != nil {
			return seqs, err
		}
		seqs = append(seqs, e.Seq)
	}
}
