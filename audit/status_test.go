package audit_test

import (
	"testing"

	"github.com/rigout/rigout/audit"
)

// TestStoredText pins the text of every status and decision: it is what
// existing ledgers hold, what queries match and what the row hash covers,
// so a constant may be added but never respelled.
func TestStoredText(t *testing.T) {
	statuses := map[audit.Status]string{
		audit.StatusStarted:              "started",
		audit.StatusOK:                   "ok",
		audit.StatusError:                "error",
		audit.StatusDenied:               "denied",
		audit.StatusInvalid:              "invalid",
		audit.StatusTimeout:              "timeout",
		audit.StatusCanceled:             "canceled",
		audit.StatusAborted:              "aborted",
		audit.StatusBusy:                 "busy",
		audit.StatusBackground:           "background",
		audit.StatusLimited:              "limited",
		audit.StatusAwaitingConfirmation: "awaiting-confirmation",
		audit.StatusUnknown:              "unknown",
	}
	for s, want := range statuses {
		if string(s) != want {
			t.Errorf("status %q, want %q", s, want)
		}
	}
	decisions := map[audit.Decision]string{
		audit.DecisionAllow:     "allow",
		audit.DecisionDeny:      "deny",
		audit.DecisionConfirm:   "confirm",
		audit.DecisionBypass:    "bypass",
		audit.DecisionConfirmed: "confirmed",
		audit.DecisionDeclined:  "declined",
	}
	for d, want := range decisions {
		if string(d) != want {
			t.Errorf("decision %q, want %q", d, want)
		}
	}
}
