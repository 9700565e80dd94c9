package auth

// EventType names a kind of [Event]. Its values are dotted and lower case,
// like the audit ledger's types; the constants below are the only ones this
// package emits.
type EventType string

// Event types. [EventRejected], [EventDenied] and [EventThrottled] are
// refusals; the others record something that was allowed or done (see
// [Event.Refused]).
const (
	EventRejected  EventType = "http.rejected"  // a Host or Origin header refused by [Front.Guard]
	EventDenied    EventType = "auth.deny"      // a credential that was sent and refused
	EventThrottled EventType = "auth.throttled" // a request refused with 429: its address failed too often
	EventSetupUsed EventType = "setup.used"     // the setup token was spent on /connection.json
	EventConsent   EventType = "oauth.consent"  // the operator approved an authorization on the consent page
	EventGrant     EventType = "oauth.grant"    // an authorization code was exchanged for a new grant
	EventRefresh   EventType = "oauth.refresh"  // a grant's tokens were rotated with its refresh token
	EventRevoke    EventType = "oauth.revoke"   // a grant was revoked: its code or a refresh token was reused, or shown by another client
	EventRegister  EventType = "oauth.register" // a client registered itself dynamically
)

// Event is a security decision, for the audit ledger, passed to
// [Config].OnEvent. No field ever holds a credential.
//
// Not every event is a refusal: a grant, a refresh or a used setup token
// is an approval, and a revocation is an action the server took. A caller
// that records events must record approvals as approvals, and decide which
// is which with [Event.Refused], never by assuming every event is a denial.
type Event struct {
	// Type says what happened.
	Type EventType
	// Principal is the token name, when known.
	Principal string
	// ClientID is the OAuth client, when known.
	ClientID string
	// GrantID is the OAuth grant, when known.
	GrantID string
	// RemoteAddr is the peer address.
	RemoteAddr string
	// Path is the request path.
	Path string
	// Reason says why, for refusals and revocations.
	Reason string
}

// Refused reports whether e records a request that was refused:
// [EventRejected], [EventDenied] or [EventThrottled]. It is false for
// approvals and actions ([EventSetupUsed], [EventConsent], [EventGrant],
// [EventRefresh], [EventRegister], [EventRevoke]), which a caller must
// record as allowed, and for a Type this package does not define.
func (e Event) Refused() bool {
	switch e.Type {
	case EventRejected, EventDenied, EventThrottled:
		return true
	}
	return false
}
