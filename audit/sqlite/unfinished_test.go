package sqlite_test

import (
	"context"
	"strings"
	"testing"
)

// TestUnfinished: the intent rows without a done row, oldest first, up to
// the limit; a done row written later (a reconciliation) finishes one.
func TestUnfinished(t *testing.T) {
	ctx := context.Background()
	l, _ := openLedger(t, nil)
	record(t, l, 3) // finished calls
	var dones = map[string]func() error{}
	for _, i := range []int{7, 8, 9} {
		in, done := call(i)
		if err := l.Record(ctx, in); err != nil {
			t.Fatal(err)
		}
		dones[in.CallID] = func() error { return l.Record(ctx, done) }
	}
	ids := func(limit int) string {
		t.Helper()
		evs, err := l.Unfinished(ctx, limit)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, e := range evs {
			if e.Phase != "intent" || e.Hash == "" {
				t.Errorf("not an intent row with its hash: %+v", e)
			}
			s = append(s, e.CallID)
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		name   string
		finish string
		limit  int
		want   string
	}{
		{"all", "", 0, "call-7,call-8,call-9"},
		{"limited", "", 2, "call-7,call-8"},
		{"one finished", "call-8", 0, "call-7,call-9"},
		{"another finished", "call-7", 0, "call-9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.finish != "" {
				if err := dones[tt.finish](); err != nil {
					t.Fatal(err)
				}
			}
			if got := ids(tt.limit); got != tt.want {
				t.Fatalf("Unfinished = %q, want %q", got, tt.want)
			}
		})
	}
	l.Close()
	if _, err := l.Unfinished(ctx, 0); err == nil {
		t.Fatal("Unfinished on a closed ledger: no error")
	}
}
