package audittest_test

import (
	"context"
	"fmt"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/audittest"
)

// A Recorder keeps what it accepts, and fails as a full disk would once
// told to: the way to test that a caller fails closed.
func ExampleRecorder() {
	var r audittest.Recorder
	ctx := context.Background()
	_ = r.Record(ctx, audit.Event{Type: audit.TypeToolCall, Tool: "execute_command"})
	r.FailAfter(0, nil) // every later write fails
	err := r.Record(ctx, audit.Event{Type: audit.TypeToolCall, Tool: "execute_command"})
	fmt.Println(len(r.Events()), r.Calls(), err)
	// Output: 1 2 audittest: injected write failure
}
