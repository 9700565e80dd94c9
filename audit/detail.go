package audit

// DetailKey is a key of the JSON object in [Event.Detail]: a fact about a
// call that has no column of its own. Its value is what the ledger
// stores; these are the keys rigout's gateway and tool families write.
// A tool may add keys of its own (rigout.Outcome.Detail).
type DetailKey string

// Detail keys of tool-call rows.
const (
	DetailPath           DetailKey = "path"                  // the path a file tool touched
	DetailSource         DetailKey = "source"                // a transfer's source, host:path
	DetailDestination    DetailKey = "destination"           // a transfer's or a move's destination
	DetailBytes          DetailKey = "bytes"                 // bytes written or transferred
	DetailFiles          DetailKey = "files"                 // files transferred or matched
	DetailEntries        DetailKey = "entries"               // entries a listing returned
	DetailSHA256         DetailKey = "sha256"                // the hex SHA-256 of what was written, or "withheld"
	DetailReplacements   DetailKey = "replacements"          // replacements an edit made
	DetailCredential     DetailKey = "credential"            // the alias of a credential a call asked for
	DetailCredentials    DetailKey = "credentials"           // the aliases of the credentials a call used, comma-separated
	DetailReason         DetailKey = "reason"                // the reason a caller gave
	DetailMasked         DetailKey = "masked"                // values masked because they looked like secrets
	DetailRefused        DetailKey = "refused"               // why the gate refused a call before judging it
	DetailUnsandboxed    DetailKey = "unsandboxed"           // why a command on this machine ran outside the sandbox
	DetailClass          DetailKey = "class"                 // "read-only" when the tool classified the call so
	DetailApproval       DetailKey = "approval"              // the approval request a call waited for
	DetailApprovalDigest DetailKey = "approval_digest"       // the digest of what the operator approved
	DetailApprovedBy     DetailKey = "approved_by"           // the operator who approved
	DetailDeniedBy       DetailKey = "denied_by"             // the operator who denied
	DetailRefusalsLeft   DetailKey = "refusals_not_recorded" // refusal rows left out since the last one written
)

// Detail keys of the rows that are not tool calls.
const (
	DetailCall        DetailKey = "call"        // approval.decide: the call ID held back
	DetailFor         DetailKey = "for"         // approval.decide: the principal whose call it was
	DetailDigest      DetailKey = "digest"      // approval.decide: the digest of the call decided
	DetailKeyType     DetailKey = "key_type"    // host-key rows: the key's algorithm
	DetailFingerprint DetailKey = "fingerprint" // host-key rows: the key's SHA256 fingerprint
	DetailFile        DetailKey = "file"        // host-key rows: the known_hosts file written
	DetailURL         DetailKey = "url"         // server.start: the address served
	DetailNoAuth      DetailKey = "no_auth"     // server.start: "true" or "false": served without authentication
	DetailClientID    DetailKey = "client_id"   // auth rows: the OAuth client
	DetailGrantID     DetailKey = "grant_id"    // auth rows: the OAuth grant
	DetailGateway     DetailKey = "gateway"     // intent rows: the gateway process (PID/start time/boot ID) that wrote it
	DetailInterrupted DetailKey = "interrupted" // reconciled rows: when and from which intent row
	DetailLeftOver    DetailKey = "left_over"   // reconciled rows: the processes a stopped gateway left, and what became of them
)
