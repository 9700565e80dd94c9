package audittest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
)

func TestRecorderFailsOnDemand(t *testing.T) {
	var r audittest.Recorder
	ctx := context.Background()
	if err := r.Record(ctx, audit.Event{Type: "a.b"}); err != nil {
		t.Fatal(err)
	}
	r.FailAfter(1, nil)
	if err := r.Record(ctx, audit.Event{Type: "a.c"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Record(ctx, audit.Event{Type: "a.d"}); !errors.Is(err, audittest.ErrInjected) {
		t.Fatalf("Record = %v, want ErrInjected", err)
	}
	boom := errors.New("disk full")
	r.FailWhen(func(e audit.Event) error {
		if e.Phase == audit.PhaseIntent {
			return boom
		}
		return nil
	})
	if err := r.Record(ctx, audit.Event{Type: "tool.call", Phase: audit.PhaseIntent}); !errors.Is(err, boom) {
		t.Fatalf("Record = %v", err)
	}
	r.FailWhen(nil)
	if err := r.Record(ctx, audit.Event{Type: "a.e"}); err != nil {
		t.Fatal(err)
	}
	evs := r.Events()
	if len(evs) != 3 || evs[2].Type != "a.e" || evs[2].Seq != 3 || r.Calls() != 5 {
		t.Fatalf("events %+v, calls %d", evs, r.Calls())
	}
}
