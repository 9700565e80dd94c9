package process_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rigout/rigout/rigouttest"
)

// TestLargeOutputPagedByLine: a command printing 5 MB in 75,000 lines comes
// back as a bounded result — its first and last lines, the count of what
// was left out — with a next call that pages the rest by line, and paging
// by line reads every line in order, each result bounded too.
func TestLargeOutputPagedByLine(t *testing.T) {
	ledger := rigouttest.OpenLedger(t)
	m := newManager(t, ledger)
	c := connect(t, m, "alice", nil, ledger)
	const lines = 75000
	// Each line: "line N " padded with x to 70 bytes: about 5.3 MB.
	cmd := fmt.Sprintf(`awk 'BEGIN{for(i=1;i<=%d;i++){s="line " i " "; while(length(s)<69)s=s "x"; print s}}'`, lines)
	res, text, sc := call(t, c, "execute_command", map[string]any{"command": cmd, "wait_seconds": 60, "timeout": 120})
	if res.IsError {
		t.Fatalf("error: %s", text)
	}
	b, _ := json.Marshal(res)
	if len(b) > 64<<10 {
		t.Fatalf("result is %d bytes; want it bounded", len(b))
	}
	t.Logf("a %d-byte output: a %d-byte result", lines*70, len(b))
	if sc["stdout_bytes"] != float64(lines*70) {
		t.Fatalf("stdout_bytes %v", sc["stdout_bytes"])
	}
	stdout, _ := sc["stdout"].(string)
	if !strings.HasPrefix(stdout, "line 1 x") || !strings.Contains(stdout, fmt.Sprintf("line %d x", lines)) || strings.Contains(stdout, "line 40000 x") {
		t.Fatalf("stdout shown is not head and tail: %d bytes", len(stdout))
	}
	if !strings.Contains(text, "not shown") || !strings.Contains(text, "next: process") {
		t.Fatalf("text does not say what was left out and how to read it:\n%s", text[:min(len(text), 500)])
	}
	args := nextArgs(t, sc["next"])
	first, ok := args["line"].(float64)
	if !ok || args["action"] != "read" || args["id"] != sc["process_id"] {
		t.Fatalf("next call %v", args)
	}
	if !strings.Contains(stdout, fmt.Sprintf("line %d x", int(first)-1)) || strings.Contains(stdout, fmt.Sprintf("line %d x", int(first))) {
		t.Fatalf("the next line %v is not the first not shown", first)
	}
	// Page on from the next call to the end.
	want := int(first)
	pages := 0
	for ; ; pages++ {
		if pages > 2000 {
			t.Fatal("paging does not end")
		}
		res, text, sc := call(t, c, "process", args)
		if res.IsError {
			t.Fatalf("read: %s", text)
		}
		if b, _ := json.Marshal(res); len(b) > 64<<10 {
			t.Fatalf("a page is %d bytes", len(b))
		}
		out := sc["stdout"].(map[string]any)
		got := strings.Split(strings.TrimSuffix(out["text"].(string), "\n"), "\n")
		for _, l := range got {
			if !strings.HasPrefix(l, fmt.Sprintf("line %d x", want)) || len(l) != 69 {
				t.Fatalf("line %d reads %q", want, l[:min(len(l), 30)])
			}
			want++
		}
		if sc["next"] == nil {
			break
		}
		args = nextArgs(t, sc["next"])
	}
	if want != lines+1 {
		t.Fatalf("paged to line %d, want %d", want, lines+1)
	}
	t.Logf("paged by line to its end in %d reads", pages)
}
