package audit

import "context"

// Status is how a call or event ended. (Temporary: replaced by the audit split.)
type Status string

// Statuses.
const (
	StatusCanceled             Status = "canceled"
	StatusBusy                 Status = "busy"
	StatusLimited              Status = "limited"
	StatusAwaitingConfirmation Status = "awaiting-confirmation"
	StatusUnknown              Status = "unknown"
)

// Decision is what the command policy decided.
type Decision string

// Decisions.
const (
	DecisionAllow     Decision = "allow"
	DecisionDeny      Decision = "deny"
	DecisionConfirm   Decision = "confirm"
	DecisionBypass    Decision = "bypass"
	DecisionConfirmed Decision = "confirmed"
	DecisionDeclined  Decision = "declined"
)

// Querier is the read side (temporary: replaced by the audit split).
type Querier interface {
	Query(ctx context.Context, f Filter) ([]Event, error)
}
