package audit

import "time"

// ApprovalRecord is a pending operator approval as a store shared by
// several gateways keeps it (rigout.ApprovalStore; the PostgreSQL ledger
// is one): the gateway whose call waits writes it, an operator's decision
// made on any gateway updates it, and the waiting gateway reads the
// decision back.
type ApprovalRecord struct {
	// ID names the approval; Principal is the caller whose call waits;
	// Digest is the keyed digest of exactly what is to be approved.
	ID, Principal, Digest string
	// Body is the approval as operators are shown it (JSON).
	Body []byte
	// Requested and Expires bound the wait.
	Requested, Expires time.Time
	// Decided is set by the decision, with Approved, the Approver's name
	// and MAC, which the deciding gateway computes under the key the
	// gateways share, so that a decision written into the store by hand
	// is not taken.
	Decided, Approved bool
	Approver          string
	MAC               []byte
}
