package sqlwhere_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/internal/sqlwhere"
)

var numbered = sqlwhere.Dialect{
	Arg:    func(n int) string { return fmt.Sprintf("$%d", n) },
	Prefix: func(col, n string) string { return "left(" + col + ", " + n + ")" },
	True:   "true",
}

func TestWhere(t *testing.T) {
	since := time.Unix(0, 42)
	cond, args := sqlwhere.Where(&audit.Filter{Tool: "execute_command", Type: "tool.*", Since: since, AfterSeq: 7},
		numbered, []any{"first"}, sqlwhere.Eq{Col: "gateway", Value: "gw1"}, sqlwhere.Eq{Col: "unused"})
	want := "tool = $2 AND gateway = $3 AND left(type, $4) = $5 AND time_ns >= $6 AND seq > $7"
	if cond != want {
		t.Errorf("cond = %q, want %q", cond, want)
	}
	if wantArgs := []any{"first", "execute_command", "gw1", 5, "tool.", int64(42), int64(7)}; !slices.Equal(args, wantArgs) {
		t.Errorf("args = %v, want %v", args, wantArgs)
	}
	if cond, args := sqlwhere.Where(&audit.Filter{}, numbered, nil); cond != "true" || len(args) != 0 {
		t.Errorf("empty filter: %q %v", cond, args)
	}
	if got := sqlwhere.ClampNS(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)); got != 1<<63-1 {
		t.Errorf("ClampNS(3000) = %d", got)
	}
}

func ExampleWhere() {
	d := sqlwhere.Dialect{
		Arg:    func(int) string { return "?" },
		Prefix: func(col, n string) string { return "substr(" + col + ", 1, " + n + ")" },
		True:   "1",
	}
	cond, args := sqlwhere.Where(&audit.Filter{Principal: "alice", Type: "session.*"}, d, nil)
	fmt.Println(cond)
	fmt.Println(args...)
	// Output:
	// principal = ? AND substr(type, 1, ?) = ?
	// alice 8 session.
}
