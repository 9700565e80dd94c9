package audit

import "time"

// Filter selects events for [Querier.Query] and a backend's statistics and
// export. Zero fields match everything; set fields are combined with AND.
// Text fields match exactly, except Type, which also accepts a trailing
// "*" as a prefix match ("ssh.hostkey.*").
type Filter struct {
	Tool      string
	Host      string
	Principal string
	Status    Status
	Type      EventType
	Phase     Phase
	CallID    string
	Session   string
	Since     time.Time // events at or after Since
	Until     time.Time // events before Until
	AfterSeq  int64     // events with Seq > AfterSeq (for following the tail)
	BeforeSeq int64     // if > 0, events with Seq < BeforeSeq
	Limit     int       // at most this many events; 0 means no limit
	Newest    bool      // with Limit, keep the newest Limit events instead of the oldest
}

// ToolStats summarises the calls of one tool, as a backend's Stats reports
// them.
//
// A call is counted once, by its final row: the done row of a two-phase call
// or the single row of a one-shot event. Denials are calls refused by scope
// or policy ([StatusDenied], [DecisionDeny] or [TypeToolDenied]); Errors
// are the other calls whose status is not [StatusOK]. P50 and P95 are
// nearest-rank percentiles of Duration over the calls that were not denied;
// a backend may approximate them over many calls and says by how much
// (the SQLite ledger: exact up to 10,000 calls of a tool, else within 1.6%).
// Unfinished counts intent rows with no done row: calls in flight, or
// interrupted by a crash.
type ToolStats struct {
	Tool       string        `json:"tool"`
	Calls      int64         `json:"calls"`
	Denials    int64         `json:"denials"`
	Errors     int64         `json:"errors"`
	Unfinished int64         `json:"unfinished"`
	P50        time.Duration `json:"p50_ns"`
	P95        time.Duration `json:"p95_ns"`
}
