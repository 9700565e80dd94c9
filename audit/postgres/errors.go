package postgres

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with errors.Is.
var (
	// ErrClosed is returned by every method of a closed Ledger.
	ErrClosed = errors.New("postgres: ledger closed")
	// ErrReadOnly is returned by the write methods of a read-only Ledger.
	ErrReadOnly = errors.New("postgres: ledger opened read-only")
	// ErrNoLedger is wrapped by Open when [Config.ReadOnly] is set and the
	// database holds no ledger.
	ErrNoLedger = errors.New("postgres: no audit ledger")
)

// WriteError reports that the ledger could not commit: the database is
// unreachable, refused the connection or the statement, or did not answer
// within the write timeout. A caller that gets one must not run the command
// it was about to audit.
type WriteError struct {
	DB  string // host:port/database
	Op  string // what failed: "connect", "begin", "lock chain", "insert", "commit", ...
	Err error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("postgres: audit ledger %s unavailable: %s: %v", e.DB, e.Op, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// SchemaVersionError reports a database whose schema version is not the
// one this build writes: newer (nothing is written to it) or, for a
// read-only open, older.
type SchemaVersionError struct {
	DB    string
	Found int
	Max   int
}

func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("postgres: %s has audit schema version %d; this build uses %d", e.DB, e.Found, e.Max)
}

// TamperKind classifies what [Ledger.Verify] found wrong with the chain.
type TamperKind string

// The kinds of damage Verify reports.
const (
	TamperEdited    TamperKind = "edited"    // a row no longer matches its hash or link, or the chain was rewritten
	TamperDeleted   TamperKind = "deleted"   // rows are missing from the start or the middle
	TamperTruncated TamperKind = "truncated" // rows a gateway committed are missing from the end
	// TamperUnkeyed: a row's link or a gateway's head is not keyed with the
	// chain key: it was written by someone without the key.
	TamperUnkeyed TamperKind = "unkeyed"
	// TamperKeyUnknown: rows are linked under a key Verify does not hold,
	// so they cannot be checked.
	TamperKeyUnknown TamperKind = "key-unknown"
)

// TamperError names the first row at which the chain fails.
type TamperError struct {
	Seq    int64      `json:"seq"`
	Kind   TamperKind `json:"kind"`
	Detail string     `json:"detail"`
}

func (e *TamperError) Error() string {
	return fmt.Sprintf("postgres: chain broken at seq %d: %s: %s", e.Seq, e.Kind, e.Detail)
}
