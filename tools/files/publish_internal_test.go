package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// corrupting reads back one flipped byte, as a disk or server that lost
// a write would: the read-back hash must differ from what was sent.
type corrupting struct {
	*os.File
	at int64
}

func (c corrupting) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.File.ReadAt(b, off)
	if c.at >= off && c.at < off+int64(n) {
		b[c.at-off] ^= 1
	}
	return n, err
}

func TestUploadVerifiedDetectsCorruption(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 2*verifySegment/10+77)
	for _, at := range []int64{-1, 5, verifySegment + 3, int64(len(data)) - 1} {
		f, err := os.Create(filepath.Join(t.TempDir(), "tmp"))
		if err != nil {
			t.Fatal(err)
		}
		cw := &countingWriter{h: sha256.New()}
		got, err := uploadVerified(f, corrupting{f, at}, bytes.NewReader(data), cw)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		sent := hex.EncodeToString(cw.h.Sum(nil))
		want := sha256.Sum256(data)
		if sent != hex.EncodeToString(want[:]) || cw.n != int64(len(data)) {
			t.Fatalf("sent hash or count wrong: %d bytes", cw.n)
		}
		if (got == sent) != (at < 0) {
			t.Errorf("corruption at %d: read-back %s, sent %s", at, got, sent)
		}
	}
}
