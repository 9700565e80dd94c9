package shell

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"github.com/rigout/rigout/exec"
)

// referenceText is how a result's text was built before joinStreams: each
// stream rendered whole, then written with writeStream.
func referenceText(header string, out, errs exec.Output) string {
	var sb strings.Builder
	sb.WriteString(header)
	for i, o := range []exec.Output{out, errs} {
		if s := outputText(o); s != "" {
			sb.WriteByte('\n')
			writeStream(&sb, []string{"stdout", "stderr"}[i], s)
		}
	}
	return sb.String()
}

// within reports whether s's bytes lie inside text's.
func within(s, text string) bool {
	if s == "" {
		return true
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(text)))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(text))
}

// TestJoinStreams checks that the text is byte for byte what writeStream
// gives, that stdout and stderr are the streams' text, and that they share
// the text's bytes: the output is held once for text and
// structuredContent.
func TestJoinStreams(t *testing.T) {
	big := bytes.Repeat([]byte("rigout-bench-output-line\n"), 50000)
	dropped := func(data []byte, head int) exec.Output {
		return exec.Output{Data: data, Total: int64(len(data)) + 12345, Dropped: 12345, Head: head}
	}
	cases := []struct {
		name     string
		out, err exec.Output
	}{
		{"none", exec.Output{}, exec.Output{}},
		{"stdout only", exec.Output{Data: []byte("hello\n"), Total: 6}, exec.Output{}},
		{"no final newline", exec.Output{Data: []byte("hello"), Total: 5}, exec.Output{Data: []byte("oops"), Total: 4}},
		{"stderr only", exec.Output{}, exec.Output{Data: []byte("err\n"), Total: 4}},
		{"escapes cleaned", exec.Output{Data: []byte("\x1b[31mred\x1b[0m\r\n"), Total: 14}, exec.Output{}},
		{"large, capped", dropped(big, len(big)/2), exec.Output{Data: []byte("warn\n"), Total: 5}},
		{"capped, empty tail", dropped([]byte("head only"), 9), exec.Output{}},
		{"capped, empty head", dropped([]byte("tail only"), 0), exec.Output{}},
		{"escape cut at the cap", dropped([]byte("abc\x1b[3xyz"), 5), exec.Output{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			header := "$ cmd\nexit code: 0 (1ms)\n"
			text, stdout, stderr := joinStreams(header, outputParts(c.out), outputParts(c.err))
			if want := referenceText(header, c.out, c.err); text != want {
				t.Fatalf("text differs from writeStream's:\n got %q\nwant %q", text[:min(len(text), 200)], want[:min(len(want), 200)])
			}
			if stdout != outputText(c.out) || stderr != outputText(c.err) {
				t.Fatalf("stdout %q, stderr %q: not the streams' text", stdout[:min(len(stdout), 80)], stderr)
			}
			if !within(stdout, text) || !within(stderr, text) {
				t.Fatal("stdout or stderr is a copy, not a part of the text")
			}
		})
	}
}
