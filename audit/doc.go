// Package audit defines rigout's audit trail: the [Event] that records who
// did what, where, when, what the policy decided and how it ended; the
// interfaces through which the gateway writes events and tools read them;
// and the rules every storage backend shares, so that all of them keep the
// same tamper-evident chain. It needs no database and no cgo.
//
// # Overview
//
// The write side is the one-method [Recorder] interface, which the
// gateway's middleware holds; the read side is the one-method [Querier]
// interface, which takes a [Filter]. A Recorder's Record returns nil only
// once the event is durably stored, and a caller that gets an error must
// treat the action as unaudited and refuse it.
//
// Event types are dotted strings such as [TypeToolCall]; the audit.* types
// are reserved for the events a ledger writes about itself. A command is
// recorded as two rows sharing a CallID: a [PhaseIntent] row committed
// before it starts and a [PhaseDone] row after it ends. How a row stands or
// ended is a [Status] ([StatusOK], [StatusDenied], …), and what the command
// policy decided is a [Decision] ([DecisionAllow], [DecisionConfirm], …):
// typed constants, each documented once in this package, stored as their
// text.
//
// Backends live in subpackages. Package audit/sqlite is the ledger rigout
// ships: an append-only SQLite table with a hash chain, a head file and
// operator retention (it needs cgo). Package audit/postgres keeps one chain
// on PostgreSQL that several gateways share (no cgo). Package
// audit/audittest holds an in-memory Recorder for tests. A backend
//
//   - refuses what [Event.Validate] refuses, after cleaning the event with
//     [Event.Sanitize], wrapping [ErrInvalidEvent];
//   - assigns Seq, 1, 2, 3, … in commit order, and sets a zero Time;
//   - stores, for each row, [RowHash] of the row and the previous row's
//     hash, so that a chain written by one backend verifies the same way as
//     any other's and an export can be checked offline, and keys the chain
//     with a secret commands cannot read: the SQLite ledger stores
//     [KeyedRowHash] instead, the PostgreSQL ledger keys a second chained
//     hash; both record an [TypeChainKey] event where keying starts.
//
// # Usage
//
// Code that writes events takes a Recorder, never a concrete ledger: the
// SQLite ledger in production, an audittest.Recorder in tests. For a
// command, record the intent before it starts and do not run the command
// if that fails; then record how it ended under the same CallID:
//
//	func run(ctx context.Context, rec audit.Recorder, id string) error {
//		intent := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: id,
//			Principal: "ci-bot", Tool: "execute_command", Host: "local", Status: audit.StatusStarted}
//		if err := rec.Record(ctx, intent); err != nil {
//			return fmt.Errorf("not run: %w", err) // fail closed
//		}
//		// ... run the command ...
//		done := intent
//		done.Phase, done.Status, done.ExitCode = audit.PhaseDone, audit.StatusOK, new(int)
//		return rec.Record(ctx, done)
//	}
//
// A backend chains each row to the one before it with [RowHash], as in its
// example.
package audit
