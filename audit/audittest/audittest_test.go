package audittest_test

import (
	"context"
	"errors"
	"testing"
	"time"

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

func TestSynthetic(t *testing.T) {
	var intent, done audit.Event
	unfinished, rare, denied := 0, 0, 0
	const calls = 53 * 1009
	for c := range calls {
		audittest.Synthetic(2*c, &intent)
		audittest.Synthetic(2*c+1, &done)
		if intent.Phase != audit.PhaseIntent || done.Phase != audit.PhaseDone {
			t.Fatalf("call %d: phases %q, %q", c, intent.Phase, done.Phase)
		}
		if want := audittest.SyntheticStart().Add(time.Duration(c) * audittest.SyntheticStep); !intent.Time.Equal(want) {
			t.Fatalf("call %d: intent at %v, want %v", c, intent.Time, want)
		}
		if !done.Time.After(intent.Time) || done.Tool != intent.Tool || done.ExitCode == nil {
			t.Fatalf("call %d: done row %+v for intent %+v", c, done, intent)
		}
		if done.CallID != intent.CallID {
			unfinished++
		}
		if intent.Tool == "rare_tool" {
			rare++
		}
		if done.Status == audit.StatusDenied {
			denied++
		}
	}
	if unfinished != 1009 || rare != 53 || denied != 1009 {
		t.Errorf("unfinished %d, rare %d, denied %d; want 1009, 53, 1009", unfinished, rare, denied)
	}
	var again audit.Event
	audittest.Synthetic(12345, &again)
	audittest.Synthetic(12345, &done)
	if again.CallID != done.CallID || !again.Time.Equal(done.Time) || again.Duration != done.Duration {
		t.Error("Synthetic is not the same for the same row")
	}
	if got, want := audittest.SyntheticEnd(2*calls), audittest.SyntheticStart().Add(calls*audittest.SyntheticStep); !got.Equal(want) {
		t.Errorf("SyntheticEnd = %v, want %v", got, want)
	}
}
