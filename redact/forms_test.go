package redact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rigout/rigout/redact"
)

// undoSeparators removes the separators interleaving puts between bytes.
func undoSeparators(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(" \t\n\x00-,:._|", r) {
			return -1
		}
		return r
	}, s)
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// undoHex decodes the hex digits of s, separators dropped, from both
// nibble offsets.
func undoHex(s string) string {
	h := undoSeparators(s)
	var out strings.Builder
	for off := 0; off < 2 && off < len(h); off++ {
		d, _ := hex.DecodeString(h[off : off+(len(h)-off)/2*2])
		out.Write(d)
		out.WriteByte('\n')
	}
	return out.String()
}

// undoBase64 decodes s from every character offset.
func undoBase64(s string) string {
	var out strings.Builder
	for off := 0; off < len(s); off++ {
		part := strings.TrimRight(s[off:off+(len(s)-off)/4*4], "=\n")
		d, _ := base64.RawStdEncoding.DecodeString(part)
		out.Write(d)
		out.WriteByte('\n')
	}
	return out.String()
}

// formsValue is the value of these tests: it holds none of the
// separators, so that undoSeparators leaves it whole.
const formsValue = "rgtZq81xPw0bLmN4vTy7"

// holdsPart reports whether s holds 8 bytes of formsValue in a row.
func holdsPart(s string) bool {
	for i := 0; i+8 <= len(formsValue); i++ {
		if strings.Contains(s, formsValue[i:i+8]) {
			return true
		}
	}
	return false
}

// TestSetFormsFromCommands runs the commands that print a value at another
// base64 alignment, reversed or interleaved, and checks that Set.Redact
// masks each, and that what is left, undone the way the command did it,
// holds no 8 bytes of the value in a row. The commands get the value in
// the environment and only print.
func TestSetFormsFromCommands(t *testing.T) {
	tests := []struct {
		name, command string
		undo          func(string) string
	}{
		{"base64 alignment 0", `printf '%s' "$S" | base64 -w0`, undoBase64},
		{"base64 alignment 1", `printf 'xx%s' "$S" | base64 -w0 | cut -c3-`, undoBase64},
		{"base64 alignment 2", `printf 'x%s' "$S" | base64 -w0 | cut -c2-`, undoBase64},
		{"base64 alignment 1 inside", `printf 'ab%syz' "$S" | base64 -w0`, undoBase64},
		{"hex lower", `printf '%s' "$S" | od -An -tx1 -w64 | tr -d ' \n'`, undoHex},
		{"hex upper", `printf '%s' "$S" | od -An -tx1 -w64 | tr -d ' \n' | tr a-f A-F`, undoHex},
		{"hex spaced", `printf '%s' "$S" | od -An -tx1 -w64`, undoHex},
		{"hex colons", `printf '%s' "$S" | od -An -tx1 -w64 | sed 's/^ //; s/ /:/g'`, undoHex},
		{"dash after each byte", `printf '%s' "$S" | sed 's/./&-/g'`, undoSeparators},
		{"space after each byte", `printf '%s' "$S" | sed 's/./& /g'`, undoSeparators},
		{"comma after each byte", `printf '%s' "$S" | sed 's/./&,/g'`, undoSeparators},
		{"NUL after each byte", `printf '%s' "$S" | fold -w1 | tr '\n' '\0'`, undoSeparators},
		{"newline after each byte", `printf '%s' "$S" | fold -w1`, undoSeparators},
		{"reversed", `printf '%s\n' "$S" | rev`, reverse},
	}
	set, err := redact.New(formsValue)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tt.command)
			cmd.Env = append(os.Environ(), "S="+formsValue)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", tt.command, err)
			}
			if !holdsPart(tt.undo(string(out))) {
				t.Fatalf("the command printed no form of the value: %q", out)
			}
			got := set.Redact(string(out))
			if !strings.Contains(got, redact.Mask) {
				t.Fatalf("%q not masked", out)
			}
			for _, part := range strings.Split(got, redact.Mask) {
				if holdsPart(tt.undo(part)) {
					t.Fatalf("%q masked to %q: %q holds part of the value", out, got, part)
				}
			}
		})
	}
}

// TestScrubberNewFormsSplit: the reversed and interleaved forms, and a
// base64 middle at another alignment, split at every offset across two
// writes, are masked by the Scrubber as by Set.Redact.
func TestScrubberNewFormsSplit(t *testing.T) {
	set, err := redact.New(formsValue)
	if err != nil {
		t.Fatal(err)
	}
	mid := base64.StdEncoding.EncodeToString([]byte("xx" + formsValue))[3:]
	for _, form := range []string{reverse(formsValue), mid,
		strings.Join(strings.Split(formsValue, ""), "-"),
		strings.Join(strings.Split(formsValue, ""), "\x00"),
		strings.Join(strings.Split(hex.EncodeToString([]byte(formsValue)), ""), ""),
	} {
		stream := "head " + form + " tail"
		for cut := 1; cut < len(stream); cut++ {
			var out bytes.Buffer
			sc := set.Scrubber(&out)
			sc.Write([]byte(stream[:cut]))
			sc.Write([]byte(stream[cut:]))
			sc.Close()
			if got := out.String(); got != set.Redact(stream) || !strings.Contains(got, redact.Mask) {
				t.Fatalf("form %q cut %d: %q", form, cut, got)
			}
		}
	}
}
