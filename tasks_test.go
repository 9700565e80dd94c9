package rigout

import (
	"context"
	"fmt"
	"testing"
)

// TestTaskTableForgetsOnlyFinished fills the table past its bound: the
// oldest finished tasks are forgotten, a running one stays reachable
// and is not cancelled, however many tasks others create.
func TestTaskTableForgetsOnlyFinished(t *testing.T) {
	tt := newTaskTable()
	ctx, end := tt.begin(context.Background(), "tag-long", "alice")
	defer end()
	tt.link("tag-long", "long", "alice")
	for i := range maxTaskRecords + 10 {
		tag, id := fmt.Sprintf("tag-%d", i), fmt.Sprintf("t%d", i)
		_, done := tt.begin(context.Background(), tag, "mallory")
		tt.link(tag, id, "mallory")
		done()
	}
	if !tt.owns("alice", "long") || ctx.Err() != nil {
		t.Fatalf("the running task was forgotten (owned %v) or cancelled (%v)", tt.owns("alice", "long"), ctx.Err())
	}
	if tt.owns("mallory", "t0") || !tt.owns("mallory", fmt.Sprint("t", maxTaskRecords+9)) {
		t.Fatal("the oldest finished task was kept, or the newest forgotten")
	}
	if len(tt.byID) != 1+maxTaskRecordsPerPrincipal || len(tt.byTag) != 1 {
		t.Fatalf("%d records, %d tags", len(tt.byID), len(tt.byTag))
	}
	if tt.owns("mallory", "long") {
		t.Fatal("another principal owns alice's task")
	}
	tt.cancel("long")
	if ctx.Err() == nil {
		t.Fatal("tasks/cancel did not end the call")
	}
}

// TestTaskTableKeepsOthersRecords: neither one principal's many tasks nor
// many principals' fill of the table forgets a finished task of a
// principal that made one.
func TestTaskTableKeepsOthersRecords(t *testing.T) {
	tt := newTaskTable()
	task := func(who string, i int) string {
		tag, id := fmt.Sprintf("tag-%s-%d", who, i), fmt.Sprintf("%s-%d", who, i)
		_, done := tt.begin(context.Background(), tag, who)
		tt.link(tag, id, who)
		done()
		return id
	}
	mine := task("alice", 0)
	for p := range 20 {
		for i := range maxTaskRecordsPerPrincipal + 5 {
			task(fmt.Sprint("p", p), i)
		}
	}
	if !tt.owns("alice", mine) {
		t.Error("alice's finished task was forgotten by others' tasks")
	}
	if len(tt.byID) > maxTaskRecords {
		t.Errorf("%d records, bound %d", len(tt.byID), maxTaskRecords)
	}
	if !tt.owns("p19", fmt.Sprint("p19-", maxTaskRecordsPerPrincipal+4)) || tt.owns("p0", "p0-0") {
		t.Error("the newest task was forgotten, or the oldest of a principal past its cap kept")
	}
}
