package audit_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
)

// run records a command's intent before it runs and its outcome after, under
// one CallID, and refuses to run it if the intent cannot be recorded.
func run(ctx context.Context, rec audit.Recorder, id string) error {
	intent := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: id,
		Principal: "ci-bot", Tool: "execute_command", Host: "local", Status: audit.StatusStarted}
	if err := rec.Record(ctx, intent); err != nil {
		return fmt.Errorf("not run: %w", err) // fail closed
	}
	// ... run the command ...
	done := intent
	done.Phase, done.Status, done.ExitCode = audit.PhaseDone, audit.StatusOK, new(int)
	return rec.Record(ctx, done)
}

// A tool call is two rows, an intent and its outcome, joined by a CallID. A
// Recorder that cannot write stops the call before it runs.
func Example() {
	ctx := context.Background()
	var rec audittest.Recorder // in production: a *sqlite.Ledger
	if err := run(ctx, &rec, "c1"); err != nil {
		fmt.Println(err)
	}
	for _, e := range rec.Events() {
		fmt.Println(e.Seq, e.Type, e.CallID, e.Phase, e.Status)
	}

	rec.FailAfter(0, nil) // the disk is full
	err := run(ctx, &rec, "c2")
	fmt.Println(err)
	// Output:
	// 1 tool.call c1 intent started
	// 2 tool.call c1 done ok
	// not run: audittest: injected write failure
}

// A backend stores each row with the hash of the one before it: the first
// row's previous hash is zero, and each later row's is its predecessor's
// hash. Changing any field of a row changes its hash and breaks the link to
// the next.
func ExampleRowHash() {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rows := []audit.Event{
		{Seq: 1, Time: t, Type: audit.TypeServerStart, Status: audit.StatusOK},
		{Seq: 2, Time: t, Type: audit.TypeToolCall, Tool: "execute_command", Status: audit.StatusDenied},
	}
	var prev [32]byte
	for i := range rows {
		rows[i].PrevHash = hex.EncodeToString(prev[:])
		prev = audit.RowHash(&rows[i], prev)
		rows[i].Hash = hex.EncodeToString(prev[:])
	}
	for _, e := range rows {
		fmt.Println(e.Seq, e.PrevHash[:12], e.Hash[:12])
	}

	// Someone turns the denial into a success: the stored hash no longer
	// matches the row.
	forged := rows[1]
	forged.Status = audit.StatusOK
	var p [32]byte
	hex.Decode(p[:], []byte(forged.PrevHash))
	h := audit.RowHash(&forged, p)
	fmt.Println("forged row matches its hash:", hex.EncodeToString(h[:]) == forged.Hash)
	// Output:
	// 1 000000000000 3625165519ef
	// 2 3625165519ef 810d5c6af7a2
	// forged row matches its hash: false
}

// Validate refuses what no backend stores: an event without a type, or one
// that claims a type reserved for the ledger's own records.
func ExampleEvent_Validate() {
	for _, e := range []audit.Event{
		{Type: audit.TypeToolCall, Phase: audit.PhaseDone},
		{Phase: audit.PhaseDone},
		{Type: audit.TypePrune},
	} {
		err := e.Validate()
		fmt.Println(errors.Is(err, audit.ErrInvalidEvent), err)
	}
	// Output:
	// false <nil>
	// true audit: invalid event: empty Type
	// true audit: invalid event: type "audit.prune" is reserved for the ledger
}
