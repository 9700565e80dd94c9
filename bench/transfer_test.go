package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTransferCheck shows that checkFile tells a good copy from a short
// one and from one with a byte changed: a broken transfer cannot pass.
func TestTransferCheck(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	sum, err := writeSource(src, 3<<20+17)
	if err != nil {
		t.Fatal(err)
	}
	again, err := writeSource(filepath.Join(dir, "again"), 3<<20+17)
	if err != nil || again != sum {
		t.Fatalf("the source is not reproducible: %s then %s (%v)", sum, again, err)
	}
	if err := checkFile(src, 3<<20+17, sum); err != nil {
		t.Fatalf("the source itself: %v", err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, b[:len(b)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkFile(short, 3<<20+17, sum); err == nil || !strings.Contains(err.Error(), "bytes, want") {
		t.Errorf("a short copy: %v", err)
	}
	b[len(b)/2] ^= 1
	flipped := filepath.Join(dir, "flipped")
	if err := os.WriteFile(flipped, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkFile(flipped, 3<<20+17, sum); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("a copy with one bit flipped: %v", err)
	}
}
