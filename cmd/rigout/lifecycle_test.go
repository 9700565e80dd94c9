package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestFlagArgTakesEverySpelling(t *testing.T) {
	for _, args := range [][]string{
		{"--addr", "x", "--auth-token", "SECRET", "--no-ssh"},
		{"--addr", "x", "--auth-token=SECRET", "--no-ssh"},
		{"--addr", "x", "-auth-token", "SECRET", "--no-ssh"},
		{"--addr", "x", "-auth-token=SECRET", "--no-ssh"},
	} {
		v, found, rest := flagArg(args, "auth-token")
		if v != "SECRET" || !found || !slices.Equal(rest, []string{"--addr", "x", "--no-ssh"}) {
			t.Errorf("flagArg(%q) = %q %v %q", args, v, found, rest)
		}
	}
	// After "--" nothing is a flag; a longer name is another flag.
	v, found, rest := flagArg([]string{"--auth-tokens", "a", "--", "--auth-token", "b"}, "auth-token")
	if found || v != "" || len(rest) != 5 {
		t.Errorf("flagArg = %q %v %q", v, found, rest)
	}
	d, rest := boolArg([]string{"--detach", "--addr", "x", "-detach=true"}, "detach")
	if !d || !slices.Equal(rest, []string{"--addr", "x"}) {
		t.Errorf("boolArg = %v %q", d, rest)
	}
}

func TestTailLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	var sb strings.Builder
	for i := range 1000 {
		sb.WriteString(strings.Repeat("x", i%97) + "|" + itoa(i) + "\n")
	}
	sb.WriteString("partial")
	os.WriteFile(p, []byte(sb.String()), 0o600)
	f, _ := os.Open(p)
	defer f.Close()
	off, lines := tailLines(f, 3)
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "|997") || !strings.HasSuffix(lines[2], "|999") {
		t.Fatalf("tailLines = %q", lines)
	}
	if fi, _ := f.Stat(); off != fi.Size()-int64(len("partial")) {
		t.Fatalf("offset %d, want just before the partial line", off)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
