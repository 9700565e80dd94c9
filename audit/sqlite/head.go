package sqlite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// The head file, beside the database, records the seq and hash of the last
// committed row. It is what lets Verify see truncation: deleting the newest
// rows leaves a chain that is internally valid but ends before the head.
//
// The file holds two 128-byte slots written alternately, each a line of text
// with a CRC, so a torn write leaves the other slot readable; the reader takes
// the valid slot with the higher seq. The head is written after the commit it
// describes, so it never runs ahead of the database; after a crash it may lag
// behind by the last batch, which Verify accepts: it requires that the row the
// head names is present with the same hash, not that it is the last row.
const (
	headSlotSize   = 128
	headPrefix     = "rigout-audit-head 1 "
	headSyncPeriod = time.Second // the head is fsynced at most this often
)

// headRecord is what a head slot says.
type headRecord struct {
	Seq  int64
	Hash [sha256.Size]byte
}

func encodeHeadSlot(h headRecord) []byte {
	b := make([]byte, 0, headSlotSize)
	b = append(b, headPrefix...)
	b = append(b, fmt.Sprintf("%020d %s ", h.Seq, hexHash(h.Hash))...)
	b = append(b, fmt.Sprintf("%08x", crc32.ChecksumIEEE(b))...)
	for len(b) < headSlotSize-1 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

func decodeHeadSlot(b []byte) (headRecord, bool) {
	var h headRecord
	n := len(headPrefix) + 20 + 1 + 64 + 1
	if len(b) < n+8 || !bytes.HasPrefix(b, []byte(headPrefix)) {
		return h, false
	}
	crc, err := strconv.ParseUint(string(b[n:n+8]), 16, 32)
	if err != nil || uint32(crc) != crc32.ChecksumIEEE(b[:n]) {
		return h, false
	}
	seq, err := strconv.ParseInt(string(b[len(headPrefix):len(headPrefix)+20]), 10, 64)
	if err != nil || seq <= 0 {
		return h, false
	}
	if _, err := hex.Decode(h.Hash[:], b[len(headPrefix)+21:len(headPrefix)+21+64]); err != nil {
		return h, false
	}
	h.Seq = seq
	return h, true
}

// parseHead returns the newest valid slot of a head file's content.
func parseHead(content []byte) (headRecord, bool) {
	var best headRecord
	found := false
	for off := 0; off+headSlotSize <= len(content); off += headSlotSize {
		if h, ok := decodeHeadSlot(content[off : off+headSlotSize]); ok && (!found || h.Seq > best.Seq) {
			best, found = h, true
		}
	}
	return best, found
}

// readHeadFile reads a head file by path; a missing file is not an error.
func readHeadFile(path string) (headRecord, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return headRecord{}, false, nil
	}
	if err != nil {
		return headRecord{}, false, fmt.Errorf("sqlite: read head: %w", err)
	}
	h, ok := parseHead(b)
	return h, ok, nil
}

// headFile is the writer's open head file. It is used only under the
// Ledger's wmu, by whoever holds the write connection.
type headFile struct {
	path     string
	f        *os.File
	slot     int
	lastSync time.Time
}

// openHeadFile opens or creates the head file with mode 0600. A new file is
// fsynced with its directory so that it survives a crash even before its
// first record is synced.
func openHeadFile(path string) (*headFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open head: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sqlite: open head: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("sqlite: head %s is not a regular file", path)
	}
	if fi.Size() == 0 {
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("sqlite: sync head: %w", err)
		}
		if err := syncDir(path); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &headFile{path: path, f: f}, nil
}

func (h *headFile) read() (headRecord, bool, error) {
	b := make([]byte, 2*headSlotSize)
	n, err := h.f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return headRecord{}, false, fmt.Errorf("sqlite: read head: %w", err)
	}
	r, ok := parseHead(b[:n])
	return r, ok, nil
}

// write records r in the next slot. It fsyncs when the last sync is older
// than headSyncPeriod, or always when force is set.
func (h *headFile) write(r headRecord, now time.Time, force bool) error {
	if _, err := h.f.WriteAt(encodeHeadSlot(r), int64(h.slot*headSlotSize)); err != nil {
		return fmt.Errorf("sqlite: write head: %w", err)
	}
	h.slot ^= 1
	if force || now.Sub(h.lastSync) >= headSyncPeriod {
		if err := h.f.Sync(); err != nil {
			return fmt.Errorf("sqlite: sync head: %w", err)
		}
		h.lastSync = now
	}
	return nil
}

func (h *headFile) close() error {
	err := h.f.Sync()
	if cerr := h.f.Close(); err == nil {
		err = cerr
	}
	return err
}
