package audit

// Status is how a recorded action stands or ended: [Event.Status]. The
// constants below are every status rigout writes, documented here and
// nowhere else; a backend stores the string as it is, so an embedder's own
// statuses are kept too, and the stored text is what [RowHash] covers.
type Status string

// Statuses. A call's intent row has [StatusStarted]; its done row, or the
// single row of a one-shot event, has one of the others.
const (
	StatusStarted              Status = "started"               // intent row: the call is about to run
	StatusOK                   Status = "ok"                    // the call ran and succeeded (a command exited 0)
	StatusError                Status = "error"                 // the call ran and failed, or could not run (a command exited non-zero, a dial failed)
	StatusDenied               Status = "denied"                // refused by scope, policy, host key or a person; nothing ran
	StatusInvalid              Status = "invalid"               // refused because the arguments are malformed; nothing ran
	StatusTimeout              Status = "timeout"               // the command was stopped at its time limit
	StatusCanceled             Status = "canceled"              // the command was stopped because the client canceled the call
	StatusAborted              Status = "aborted"               // the call stopped before it could finish and report an outcome
	StatusBusy                 Status = "busy"                  // refused because too many calls were already running; nothing ran
	StatusLimited              Status = "limited"               // refused by a rate limit; nothing ran
	StatusAwaitingConfirmation Status = "awaiting-confirmation" // held back while a person is asked to confirm it
	StatusUnknown              Status = "unknown"               // a call to a tool the gateway does not have
	StatusBackground           Status = "background"            // the command still runs, handed off as a background process (its process.exit row says how it ended)
)

// Decision is what the command policy decided about a call:
// [Event.Decision]. Empty means no policy ran. Like [Status], the stored
// text is the string as it is.
type Decision string

// Decisions.
const (
	DecisionAllow     Decision = "allow"     // the policy allowed the command
	DecisionDeny      Decision = "deny"      // the policy refused the command
	DecisionConfirm   Decision = "confirm"   // the policy asked for a person's confirmation
	DecisionBypass    Decision = "bypass"    // a bypass-scoped token skipped the policy
	DecisionConfirmed Decision = "confirmed" // a person approved a held-back command
	DecisionDeclined  Decision = "declined"  // a person refused a held-back command
)
