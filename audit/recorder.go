package audit

import "context"

// Recorder is the write side of the audit trail. The gateway's middleware
// holds a Recorder, so a test can hand it a fake (see package audittest).
//
// Record returns nil only once e is durably stored; an error means the
// event is not on record, and the caller must treat the action as unaudited
// and refuse it. Implementations refuse a malformed event with an error
// wrapping [ErrInvalidEvent] (see [Event.Validate]) and must not let ctx's
// cancellation abandon a write: a client that disconnects must not lose its
// record.
type Recorder interface {
	Record(ctx context.Context, e Event) error
}

// ArgsDigester is implemented by a [Recorder] that keys the digest of a
// call's arguments stored in [Event.ArgsDigest] itself, as the SQLite and
// PostgreSQL ledgers do with their per-install secret, so that identical
// arguments give identical digests across restarts. The gateway checks its
// Recorder for it; without it the gateway digests under a key of its own,
// random for each gateway.
//
// DigestArgs returns the digest of raw, a canonical encoding of the
// arguments (json.Marshal of the argument map); "" means no digest.
type ArgsDigester interface {
	DigestArgs(raw []byte) string
}

// Querier is the read side of the audit trail, kept apart from [Recorder]
// so that a reader needs no write access and a writer no read access.
//
// Query returns the events matching f in ascending Seq order, with their
// hashes; with f.Limit and f.Newest set, the newest f.Limit of them, still in
// ascending order. An error means the events could not be read.
type Querier interface {
	Query(ctx context.Context, f Filter) ([]Event, error)
}
