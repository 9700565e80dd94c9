package sqlite

import (
	"bytes"
	"crypto/hmac"
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

	"github.com/rigout/rigout/audit"
)

// The head file, beside the database, records the seq and hash of the last
// committed row. It is what lets Verify see truncation: deleting the newest
// rows leaves a chain that is internally valid but ends before the head.
//
// The file holds two slots written alternately, each a line of text with a
// check value, so a torn write leaves the other slot readable; the reader
// takes the valid slot with the higher seq. The head is written after the
// commit it describes, so it never runs ahead of the database; after a
// crash it may lag behind by the last batch, which Verify accepts: it
// requires that the row the head names is present with the same hash, not
// that it is the last row.
//
// Version 2 slots (256 bytes) are keyed: they name the chain key's
// [audit.ChainKeyID] and end in HMAC-SHA256 under the chain key, so only a
// holder of the key writes a head that verifies. Version 1 slots (128
// bytes, with a CRC) are what earlier versions wrote; they are read only to
// migrate a ledger that predates keying.
const (
	headSlotSize   = 256
	headPrefix     = "rigout-audit-head 2 "
	headMACDomain  = "rigout.audit.head.v2\x00"
	headSyncPeriod = time.Second // the head is fsynced at most this often

	headV1SlotSize = 128
	headV1Prefix   = "rigout-audit-head 1 "
)

// headState says what a head file holds and whether its MAC verified.
type headState int

const (
	headNone     headState = iota // no valid slot: the file is missing, empty or unreadable
	headKeyed                     // a version 2 slot whose MAC verifies under the chain key
	headUnkeyed                   // only version 1 (unkeyed) slots
	headOtherKey                  // a version 2 slot that names another key's ID
	headForged                    // a version 2 slot that names this key's ID but whose MAC fails
	headNoKey                     // a version 2 slot, and no key to check it with
)

// headRecord is what a head slot says.
type headRecord struct {
	Seq   int64
	Hash  [sha256.Size]byte
	KeyID string // the chain key's ID in a version 2 slot
}

// headMAC is the check value of a version 2 slot's text b.
func headMAC(key, b []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(headMACDomain))
	m.Write(b)
	return m.Sum(nil)
}

func encodeHeadSlot(h headRecord, key []byte) []byte {
	b := make([]byte, 0, headSlotSize)
	b = append(b, headPrefix...)
	b = append(b, fmt.Sprintf("%020d %s %s ", h.Seq, hexHash(h.Hash), audit.ChainKeyID(key))...)
	b = hex.AppendEncode(b, headMAC(key, b))
	for len(b) < headSlotSize-1 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

// decodeHeadSlot reads a version 2 slot. ok reports that it is well formed;
// state is headKeyed, headOtherKey, headForged or headNoKey.
func decodeHeadSlot(b, key []byte) (h headRecord, state headState, ok bool) {
	n := len(headPrefix) + 20 + 1 + 64 + 1 + 16 + 1
	if len(b) < n+64 || !bytes.HasPrefix(b, []byte(headPrefix)) {
		return h, headNone, false
	}
	seq, err := strconv.ParseInt(string(b[len(headPrefix):len(headPrefix)+20]), 10, 64)
	if err != nil || seq <= 0 {
		return h, headNone, false
	}
	if _, err := hex.Decode(h.Hash[:], b[len(headPrefix)+21:len(headPrefix)+21+64]); err != nil {
		return h, headNone, false
	}
	mac := make([]byte, sha256.Size)
	if _, err := hex.Decode(mac, b[n:n+64]); err != nil {
		return h, headNone, false
	}
	h.Seq, h.KeyID = seq, string(b[n-17:n-1])
	switch {
	case key == nil:
		return h, headNoKey, true
	case hmac.Equal(mac, headMAC(key, b[:n])):
		return h, headKeyed, true
	case h.KeyID != audit.ChainKeyID(key):
		return h, headOtherKey, true
	default:
		return h, headForged, true
	}
}

// decodeHeadSlotV1 reads a version 1 (unkeyed) slot.
func decodeHeadSlotV1(b []byte) (headRecord, bool) {
	var h headRecord
	n := len(headV1Prefix) + 20 + 1 + 64 + 1
	if len(b) < n+8 || !bytes.HasPrefix(b, []byte(headV1Prefix)) {
		return h, false
	}
	crc, err := strconv.ParseUint(string(b[n:n+8]), 16, 32)
	if err != nil || uint32(crc) != crc32.ChecksumIEEE(b[:n]) {
		return h, false
	}
	seq, err := strconv.ParseInt(string(b[len(headV1Prefix):len(headV1Prefix)+20]), 10, 64)
	if err != nil || seq <= 0 {
		return h, false
	}
	if _, err := hex.Decode(h.Hash[:], b[len(headV1Prefix)+21:len(headV1Prefix)+21+64]); err != nil {
		return h, false
	}
	h.Seq = seq
	return h, true
}

// parseHead returns the newest slot of a head file's content that is worth
// the most: a keyed slot over any other, a version 2 slot over a version 1
// one.
func parseHead(content, key []byte) (headRecord, headState) {
	var best headRecord
	state := headNone
	rank := func(s headState) int {
		switch s {
		case headKeyed:
			return 3
		case headOtherKey, headForged, headNoKey:
			return 2
		case headUnkeyed:
			return 1
		}
		return 0
	}
	consider := func(h headRecord, s headState) {
		if rank(s) > rank(state) || rank(s) == rank(state) && h.Seq > best.Seq {
			best, state = h, s
		}
	}
	for off := 0; off+headSlotSize <= len(content); off += headSlotSize {
		if h, s, ok := decodeHeadSlot(content[off:off+headSlotSize], key); ok {
			consider(h, s)
		}
	}
	for off := 0; off+headV1SlotSize <= len(content) && off < 2*headV1SlotSize; off += headV1SlotSize {
		if h, ok := decodeHeadSlotV1(content[off : off+headV1SlotSize]); ok {
			consider(h, headUnkeyed)
		}
	}
	return best, state
}

// readHeadFile reads a head file by path; a missing file is headNone, not
// an error.
func readHeadFile(path string, key []byte) (headRecord, headState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return headRecord{}, headNone, nil
	}
	if err != nil {
		return headRecord{}, headNone, fmt.Errorf("sqlite: read head: %w", err)
	}
	h, st := parseHead(b, key)
	return h, st, nil
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

func (h *headFile) read(key []byte) (headRecord, headState, error) {
	b := make([]byte, 2*headSlotSize)
	n, err := h.f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return headRecord{}, headNone, fmt.Errorf("sqlite: read head: %w", err)
	}
	r, st := parseHead(b[:n], key)
	return r, st, nil
}

// write records r in the next slot, keyed with key. It fsyncs when the
// last sync is older than headSyncPeriod, or always when force is set.
func (h *headFile) write(r headRecord, key []byte, now time.Time, force bool) error {
	if _, err := h.f.WriteAt(encodeHeadSlot(r, key), int64(h.slot*headSlotSize)); err != nil {
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
