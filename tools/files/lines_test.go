package files_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/files"
)

// TestReadLongLines: a read shows a text line whole however long, up to
// the byte cap; a line longer than the cap is cut, says so, and the next
// read (named in structuredContent) moves on past it.
func TestReadLongLines(t *testing.T) {
	e := newEnv(t, setup{cfg: files.Config{MaxReadBytes: 32 << 10}})
	p := filepath.Join(t.TempDir(), "min.js")
	long := strings.Repeat("x", 10000)
	huge := strings.Repeat("y", 100<<10)
	write(t, p, "first\n"+long+"\n"+huge+"\nlast\n")
	tests := []struct {
		name     string
		offset   int
		want     string // in the text
		notWant  string
		nextLine any // the next read's offset, or nil for none
	}{
		{"10 KB line whole", 1, "     2\t" + long + "\n", "line cut", float64(3)},
		{"100 KB line cut, the next shown", 3, "more bytes; it exceeds the read's byte cap]\n     4\tlast\n", "yyyy\n", nil},
		{"after it", 4, "     4\tlast\n", "cap", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.call("file_operations", map[string]any{"action": "read", "path": p, "offset": tt.offset})
			text := rigouttest.Text(res)
			if res.IsError || !strings.Contains(text, tt.want) || (tt.notWant != "" && strings.Contains(text, tt.notWant)) {
				t.Fatalf("read from %d (%d bytes): %s", tt.offset, len(text), text[max(0, len(text)-300):])
			}
			if len(text) > 33<<10 {
				t.Fatalf("read is %d bytes, over the cap", len(text))
			}
			sc := rigouttest.Structured(t, res)
			next, _ := sc["next"].(map[string]any)
			if tt.nextLine == nil {
				if next != nil {
					t.Fatalf("next after the end: %v", next)
				}
				return
			}
			args, _ := next["arguments"].(map[string]any)
			if next["tool"] != "file_operations" || args["offset"] != tt.nextLine || args["path"] != p {
				t.Fatalf("next %v, want offset %v", next, tt.nextLine)
			}
			if !strings.Contains(text, fmt.Sprintf(`"offset":%v`, tt.nextLine)) {
				t.Fatalf("the text does not name the next read: %s", text[max(0, len(text)-300):])
			}
		})
	}
}
