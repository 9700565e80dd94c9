package sqlite

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with errors.Is.
var (
	// ErrClosed is returned by every method of a closed Ledger.
	ErrClosed = errors.New("sqlite: ledger closed")
	// ErrReadOnly is returned by the write methods of a Ledger opened with
	// [Config.ReadOnly].
	ErrReadOnly = errors.New("sqlite: ledger opened read-only")
	// ErrNoLedger is wrapped by Open when [Config.ReadOnly] is set and no
	// ledger exists at the path.
	ErrNoLedger = errors.New("sqlite: no ledger")
)

// WriteError reports that the ledger could not commit a write: the disk is
// full or read-only, the file is gone, or the database is locked for longer
// than the busy timeout. A caller that gets one must not run the command it
// was about to audit.
type WriteError struct {
	Path string // the database file
	Op   string // what failed: "begin", "insert", "commit", ...
	Err  error  // the underlying error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("sqlite: write %s: %s: %v", e.Path, e.Op, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// SchemaVersionError reports a database whose schema is newer than this
// build understands. Nothing is written to it.
type SchemaVersionError struct {
	Path  string
	Found int // PRAGMA user_version of the file
	Max   int // newest version this build knows
}

func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("sqlite: %s has schema version %d; this build understands up to %d", e.Path, e.Found, e.Max)
}

// TamperKind classifies what [Ledger.Verify] found wrong with the chain.
type TamperKind string

// The kinds of damage Verify reports.
const (
	TamperEdited      TamperKind = "edited"       // a row's fields no longer match its hash, or it was rewritten with a new hash
	TamperDeleted     TamperKind = "deleted"      // rows are missing from the middle or the start, with no recorded prune
	TamperReordered   TamperKind = "reordered"    // a row intact in content sits at another sequence number
	TamperTruncated   TamperKind = "truncated"    // rows at the end are missing: the head records a later row
	TamperHeadMissing TamperKind = "head-missing" // the head file is absent, so truncation cannot be ruled out
	TamperUnkeyed     TamperKind = "unkeyed"      // a row or the head is not keyed with the chain key: written by someone without the key
	TamperKeyUnknown  TamperKind = "key-unknown"  // rows are chained under a key Verify does not hold (lost, retired, or not readable), so they cannot be checked
)

// TamperError names the first row at which the hash chain fails.
type TamperError struct {
	Seq    int64      `json:"seq"`    // first bad row: the edited row, the first missing seq, ...; 0 when no row can be named
	Kind   TamperKind `json:"kind"`   // what kind of damage
	Detail string     `json:"detail"` // a sentence for the operator
}

func (e *TamperError) Error() string {
	if e.Seq == 0 {
		return fmt.Sprintf("sqlite: chain broken: %s: %s", e.Kind, e.Detail)
	}
	return fmt.Sprintf("sqlite: chain broken at seq %d: %s: %s", e.Seq, e.Kind, e.Detail)
}
